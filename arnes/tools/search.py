"""Glob and Grep on ripgrep (from the `ripgrep` PyPI package): fast, and .gitignore is honoured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from arnes.permissions.paths import is_inside
from arnes.permissions.types import Target
from arnes.tools.base import ESSENTIAL, BaseTool, ToolArgs, ToolContext, ToolError

GLOB_LIMIT = 100
GREP_LINE_LIMIT = 250
# Search hidden files too (dotfiles are files), but never the repository's internals.
_BASE = ["--no-require-git", "--hidden", "--color", "never", "--no-messages"]
# Last among the globs: ripgrep lets the last matching glob win, so a caller's `*` cannot re-include .git.
_NO_GIT = ["--glob", "!.git"]


@cache
def ripgrep() -> str:
    """The `rg` next to this Python (the PyPI package's), else the one on PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError("ripgrep (rg) is not installed; reinstall arnes (`pip install .`), which brings it.")


def _run_rg(args: list[str], cwd: Path, paths: list[str] | None = None) -> tuple[int, str, str]:
    command = [ripgrep(), *_BASE, *args, *_NO_GIT, "--", *(paths or [])]
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, errors="replace", check=False)
    return proc.returncode, proc.stdout, proc.stderr


_NAME_TYPE = "arnesglob"


def _glob_flags(pattern: str) -> tuple[list[str], bool]:
    """ripgrep flags that keep only files matching `pattern`, and whether ignored files can slip in.

    ripgrep's --glob overrides the ignore rules: whatever it matches is listed even when .gitignore
    excludes it (`*` would list node_modules/ and *.log). A pattern on the file name alone becomes
    a file type, which filters without overriding; a pattern on the path keeps --glob, and then
    the caller drops what an honest listing (`_listed`) does not show.
    """
    name = pattern
    while name.startswith("**/"):
        name = name[3:]
    if name and "/" not in name and ":" not in name and not name.startswith("!"):
        return ["--type-add", f"{_NAME_TYPE}:{name}", "--type", _NAME_TYPE], False
    return ["--glob", pattern], True


def workspace_files(workspace: Path, exclude: tuple[str, ...] = (".git", ".arnes")) -> list[str]:
    """Every file ripgrep would search (ignore rules applied, dotfiles included), relative paths."""
    globs = [arg for folder in exclude for arg in ("--glob", f"!{folder}")]
    done = subprocess.run(
        [ripgrep(), "--files", "--hidden", "--no-require-git", *globs],
        cwd=workspace, capture_output=True, text=True, errors="replace", check=False,
    )  # fmt: skip
    return [line for line in done.stdout.split("\n") if line]


def _listed(cwd: Path, paths: list[str] | None = None) -> set[str]:
    """The files ripgrep searches under `paths` (ignore rules applied), as it prints them."""
    _, out, _ = _run_rg(["--files"], cwd, paths)
    return set(out.split("\n"))


def _search_root(ctx: ToolContext, path: str | None) -> tuple[Path, str]:
    root = ctx.path(path or ".")
    if not root.exists():
        raise ToolError(f"Path does not exist: {ctx.display(root)}. Use Glob to find the right folder.")
    return root, ctx.display(root)


class GlobArgs(ToolArgs):
    pattern: str = Field(description="Glob such as **/*.py or src/*.ts (gitignore syntax).")
    path: str | None = Field(None, description="Folder to search in; default the workspace.")


class Glob(BaseTool[GlobArgs]):
    name = "Glob"
    description = "Find files by glob; paths newest first, .gitignore honoured."
    args_model = GlobArgs
    read_only = True

    def targets(self, args: GlobArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.path or "."), "read")]

    def run(self, args: GlobArgs, ctx: ToolContext) -> str:
        root, shown = _search_root(ctx, args.path)
        if root.is_file():
            raise ToolError(f"{shown} is a file; Glob needs a folder as path.")
        select, leaky = _glob_flags(args.pattern)
        code, out, err = _run_rg(["--files", *select], root)
        if code == 2 and not out:
            raise ToolError(f"Glob failed: {err.strip() or 'bad pattern'}. Check the pattern syntax.")
        found = [line for line in out.split("\n") if line]
        if leaky and found:
            listed = _listed(root)
            found = [line for line in found if line in listed]
        paths = [root / line for line in found]
        paths = [p for p in paths if not ctx.hidden(self.name, p)]
        if not paths:
            return f"No files match {args.pattern!r} in {_where(shown)}."
        paths.sort(key=_mtime, reverse=True)
        lines = [ctx.display(p) for p in paths[:GLOB_LIMIT]]
        if len(paths) > GLOB_LIMIT:
            lines.append(f"... ({len(paths) - GLOB_LIMIT} more; use a narrower pattern or path)")
        return "\n".join(lines)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class GrepArgs(ToolArgs):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="Regular expression (ripgrep syntax).")
    path: str | None = Field(None, description="File or folder to search; default the workspace.")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. *.py.")
    output_mode: Literal["files_with_matches", "content", "count"] = Field(
        "files_with_matches", description="content shows matching lines", json_schema_extra=ESSENTIAL
    )
    case_insensitive: bool = Field(False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(True, alias="-n", description="Line numbers (content mode).")
    context: int | None = Field(None, ge=0, le=20, description="Context lines (content mode).")
    head_limit: int | None = Field(None, ge=1, description="At most this many lines.")


class Grep(BaseTool[GrepArgs]):
    name = "Grep"
    description = "Search file contents with a regex (ripgrep); lists matching files unless output_mode says otherwise."
    args_model = GrepArgs
    read_only = True

    def targets(self, args: GrepArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.path or "."), "read")]

    def run(self, args: GrepArgs, ctx: ToolContext) -> str:
        root, shown = _search_root(ctx, args.path)
        flags: list[str] = []
        if args.case_insensitive:
            flags.append("-i")
        leaky = False
        if args.glob:
            select, leaky = _glob_flags(args.glob)
            flags += select
        if args.output_mode == "files_with_matches":
            flags.append("--files-with-matches")
        elif args.output_mode == "count":
            flags.append("--count")
        else:
            flags.append("--line-number" if args.line_numbers else "--no-line-number")
            # A NUL after each field marks where the path ends; it is taken out again below.
            flags += ["--field-match-separator", r"\x00:", "--field-context-separator", r"\x00-"]
            if args.context:
                flags += ["--context", str(args.context)]
        if args.output_mode != "files_with_matches" or root.is_dir():
            flags.append("--with-filename")
        target = os.path.relpath(root, ctx.workspace) if is_inside(ctx.workspace, root) else str(root)
        code, out, err = _run_rg([*flags, "--regexp", args.pattern], ctx.workspace, [target])
        if code == 2 and not out:
            raise ToolError(f"Grep failed: {err.strip() or 'bad pattern'}. Check the regular expression.")
        # Split on newlines only: splitlines() also breaks at \f, \v, \x1c.. and would cut a hidden
        # file's line into pieces that no longer carry its name.
        lines = [line for line in out.split("\n") if line]
        listed = _listed(ctx.workspace, [target]) if leaky and lines else None
        verdicts: dict[str, bool] = {}

        def keep(path: str) -> bool:
            """Not ignored by .gitignore, and not covered by a Read deny or ask rule."""
            if path not in verdicts:
                visible = listed is None or path in listed
                verdicts[path] = visible and not ctx.hidden(self.name, ctx.path(path))
            return verdicts[path]

        lines = _filter_output(lines, args.output_mode, keep)
        lines = [_strip_dot(line.replace("\0", "")) for line in lines]
        if not lines:
            return f"No matches for {args.pattern!r} in {_where(shown)}."
        if args.output_mode == "files_with_matches":
            lines.sort(key=lambda p: _mtime(ctx.workspace / p), reverse=True)
        limit = args.head_limit or GREP_LINE_LIMIT
        body = "\n".join(lines[:limit])
        if len(lines) > limit:
            body += f"\n... ({len(lines) - limit} more lines; narrow the search or raise head_limit)"
        return body


def _filter_output(lines: list[str], mode: str, keep: Callable[[str], bool]) -> list[str]:
    """Keep the output of files that `keep` accepts; tidy the `--` separators between groups."""
    kept: list[str] = []
    for line in lines:
        if mode == "files_with_matches":
            path = line
        elif mode == "count":
            path = line.rpartition(":")[0]
        elif "\0" in line:
            path = line.partition("\0")[0]
        elif line == "--":  # the separator between context groups
            if kept and kept[-1] != "--":
                kept.append(line)
            continue
        else:
            continue  # a line without a file name: nothing to vouch for it
        if keep(path):
            kept.append(line)
    while kept and kept[-1] == "--":
        kept.pop()
    return kept


def _strip_dot(line: str) -> str:
    return line[2:] if line.startswith("./") else line


def _where(shown: str) -> str:
    return "the workspace" if shown == "." else shown
