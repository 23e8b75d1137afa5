"""Content snapshots of the workspace (honouring .gitignore): who wrote what, step by step."""

from __future__ import annotations

import hashlib
from pathlib import Path

from arnes.tools.ripgrep import workspace_files

Snapshot = dict[str, str]  # relative path -> sha256


def take(workspace: Path) -> Snapshot:
    # .arnes counts (settings written by a node matter), its run-time output does not.
    files = workspace_files(workspace, (".git", ".arnes/traces", ".arnes/teams/runs", ".arnes/history"))
    snap: Snapshot = {}
    for rel in files:
        path = workspace / rel
        try:
            snap[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue  # vanished or unreadable: not part of the picture
    return snap


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, modified or deleted between two snapshots, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
