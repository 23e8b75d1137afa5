"""Content snapshots of the workspace (honouring .gitignore): who wrote what, step by step."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from arnes.tools.search import ripgrep

Snapshot = dict[str, str]  # relative path -> sha256


def take(workspace: Path) -> Snapshot:
    done = subprocess.run(
        # .arnes counts (settings written by a node matter), its run-time output does not.
        [ripgrep(), "--files", "--hidden", "--no-require-git", "--glob", "!.git", "--glob", "!.arnes/traces",
         "--glob", "!.arnes/teams/runs", "--glob", "!.arnes/history"],
        cwd=workspace, capture_output=True, text=True, check=False,
    )  # fmt: skip
    snap: Snapshot = {}
    for rel in done.stdout.splitlines():
        path = workspace / rel
        try:
            snap[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue  # vanished or unreadable: not part of the picture
    return snap


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, modified or deleted between two snapshots, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
