"""Content snapshots of the workspace (honouring .gitignore): who wrote what, step by step."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from arnes.host.nofollow import read_regular
from arnes.host.ripgrep import workspace_files

Snapshot = dict[str, str]  # relative path -> sha256


def take(workspace: Path) -> Snapshot:
    """Each listed regular file's hash. Read through no link and without blocking: a repository
    can ship a FIFO (a plain read waits forever), and a name could lead to /dev/zero or out of
    the workspace; what is not a regular file inside the workspace is not part of the picture."""
    # .arnes counts (settings written by a node matter), its run-time output does not.
    files = workspace_files(workspace, (".git", ".arnes/traces", ".arnes/teams/runs", ".arnes/history"))
    real = workspace.resolve()
    snap: Snapshot = {}
    for rel in files:
        if os.path.isabs(rel) or ".." in Path(rel).parts:
            continue
        try:
            data, _ = read_regular(real / rel)
        except OSError:
            continue  # vanished, unreadable, behind a link, or a pipe or device: not part of the picture
        snap[rel] = hashlib.sha256(data).hexdigest()
    return snap


def special_files(folder: str, names: list[str]) -> set[str]:
    """For shutil.copytree's `ignore`: the names in `folder` that are neither a regular file, a
    folder nor a link (a FIFO, socket or device the repository ships): copying one blocks or
    fails, and no node's work is in it."""
    special: set[str] = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            special.add(name)
    return special


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, modified or deleted between two snapshots, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
