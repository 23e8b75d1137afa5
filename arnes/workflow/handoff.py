"""Is the workspace clean to hand over? Build, tests, leftovers, uncommitted work, PROGRESS.md."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from arnes.host.git import repository, run_git
from arnes.host.ripgrep import workspace_files
from arnes.safe import one_line
from arnes.sandbox.base import Sandbox
from arnes.workflow.verify import run_check

SKIPPED = "no command configured (skipped)"
LEFTOVERS = ("*.tmp", "*.orig", "*.rej", "*.bak", "*~", ".*.swp", "*.arnes-*.tmp", "nohup.out", "core")


@dataclass
class Handoff:
    checks: list[tuple[str, str]] = field(default_factory=list)  # (what, result), for the report
    reasons: list[str] = field(default_factory=list)  # why it is not clean

    @property
    def clean(self) -> bool:
        return not self.reasons


def inspect(workspace: Path, build: str | None, tests: str | None, sandbox: Sandbox | None = None) -> Handoff:
    report = Handoff()
    for what, command in (("build", build), ("tests", tests)):
        if not command:
            report.checks.append((what, SKIPPED))
            continue
        verdict = run_check(command, workspace, sandbox)
        report.checks.append((what, f"`{command}` {'green' if verdict.passed else 'red'}"))
        if not verdict.passed:
            report.reasons.append(f"{what} is red: `{command}` exited {verdict.exit_code}")
    leftovers = leftover_files(workspace)
    report.checks.append(("temporary files", f"{len(leftovers)} found"))
    if leftovers:
        report.reasons.append("leftover temporary files: " + _names(leftovers))
    changes = uncommitted(workspace)
    if isinstance(changes, str):
        report.checks.append(("git", f"{changes} (skipped)"))
    else:
        report.checks.append(("uncommitted changes", f"{len(changes)} paths"))
        if changes:
            report.reasons.append("uncommitted changes: " + _names(changes))
    stale = progress_problem(workspace)
    report.checks.append(("PROGRESS.md", stale or "up to date"))
    if stale:
        report.reasons.append(stale)
    return report


def _names(paths: list[str]) -> str:
    """The first ten names, each on one line: a name is the repository's to choose, and one with
    a line break (or a byte that is not UTF-8) must not print a line of the report itself."""
    return ", ".join(one_line(p) for p in paths[:10])


def leftover_files(workspace: Path) -> list[str]:
    return sorted(f for f in workspace_files(workspace) if any(fnmatch.fnmatch(Path(f).name, p) for p in LEFTOVERS))


def uncommitted(workspace: Path) -> list[str] | str:
    """Changed or untracked paths (outside .arnes/), or why git was not asked (host/git.py)."""
    repo = repository(workspace)
    if isinstance(repo, str):
        return repo
    try:
        done = run_git(repo, ["status", "--porcelain", "-z", "--untracked-files=all"])
    except subprocess.TimeoutExpired:
        return "git status did not finish"
    if done.returncode != 0:
        said = os.fsdecode(done.stderr).strip().rpartition("\n")[2]
        return f"git status failed: {said or done.returncode}"
    return [p for p in _porcelain_paths(done.stdout) if not p.startswith(".arnes/")]


def _porcelain_paths(out: bytes) -> list[str]:
    """The paths of `git status --porcelain -z`: `XY path` NUL each, a rename or copy followed by
    its old path as one more field. NUL-separated, so a name with a line break is one name."""
    fields = out.split(b"\0")
    paths: list[str] = []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(os.fsdecode(entry[3:]))
        if entry[:1] in (b"R", b"C") or entry[1:2] in (b"R", b"C"):
            i += 1  # the old name of a rename or copy
    return paths


def progress_problem(workspace: Path) -> str | None:
    """PROGRESS.md should exist and be no older than the newest change to the work."""
    progress = workspace / "PROGRESS.md"
    if not progress.is_file():
        return "PROGRESS.md is missing: say what is done, in progress, blocked and next"
    newest = max((_mtime(workspace / f) for f in workspace_files(workspace) if f != "PROGRESS.md"), default=0.0)
    if newest > progress.stat().st_mtime:
        return "PROGRESS.md is older than the latest change: update it"
    return None


def _mtime(path: Path) -> float:
    """When `path` last changed; 0 for a name that is gone (removed meanwhile, or not a name the
    listing could tell apart) or cannot be read: a name must not stop the handoff report."""
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0
