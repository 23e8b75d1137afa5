"""Carry out a rewind plan: files written atomically, links made as links, modes kept.

Every folder on the way is opened without following links (host/nofollow.py), so a link the
session planted where a folder was cannot send a restored file out of the workspace; a link is
recreated with its target text and never followed. Order: what goes away first (files, then
folders deepest first, only when empty), then folders, then files and links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from arnes.host.atomic import atomic_write
from arnes.host.nofollow import open_folder
from arnes.rewind.plan import Change, Plan
from arnes.rewind.store import Store


@dataclass
class Applied:
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "path: why"


def apply(plan: Plan, workspace: Path, store: Store) -> Applied:
    root = workspace.resolve()
    out = Applied()
    removals = [
        c for c in plan.changes if c.current is not None and (c.target is None or c.target.kind != c.current.kind)
    ]
    for change in sorted(removals, key=lambda c: c.rel.count("/"), reverse=True):
        _step(out, change, partial(_remove, root, change))
    creations = [c for c in plan.changes if c.target is not None]
    for change in sorted(creations, key=lambda c: (c.target is not None and c.target.kind != "d", c.rel.count("/"))):
        _step(out, change, partial(_create, root, change, store))
    for change in plan.changes:
        if change.target is None and change.current is not None and change.rel not in out.done:
            out.failed = [f for f in out.failed if not f.startswith(f"{change.rel}:")]
            _step(out, change, partial(_remove, root, change))  # a folder emptied by a later removal
    return out


def _step(out: Applied, change: Change, action: Callable[[], None]) -> None:
    try:
        action()
    except KeyError:
        out.failed.append(f"{change.rel}: its content is no longer in the checkpoint store")
    except OSError as exc:
        out.failed.append(f"{change.rel}: {exc.strerror or exc}")
    else:
        if change.rel not in out.done:
            out.done.append(change.rel)


def _parent(root: Path, rel: str, create: bool) -> tuple[int, str]:
    path = root / rel
    return open_folder(path.parent, create=create), path.name


def _remove(root: Path, change: Change) -> None:
    folder, name = _parent(root, change.rel, create=False)
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            try:
                os.rmdir(name, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise OSError(exc.errno, "the folder still holds files no checkpoint covers") from exc
                raise
        else:
            os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
    finally:
        os.close(folder)


def _create(root: Path, change: Change, store: Store) -> None:
    target = change.target
    assert target is not None
    if target.kind == "f":  # a link standing where the file was is replaced, not followed
        data = store.get(target.ref)
        atomic_write(root / change.rel, data, real=root / change.rel, mode=target.mode)
        return
    folder, name = _parent(root, change.rel, create=True)
    try:
        if target.kind == "d":
            try:
                os.mkdir(name, target.mode or 0o755, dir_fd=folder)
            except FileExistsError:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                try:
                    os.fchmod(fd, target.mode)
                finally:
                    os.close(fd)
        else:  # a link: made again with its own target text, never followed
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=folder)
            os.symlink(target.ref, name, dir_fd=folder)
    finally:
        os.close(folder)
