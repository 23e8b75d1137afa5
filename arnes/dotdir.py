"""The workspace's `.arnes/` folder: created with a .gitignore, so traces (whole file contents) and
prompt history never reach a commit by accident."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

GITIGNORE = """\
# Written by arnes: run-time files stay out of git (traces hold whole file contents and prompts).
# Shared project files (settings.json, teams/*.toml, commands/, agents/, skills/) are not ignored.
traces/
history
settings.local.json
teams/runs/
checkpoints/
*.tmp
"""


def ensure_arnes_dir(workspace: Path) -> Path:
    """`.arnes/` with its .gitignore; an existing .gitignore (or a link in its place) is left alone."""
    folder = workspace / ".arnes"
    folder.mkdir(exist_ok=True)
    if folder.is_symlink():
        return folder  # not ours to write through
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    with contextlib.suppress(FileExistsError, OSError):
        fd = os.open(folder / ".gitignore", flags, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(GITIGNORE)
    return folder
