"""Read, Write and Edit: the file tools, with read-before-edit and atomic writes."""

from __future__ import annotations

import difflib
import re
import stat
from pathlib import Path

from pydantic import Field

from arnes.permissions.types import Target
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError
from arnes.tools.filestate import atomic_write, newline_of

MAX_LINE_CHARS = 2000
DEFAULT_READ_LINES = 2000
_LINE_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


class ReadArgs(ToolArgs):
    file_path: str = Field(description="Path of the file, relative to the workspace or absolute.")
    offset: int | None = Field(None, ge=1, description="First line to read (1-based).")
    limit: int | None = Field(None, ge=1, description="How many lines to read.")


class WriteArgs(ToolArgs):
    file_path: str = Field(description="Path of the file, relative to the workspace or absolute.")
    content: str = Field(description="The whole new content of the file.")


class EditArgs(ToolArgs):
    file_path: str = Field(description="Path of the file, relative to the workspace or absolute.")
    old_string: str = Field(description="Exact text to replace, without Read's line-number prefixes.")
    new_string: str = Field(description="The replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one.")


def read_text(path: Path, shown: str) -> str:
    """A file's text, or a ToolError that tells the model what to do instead."""
    if not path.exists():
        hint = _similar_names(path)
        raise ToolError(f"File does not exist: {shown}.{hint} Use Glob to find the right path.")
    if path.is_dir():
        raise ToolError(f"{shown} is a folder, not a file. Use Glob with path={shown!r} to list it.")
    if not stat.S_ISREG(path.stat().st_mode):
        raise ToolError(f"{shown} is not a regular file (a pipe, socket or device); it cannot be read.")
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{shown} is a binary file; it cannot be read as text.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only (a CR before it dropped), so numbers agree with Grep and Edit.

    str.splitlines also breaks at form feeds, U+2028 and other separators, which would shift the
    numbering and turn a pasted line into two.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _similar_names(path: Path) -> str:
    parent = path.parent
    if not parent.is_dir():
        return ""
    names = [p.name for p in parent.iterdir()]
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def unified_diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def session_diffs(ctx: ToolContext) -> list[tuple[str, str]]:
    """(shown path, unified diff) for every file the session changed, from before its first write."""
    out = []
    shell = ctx.changes.shell_report()
    for path in ctx.changes.changed():
        shown = ctx.display(path)
        if path not in ctx.changes.originals:
            out.append((shown, _shell_diff(path, shown, ctx.display(path) in shell.created)))
            continue
        before = ctx.changes.originals[path]
        old = before.decode("utf-8", "replace") if before is not None else ""
        new = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        out.append((shown, unified_diff(old, new, shown)))
    return out


def _shell_diff(path: Path, shown: str, created: bool, most: int = 64_000) -> str:
    """A file a shell command wrote: new ones in full, others named (no copy from before was kept)."""
    if created and path.is_file() and not path.is_symlink() and path.stat().st_size <= most:
        data = path.read_bytes()
        if b"\0" not in data:
            return unified_diff("", data.decode("utf-8", "replace"), shown)
    if not path.exists():
        return f"--- a/{shown}\n+++ /dev/null\n# deleted by a shell command\n"
    what = "created" if created else "changed"
    return f"--- a/{shown}\n+++ b/{shown}\n# {what} by a shell command (arnes keeps no copy of what it held before)\n"


class Read(BaseTool[ReadArgs]):
    name = "Read"
    description = (
        "Read a text file as numbered lines (number, tab, text). Use offset/limit for long files. "
        "Read a file before Write or Edit changes it."
    )
    args_model = ReadArgs
    read_only = True

    def targets(self, args: ReadArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.file_path), "read")]

    def run(self, args: ReadArgs, ctx: ToolContext) -> str:
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        text = read_text(path, shown)
        ctx.files.record(path)
        lines = split_lines(text)
        if not lines:
            return f"({shown} is empty)"
        start = (args.offset or 1) - 1
        if start >= len(lines):
            raise ToolError(f"offset {args.offset} is past the end of {shown}, which has {len(lines)} lines.")
        count = args.limit or DEFAULT_READ_LINES
        chosen = lines[start : start + count]
        body = "\n".join(f"{n:>6}\t{line[:MAX_LINE_CHARS]}" for n, line in enumerate(chosen, start=start + 1))
        end = start + len(chosen)
        if end < len(lines):
            body += f"\n... ({len(lines) - end} more lines; call Read with offset={end + 1} to continue)"
        return body


class Write(BaseTool[WriteArgs]):
    name = "Write"
    description = "Create a file or replace its whole content (folders are created). Prefer Edit for small changes."
    args_model = WriteArgs
    read_only = False

    def targets(self, args: WriteArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.file_path), "write")]

    def _new_text(self, args: WriteArgs, path: Path) -> tuple[str, str]:
        # Bytes, not read_text: its universal newlines would hide the CRLF this keeps.
        before = path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else ""
        content = args.content
        if before and newline_of(before) == "\r\n" and "\r\n" not in content:
            content = content.replace("\n", "\r\n")
        return before, content

    def preview(self, args: WriteArgs, ctx: ToolContext) -> str | None:
        path = ctx.path(args.file_path)
        before, after = self._new_text(args, path)
        return unified_diff(before, after, ctx.display(path))

    def run(self, args: WriteArgs, ctx: ToolContext) -> str:
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder; give a file path.")
        existed = path.exists()
        if existed:
            problem = ctx.files.check_writable(path, shown)
            if problem:
                raise ToolError(problem)
        _, content = self._new_text(args, path)
        ctx.changes.before_write(path)
        atomic_write(path, content.encode("utf-8"), ctx.real_of(path))
        ctx.files.record(path)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return f"{'Overwrote' if existed else 'Created'} {shown} ({lines} lines)."


class Edit(BaseTool[EditArgs]):
    name = "Edit"
    description = (
        "Replace an exact string in a file you have read. old_string must match once (add context "
        "lines to make it unique) unless replace_all. Leave out Read's line-number prefixes."
    )
    args_model = EditArgs
    read_only = False

    def targets(self, args: EditArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.file_path), "write")]

    def _apply(self, args: EditArgs, path: Path, shown: str) -> tuple[str, str]:
        original = read_text(path, shown)
        newline = newline_of(original)
        text = original.replace("\r\n", "\n") if newline == "\r\n" else original
        old = args.old_string.replace("\r\n", "\n")
        new = args.new_string.replace("\r\n", "\n")
        if old == new:
            raise ToolError("old_string and new_string are the same; there is nothing to change.")
        if not old:
            raise ToolError("old_string is empty. To write a whole file, use Write.")
        count = text.count(old)
        if count == 0:
            raise ToolError(_not_found(text, old, shown))
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string matches {count} times in {shown}. Add surrounding context to make it "
                "unique, or set replace_all to true."
            )
        updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        if newline == "\r\n":
            updated = updated.replace("\n", "\r\n")
        return original, updated

    def preview(self, args: EditArgs, ctx: ToolContext) -> str | None:
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        try:
            before, after = self._apply(args, path, shown)
        except ToolError:
            return None
        return unified_diff(before, after, shown)

    def run(self, args: EditArgs, ctx: ToolContext) -> str:
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        if not path.exists():
            raise ToolError(f"File does not exist: {shown}. To create a file, use Write.")
        problem = ctx.files.check_writable(path, shown)
        if problem:
            raise ToolError(problem)
        before, after = self._apply(args, path, shown)
        ctx.changes.before_write(path)
        atomic_write(path, after.encode("utf-8"), ctx.real_of(path))
        ctx.files.record(path)
        replaced = before.replace("\r\n", "\n").count(args.old_string.replace("\r\n", "\n"))
        what = f"{replaced} occurrence{'s' if replaced != 1 else ''}" if args.replace_all else "1 occurrence"
        return f"Edited {shown}: replaced {what}."


def _not_found(text: str, old: str, shown: str) -> str:
    message = f"old_string not found in {shown}."
    if _LINE_PREFIX.search(old):
        stripped = _LINE_PREFIX.sub("", old)
        message += " It looks like old_string contains line-number prefixes from Read; remove them."
        if stripped and stripped in text:
            return message + " Without them it matches."
    closest = _closest(text, old)
    if closest:
        first, last, snippet = closest
        message += f" The closest match is at lines {first}-{last}:\n{snippet}\nCopy it exactly."
    else:
        message += f" Read {shown} again and copy the text exactly."
    return message


def _closest(text: str, old: str) -> tuple[int, int, str] | None:
    """The window of lines most like old_string, if any is reasonably close."""
    lines = text.split("\n")
    want = old.strip("\n").split("\n")
    size = len(want)
    if size > 200 or len(lines) > 20_000:
        return None
    target = "\n".join(w.strip() for w in want)
    best: tuple[float, int] = (0.0, -1)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in range(0, max(1, len(lines) - size + 1)):
        window = "\n".join(line.strip() for line in lines[start : start + size])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, start)
    ratio, start = best
    if ratio < 0.6 or start < 0:
        return None
    chosen = lines[start : start + size]
    return start + 1, start + len(chosen), "\n".join(chosen)
