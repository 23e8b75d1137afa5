"""Which `rg` arnes runs, and the files it would search: below the tools, so the tree watch, the
sandbox's hidden files, listings and handoffs use them without importing the search tools."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from arnes.errors import ToolError
from arnes.host.paths import host_program


@cache
def ripgrep() -> str:
    """The `rg` next to this Python (the PyPI package's), else the one on PATH, away from the workspace."""
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = host_program("rg")
    if found:
        return found
    raise ToolError("ripgrep (rg) is not installed; reinstall arnes (`pip install .`), which brings it.")


# ripgrep lets a folder's `.ignore`/`.rgignore` override .gitignore, .git/info/exclude and the
# global excludes file: a cloned repository's `.ignore` with `!local_settings.py` would un-hide
# what the user's own exclude hides. Only the git ignore files count, wherever arnes lists.
NO_IGNORE_DOT = "--no-ignore-dot"
LIST_TIMEOUT = 60.0  # seconds for a listing of the workspace


def null_separated(out: bytes) -> list[str]:
    """`rg --null` output -> the names, exactly: a name may hold any byte but NUL (a newline, a
    \u2028, bytes that are not UTF-8), so it is cut at NUL only and decoded with os.fsdecode,
    which round-trips a name that is not UTF-8 to the same file."""
    return [os.fsdecode(name) for name in out.split(b"\0") if name]


def workspace_files(workspace: Path, exclude: tuple[str, ...] = (".git", ".arnes")) -> list[str]:
    """Every file ripgrep would search (git's ignore rules applied, dotfiles included), relative
    paths as os.fsdecode gives them (show them through `printable` only)."""
    globs = [arg for folder in exclude for arg in ("--glob", f"!{folder}")]
    try:  # bounded: a `.gitignore` a command made a FIFO would hold ripgrep forever
        done = subprocess.run(
            [ripgrep(), "--files", "--null", "--hidden", "--no-require-git", NO_IGNORE_DOT, *globs],
            cwd=workspace, capture_output=True, check=False, timeout=LIST_TIMEOUT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return []
    return null_separated(done.stdout)


def printable(name: str) -> bool:
    """Whether a file name can be shown in one line of text: valid UTF-8, no control or line
    break character. Others stay out of listings written into a prompt (Glob still finds them)."""
    return name.isprintable()  # False for a control character, a line break, a lone surrogate
