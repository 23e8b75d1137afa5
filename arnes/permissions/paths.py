"""Real paths: what a path finally points at, so that a link cannot dodge a rule or the perimeter."""

from __future__ import annotations

import os
from pathlib import Path


def absolute(workspace: Path, path: str | Path) -> Path:
    """The path as written, made absolute against the workspace and normalised (`..` folded)."""
    expanded = os.path.expanduser(str(path))
    joined = expanded if os.path.isabs(expanded) else os.path.join(workspace, expanded)
    return Path(os.path.normpath(joined))


def resolve_real(path: Path) -> Path:
    """Resolve symlinks; follow dangling links to their target; append missing tails.

    A write to a path that does not exist yet is judged by its deepest existing ancestor, so a
    linked folder pointing outside is still outside; a dangling link is judged by where a write
    through it would land. This is exactly where `atomic_write` puts the bytes (it writes to
    `os.path.realpath`), so the perimeter and the write cannot disagree: a link's target is taken
    relative to the link's real folder and `..` in it applies after resolving what precedes it.
    Link loops end (the loop is left unresolved, and a write through it fails).
    """
    return Path(os.path.realpath(path))


def is_inside(root: Path, path: Path) -> bool:
    """True when `path` is `root` or below it, by whole components (`/ws-other` is not in `/ws`)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
