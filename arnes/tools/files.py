"""Read, Write and Edit: the file tools, with read-before-edit and atomic writes."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from arnes.host.atomic import atomic_write
from arnes.host.nofollow import LinkRefused, NotRegularFile, read_regular
from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.types import Target
from arnes.tools import notebook
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError
from arnes.tools.editmatch import Replacement, region_of, replace, without_read_numbers
from arnes.tools.filestate import newline_of
from arnes.tools.multiedit import EditItem, EditList, apply_edits
from arnes.tools.nearest import nearest_files
from arnes.tools.readformat import MAX_LINE_CHARS, numbered
from arnes.tools.responses import Output, edit_shape, multi_shape, read_shape, write_shape

DEFAULT_READ_LINES = 2000
READ_MOST = 32 << 20  # bytes: a bigger file is not read whole (a sparse 2 GB file once took 4 GB of memory)


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
    # Claude Code's MultiEdit call (tools/multiedit.py): several changes, all or none. Not offered.
    edits: SkipJsonSchema[list[EditItem] | None] = None

    @model_validator(mode="before")
    @classmethod
    def _multi(cls, data: Any) -> Any:
        if isinstance(data, dict) and "edits" in data:
            if "old_string" in data or "new_string" in data:
                raise ValueError("give either edits (a list of changes) or old_string and new_string, not both")
            EditList.model_validate({"edits": data["edits"]})  # at least one, each complete: said per edit
            return {**data, "old_string": "", "new_string": ""}
        return data


def read_text(path: Path, shown: str, real: Path | None = None) -> str:
    """A file's text, or a ToolError that tells the model what to do instead."""
    return read_checked(path, shown, real or resolve_real(path))[0]


def read_checked(
    path: Path, shown: str, real: Path, ctx: ToolContext | None = None
) -> tuple[str, bytes, os.stat_result]:
    """The text at `real`, the real path that was judged, opened through no link (a link swapped
    in since the decision makes the read fail), with the bytes and stat it came from."""
    try:
        head, st = read_regular(real, limit=8192)  # a binary or huge file is judged before it is read whole
        if b"\0" in head:
            raise ToolError(f"{shown} is a binary file; it cannot be read as text.")
        if st.st_size > READ_MOST:
            raise ToolError(
                f"{shown} is {st.st_size:,} bytes, too large to read whole; use Grep to find the part you need."
            )
        data, st = read_regular(real, limit=READ_MOST + 1)
    except FileNotFoundError:
        hint = nearest_files(ctx, path) if ctx is not None else ""
        raise ToolError(f"File does not exist: {shown}.{hint} Use Glob to find the right path.") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a folder, not a file. Use Glob with path={shown!r} to list it.") from None
    except NotRegularFile:
        raise ToolError(f"{shown} is not a regular file (a pipe, socket or device); it cannot be read.") from None
    except LinkRefused:
        raise ToolError(
            f"{shown} changed after it was judged: a link now stands where a real file or folder was, "
            "so it was not read. Read it again; if it keeps changing, ask the user."
        ) from None
    if b"\0" in data[:8192]:
        raise ToolError(f"{shown} is a binary file; it cannot be read as text.")
    if len(data) > READ_MOST:  # it grew since it was measured
        raise ToolError(
            f"{shown} is over {READ_MOST:,} bytes, too large to read whole; use Grep to find the part you need."
        )
    try:
        return data.decode("utf-8"), data, st
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc


DIFF_MOST = 4 << 20  # bytes: a bigger file changed in the session is named, not diffed


def _bytes(real: Path, limit: int | None = None) -> bytes | None:
    """The bytes of the file at a real path, read through no link; None when it is not a file."""
    try:
        return read_regular(real, limit)[0]
    except OSError:
        return None


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only (a CR before it dropped), so numbers agree with Grep and Edit.

    str.splitlines also breaks at form feeds, U+2028 and other separators, which would shift the
    numbering and turn a pasted line into two.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def guard_write(
    ctx: ToolContext, path: Path, shown: str, tool: str, call: str = "", render: Callable[[str], str] | None = None
) -> None:
    """Refuse a write over a file not read (or changed) since, and show the file instead.

    A refusal alone costs the model a turn and small models often do not find their way back;
    with the current content in the refusal the next try can succeed, so the file counts as
    read from here on (it has now been seen, as a Read would have shown it). `render`: how Read
    shows this kind of file (a notebook's cells), in place of numbered lines.
    """
    problem = ctx.files.unwritable(path)
    if problem is None:
        return
    plain = ctx.files.check_writable(path, shown) or f"{shown} cannot be written yet; Read it first."
    # Only what a Read would show without asking: inside the workspace, no rule hiding it, and no
    # hook that could have stopped the Read.
    if ctx.reads_hooked or not is_inside(resolve_real(ctx.workspace), resolve_real(path)) or ctx.hidden("Read", path):
        raise ToolError(plain)
    try:
        text = read_text(path, shown, ctx.real_of(path))
    except ToolError:
        raise ToolError(plain) from None
    ctx.files.record(path)
    if call:
        ctx.files.note_refused(path, call)
    why = "has not been read yet" if problem == "unread" else "was modified since it was last read"
    told = f"{shown} {why}, so this {tool} was not made. Its current content is below, and it now counts as read"
    if render is not None:
        try:
            shown_as_read = render(text)
        except ToolError as exc:  # it cannot be what the tool edits: that is what the model needs to hear
            raise ToolError(f"{shown} {why}, so this {tool} was not made; {exc}") from None
        raise ToolError(f"{told}: call {tool} again, based on this content.\n{shown_as_read}")
    lines = split_lines(text)
    budget = max(1000, ctx.max_output_chars - 800)
    shown_lines: list[str] = []
    used = 0
    for line in lines:
        used += min(len(line), MAX_LINE_CHARS) + 8
        if used > budget:
            break
        shown_lines.append(line)
    body = numbered(shown_lines) if shown_lines else "(the file is empty)"
    if len(shown_lines) < len(lines):
        rest = len(shown_lines) + 1
        body += f"\n... ({len(lines) - len(shown_lines)} more lines; Read with offset={rest} to see them)"
    raise ToolError(f"{told}: call {tool} again, based on this content.\n{body}")


def write_recorded(ctx: ToolContext, path: Path, text: str) -> None:
    """Write `text` over `path` the one way the file tools do: the original kept for the session's
    diff and undo, an atomic write on the real path judged, and a new read-before-edit snapshot."""
    ctx.changes.before_write(path, ctx.real_of(path))
    atomic_write(path, text.encode("utf-8"), ctx.real_of(path))
    ctx.files.record(path)


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
        after = _bytes(path, DIFF_MOST + 1)  # a command may have grown it to GiBs since
        if after is not None and len(after) > DIFF_MOST:
            out.append((shown, f"({shown} is now over {DIFF_MOST:,} bytes: too large to show as a diff)\n"))
            continue
        new = after.decode("utf-8", "replace") if after is not None else ""
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
        real = ctx.real_of(path) or resolve_real(path)
        text, data, st = read_checked(path, shown, real, ctx)
        ctx.files.record_read(real, data, st)
        why = ""  # a notebook is shown cell by cell (offset/limit: its JSON as lines)
        if path.suffix.lower() == ".ipynb" and args.offset is None and args.limit is None:
            try:
                nb = notebook.parse(text, shown)
            except ToolError as exc:  # shown as the text it is, with why it is no notebook
                why = f"[arnes: not shown as a notebook: {exc}]\n"
            else:
                shape = {"type": "notebook", "file": {"filePath": str(path), "cells": nb.cells}}
                return Output(notebook.render(nb, shown), lambda: shape)
        lines = split_lines(text)
        if not lines:
            return Output(f"({shown} is empty)", lambda: read_shape(path, [], 1, 0))
        start = (args.offset or 1) - 1
        if start >= len(lines):
            raise ToolError(f"offset {args.offset} is past the end of {shown}, which has {len(lines)} lines.")
        count = args.limit or DEFAULT_READ_LINES
        chosen = lines[start : start + count]
        body = why + numbered(chosen, start + 1)
        end = start + len(chosen)
        if end < len(lines):
            body += f"\n... ({len(lines) - end} more lines; call Read with offset={end + 1} to continue)"
        return Output(body, lambda: read_shape(path, chosen, start + 1, len(lines)))


class Write(BaseTool[WriteArgs]):
    name = "Write"
    description = "Create a file or replace its whole content (folders are created). Prefer Edit for small changes."
    args_model = WriteArgs
    read_only = False

    def _new_text(self, args: WriteArgs, path: Path, real: Path | None = None) -> tuple[str, str]:
        # Bytes, not read_text: its universal newlines would hide the CRLF this keeps.
        old = _bytes(real or resolve_real(path))
        before = old.decode("utf-8", errors="replace") if old is not None else ""
        content = without_read_numbers(args.content) or args.content
        if before and newline_of(before) == "\r\n" and "\r\n" not in content:
            content = content.replace("\n", "\r\n")
        return before, content

    def targets(self, args: WriteArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.file_path), "write")]

    def preview(self, args: WriteArgs, ctx: ToolContext) -> str | None:
        path = ctx.path(args.file_path)
        before, after = self._new_text(args, path)
        return unified_diff(before, after, ctx.display(path))

    def run(self, args: WriteArgs, ctx: ToolContext) -> str:
        """Replace the file with `content`: the contract every model trained on Claude Code expects."""
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder; give a file path.")
        existed = path.exists()
        if existed:
            guard_write(ctx, path, shown, "Write")
        before, content = self._new_text(args, path, ctx.real_of(path))
        write_recorded(ctx, path, content)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        copied = without_read_numbers(args.content) is not None
        note = " (every line carried Read's line-number prefix; they were removed)" if copied else ""
        said = f"{'Overwrote' if existed else 'Created'} {shown} ({lines} lines){note}."
        return Output(said, lambda: write_shape(path, content, before if existed else None))


def same_hint(text: str, old: str, shown: str) -> str:
    """For an Edit whose two strings are the same: the lines it points at, as the call to change.
    Small models copy a concrete call and change the part they mean (agent/unfinished.py)."""
    region = region_of(text, old)
    if region is None:
        return ""
    call = {"name": "Edit", "arguments": {"file_path": shown, "old_string": region, "new_string": region}}
    return (
        " Put the lines to change in old_string, exactly as they are, and the corrected lines in new_string."
        f" The lines you pointed at, as a call to send with new_string corrected:\n{json.dumps(call)}"
    )


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

    def _apply(self, args: EditArgs, path: Path, shown: str, real: Path | None = None) -> tuple[str, str, Replacement]:
        original = read_text(path, shown, real)
        newline = newline_of(original)
        text = original.replace("\r\n", "\n") if newline == "\r\n" else original
        if args.edits is not None:
            changed, count, notes = apply_edits(text, args.edits, shown)
            updated = changed.replace("\n", "\r\n") if newline == "\r\n" else changed
            return original, updated, Replacement(changed, count, "; ".join(notes))
        old = args.old_string.replace("\r\n", "\n")
        new = args.new_string.replace("\r\n", "\n")
        if old == new:
            same = "old_string and new_string are the same; there is nothing to change."
            raise ToolError(same + same_hint(text, old, shown))
        if not old:
            if text:
                raise ToolError(
                    f"old_string is empty, but {shown} is not: give the exact text to replace (add the lines "
                    "around it to make it unique), or Write the whole file."
                )
            done = Replacement(new, 1, "the file was empty")
        else:
            done = replace(text, old, new, args.replace_all, shown)
        updated = done.updated.replace("\n", "\r\n") if newline == "\r\n" else done.updated
        return original, updated, done

    def preview(self, args: EditArgs, ctx: ToolContext) -> str | None:
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        if not path.exists() and not args.old_string and args.edits is None:
            return unified_diff("", args.new_string, shown)
        try:
            before, after, _ = self._apply(args, path, shown)
        except ToolError:
            return None
        return unified_diff(before, after, shown)

    def run(self, args: EditArgs, ctx: ToolContext) -> str:
        """Replace exactly old_string (every occurrence with replace_all) in a file read before."""
        path = ctx.path(args.file_path)
        shown = ctx.display(path)
        if not path.exists() and not path.is_symlink():
            if not args.old_string and args.edits is None:  # Claude Code's Edit creates a file from an empty old_string
                write_recorded(ctx, path, args.new_string)
                said = f"Created {shown} with new_string (old_string was empty and the file did not exist)."
                return Output(said, lambda: edit_shape(path, "", args.new_string, False, "", args.new_string))
            # Not "to create a file, use Write": a small model follows that literally and creates
            # the file it guessed. Edit changes what exists; the names that do exist come first.
            hint = nearest_files(ctx, path)
            raise ToolError(f"File does not exist: {shown}.{hint} Edit changes an existing file: give its real path.")
        guard_write(ctx, path, shown, "Edit")
        before, after, done = self._apply(args, path, shown, ctx.real_of(path))
        write_recorded(ctx, path, after)
        changes = [(e.old_string, e.new_string, e.replace_all) for e in args.edits or []]
        for old, new, _ in changes or [(args.old_string, args.new_string, args.replace_all)]:
            ctx.files.note_edit(path, old, new)
        what = f"{done.count} occurrence{'s' if done.count != 1 else ''}"
        what += f" in {len(changes)} edits" if changes else ""
        note = f" ({done.note}; check the result)" if done.note else ""
        said = f"Edited {shown}: replaced {what}{note}."
        if changes:
            return Output(said, lambda: multi_shape(path, changes, before, after))
        return Output(said, lambda: edit_shape(path, args.old_string, args.new_string, args.replace_all, before, after))
