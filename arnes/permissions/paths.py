"""Real paths: what a path finally points at, so that a link cannot dodge a rule or the perimeter."""

from __future__ import annotations

import os
from pathlib import Path

MAX_LINK_HOPS = 40


def absolute(workspace: Path, path: str | Path) -> Path:
    """The path as written, made absolute against the workspace and normalised (`..` folded)."""
    expanded = os.path.expanduser(str(path))
    joined = expanded if os.path.isabs(expanded) else os.path.join(workspace, expanded)
    return Path(os.path.normpath(joined))


def resolve_real(path: Path, hops: int = 0) -> Path:
    """Resolve symlinks; follow dangling links to their target; append missing tails.

    A write to a path that does not exist yet is judged by its deepest existing ancestor, so a
    linked folder pointing outside is still outside; a dangling link is judged by where a write
    through it would land.
    """
    rest: list[str] = []
    current = path
    while True:
        if current.exists():
            return Path(os.path.realpath(current)).joinpath(*reversed(rest))
        if current.is_symlink() and hops < MAX_LINK_HOPS:
            target = Path(os.path.normpath(current.parent / os.readlink(current)))
            return resolve_real(target.joinpath(*reversed(rest)), hops + 1)
        parent = current.parent
        if parent == current:
            return path
        rest.append(current.name)
        current = parent


def is_inside(root: Path, path: Path) -> bool:
    """True when `path` is `root` or below it, by whole components (`/ws-other` is not in `/ws`)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
