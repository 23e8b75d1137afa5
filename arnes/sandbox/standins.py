"""The empty mount points a sandbox stands read-only stand-ins on, in the workspace: where a
protected path does not exist yet (`.git`, `features.json`, `.claude/settings.json`, the prompt
folders), bubblewrap binds an empty read-only file or folder there, so a command cannot create it.
bubblewrap makes the mount point on the host; it stays, empty, while the sandbox lives.

A mount point removed on the host is unmounted in every sandbox that stands on it (Linux detaches
mounts whose mount point goes in another namespace), which could then create what it kept out:
one a lasting process (a background command, an MCP server) or the session's command server may
stand on is removed only when the sandbox that made it closes.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def folders_between(workspace: Path, paths: list[Path], standing: frozenset[Path]) -> list[Path]:
    """Every folder strictly between the workspace and each path, parents first (not the
    sandbox's own empty mount points: they count as missing)."""
    folders: set[Path] = set()
    for path in paths:
        try:
            relative = path.relative_to(workspace)
        except ValueError:
            continue
        parts = relative.parts[:-1]
        folders.update(workspace.joinpath(*parts[: i + 1]) for i in range(len(parts)))
    kept = (f for f in folders if f.is_dir() and not f.is_symlink() and there(f, standing))
    return sorted(kept, key=lambda f: len(f.parts))


def _still_empty(path: Path) -> bool:
    try:
        return not any(path.iterdir()) if path.is_dir() else path.stat().st_size == 0
    except OSError:
        return False


def there(path: Path, standing: frozenset[Path]) -> bool:
    """It exists, and is not one of the sandbox's own empty mount points (those count as missing)."""
    return os.path.lexists(path) and not (path in standing and _still_empty(path))


def stand_in_place(workspace: Path, kept: Path, standing: frozenset[Path]) -> tuple[Path, bool] | None:
    """Where a read-only stand-in keeps a missing protected path from being created: the first
    missing folder on the way to it (`.claude` for `.claude/commands` when there is no `.claude`),
    or the path itself, with False; a file where a folder belongs on the way, with True (bound
    read-only as it is, so it cannot be replaced by a folder); None past a link (left as it is)."""
    try:
        parts = kept.relative_to(workspace).parts
    except ValueError:
        return None
    path = workspace
    for part in parts:
        path = path / part
        if not there(path, standing):
            return path, False
        if path.is_symlink():
            return None
        if path != kept and not path.is_dir():
            return path, True
    return None


# Protected paths that are files: a missing one is stood in for by an empty file, not a folder.
FILES = frozenset({"features.json", "settings.json", "settings.local.json"})


def remove_mount_points(paths: list[Path]) -> None:
    """Remove the empty mount points bubblewrap made for stand-ins, deepest first, each only while
    it is still empty (a file the user wrote there since stays, and so does its folder)."""
    for placeholder in sorted(paths, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            if placeholder.is_dir() and not placeholder.is_symlink():
                placeholder.rmdir()  # only if still empty
            elif placeholder.stat().st_size == 0:
                placeholder.unlink()
