"""Which `rg` arnes runs, and the files it would search: below the tools, so the tree watch, the
sandbox's hidden files, listings and handoffs use them without importing the search tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from arnes.tools.toolerror import ToolError


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


def workspace_files(workspace: Path, exclude: tuple[str, ...] = (".git", ".arnes")) -> list[str]:
    """Every file ripgrep would search (ignore rules applied, dotfiles included), relative paths."""
    globs = [arg for folder in exclude for arg in ("--glob", f"!{folder}")]
    done = subprocess.run(
        [ripgrep(), "--files", "--hidden", "--no-require-git", *globs],
        cwd=workspace, capture_output=True, text=True, errors="replace", check=False,
    )  # fmt: skip
    return [line for line in done.stdout.split("\n") if line]
