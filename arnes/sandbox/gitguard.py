"""Nested git repositories, held and checked (docs/sandbox.md, "Nested repositories").

When the sandbox starts, every repository in the workspace (sandbox/repos.py) is recorded: its
`.git` folder, gitdir pointer or bare folder is bound read-only, like the top-level `.git`, so a
command cannot plant a hook or a config key that the user's next `git commit` there would run.

A repository a command creates cannot be held by mounts made before it existed (`git init sub`
then `sub/.git/hooks/pre-commit`, or a folder laid out as a bare repository). So after each
foreground command, and when the session ends, the workspace is walked again and every part
that runs a program (sandbox/gitrisk.py) in a repository that is new, swapped for another, or
changed since the start is renamed aside to `NAME.arnes-disabled`; each is said in one line,
with the way back. Renamed, not deleted: nothing the user may want is lost, and nothing runs
until the user puts it back on purpose. A warning alone would leave the hook armed for the
user's next `git commit`, which is exactly the moment the user is not reading warnings.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from arnes.sandbox.gitrisk import ASIDE, changed_parts, fingerprint, risky_parts
from arnes.sandbox.repos import MOST_FOLDERS, MOST_REPOS, Found, Repo, Walker


@dataclass(frozen=True)
class Start:
    """The repositories as they were when the sandbox started."""

    found: Found
    prints: dict[Path, dict[str, tuple[int, ...]]]  # each git folder's fingerprint
    idents: dict[Path, tuple[int, int]]  # each repository's identity, by path

    def held(self, workspace: Path) -> list[Path]:
        """What is bound read-only: each repository's entry and its git folders (at most
        MOST_REPOS repositories; never the workspace itself, laid out as a bare repository)."""
        paths: list[Path] = []
        for repo in self.found.repos[:MOST_REPOS]:
            for path in (repo.path, *repo.git_dirs):
                if path != workspace and path not in paths:
                    paths.append(path)
        return paths

    def warning(self) -> str | None:
        if not self.found.complete:
            return (
                f"the workspace has more than {MOST_FOLDERS:,} folders: git repositories past them are not held "
                "read-only in the sandbox nor checked for hooks"
            )
        if len(self.found.repos) > MOST_REPOS:
            return (
                f"the workspace holds {len(self.found.repos):,} git repositories: the first {MOST_REPOS:,} are held "
                "read-only in the sandbox, the rest are checked for hooks after each command"
            )
        return None


def start(walker: Walker) -> Start:
    found = walker.find()
    prints = {d: fingerprint(d) for repo in found.repos for d in repo.git_dirs}
    return Start(found, prints, {repo.path: repo.ident for repo in found.repos})


class Guard:
    """The workspace's repositories recorded from the session's start, in a background thread (a
    big tree takes a fraction of a second: bench/README.md), which the first command waits for."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self._walker = Walker(workspace)  # one thread at a time: the recording, then checks under the lock
        self._start: Start | None = None
        self._lock = threading.Lock()
        self._said_incomplete = False
        self._said_unlistable: set[Path] = set()
        self._thread = threading.Thread(target=self._record, name="arnes-repos", daemon=True)
        self._thread.start()

    def _record(self) -> None:
        self._start = start(self._walker)

    def recorded(self) -> Start:
        self._thread.join()
        with self._lock:
            if self._start is None:  # the thread died: record now, in this one
                self._start = start(self._walker)
            return self._start

    def check(self) -> list[str]:
        before = self.recorded()
        with self._lock:
            lines = check(self._walker, before)
            for folder in self._walker.unlistable:
                if folder not in before.found.unlistable and folder not in self._said_unlistable:
                    self._said_unlistable.add(folder)
                    shown = folder.relative_to(self.workspace).as_posix() if folder != self.workspace else "."
                    lines.append(
                        f"warning: {shown} cannot be listed (its permissions were changed): a git repository in it "
                        "is not checked; make it readable and look for a .git in it before running git there"
                    )
            if before.found.complete and not self._walker.complete and not self._said_incomplete:
                # A command can make folders by the hundred thousand to push a new repository past the walk.
                self._said_incomplete = True
                lines.append(
                    f"warning: the workspace now has more than {MOST_FOLDERS:,} folders: git repositories "
                    "made past them are not checked for hooks"
                )
            return lines


def _aside(path: Path) -> Path | None:
    target = path.with_name(path.name + ASIDE)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}{ASIDE}-{n}")
    try:
        os.rename(path, target)
    except OSError:
        return None
    return target


def _suspects(repo: Repo, before: Start) -> list[tuple[Path, frozenset[str] | None]]:
    """Each git folder of `repo` with what to judge in it: all (new or swapped) or what changed."""
    same = before.idents.get(repo.path) == repo.ident
    out: list[tuple[Path, frozenset[str] | None]] = []
    for git_dir in repo.git_dirs:
        old = before.prints.get(git_dir)
        out.append((git_dir, changed_parts(old, fingerprint(git_dir)) if same and old is not None else None))
    return out


def check(walker: Walker, before: Start) -> list[str]:
    """Rename aside what runs a program in repositories created, swapped or changed since `before`;
    one line for each part (and for a pointer leading out of the workspace, renamed aside too)."""
    workspace = walker.workspace
    lines: list[str] = []
    for repo in walker.find().repos:
        if repo.pointer and not repo.git_dirs and before.idents.get(repo.path) != repo.ident:
            lines += _said(workspace, repo.path, _aside(repo.path), "a gitdir pointer leading out of the workspace")
            continue
        for git_dir, changed in _suspects(repo, before):
            for part in risky_parts(git_dir, changed):
                lines += _said(workspace, part, _aside(part), "runs a program when git runs there")
    return lines


def _said(workspace: Path, part: Path, moved: Path | None, why: str) -> list[str]:
    shown = part.relative_to(workspace).as_posix() if workspace in part.parents else str(part)
    if moved is None:
        return [f"warning: {shown} was written during the session and {why}; it could not be renamed aside"]
    return [
        f"warning: {shown} was written during the session and {why}: renamed to {moved.name} "
        f"(look at it; rename it back to use it)"
    ]
