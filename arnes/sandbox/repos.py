"""The git repositories inside a workspace other than its own `.git`: what the sandbox holds
read-only when it starts (sandbox/bubblewrap.py) and what sandbox/gitguard.py checks after each
command.

A repository is a `.git` folder at any depth (a clone in `vendor/lib`, a pip VCS checkout in
`.venv/src/`), a `.git` file or link (a gitdir pointer: git reads the folder it names), or a
folder laid out as a bare repository (HEAD, objects/, refs/: git's discovery takes it for one
when no `.git` is found first). Dependency folders are walked too: `.venv/src/*/.git` is where
pip keeps editable VCS installs, and pip runs git there later.

Bounded: one `scandir` per folder (names and types, no stat per file), never into a `.git` or a
bare repository's folder, never through a link, at most MOST_FOLDERS folders; past that the
result says it is incomplete (and the sandbox says so in one line). Walked again after each
command, a folder that did not change costs one lstat (`Walker`).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from arnes.host.nofollow import read_regular

MOST_FOLDERS = 200_000  # folders listed at most per walk (bench/README.md: about 1 s on 2 cores)
MOST_REPOS = 1_000  # repositories held read-only at most (one bind mount each, or two)
_POINTER_BYTES = 4096
RACY_NS = 2_000_000_000  # a folder changed this close to its listing is listed again next time


@dataclass(frozen=True)
class Repo:
    """`path`: the `.git` entry or the bare repository's folder. `git_dirs`: where git reads
    config and hooks (the folder itself, a gitdir pointer's target, a `commondir` target), each
    inside the workspace; empty for a pointer that leads outside it or nowhere readable."""

    path: Path
    ident: tuple[int, int]  # (st_dev, st_ino) of `path`: a repository swapped in at the same path differs
    git_dirs: tuple[Path, ...]
    pointer: bool = False  # a `.git` file or link


@dataclass
class Found:
    repos: list[Repo] = field(default_factory=list)
    complete: bool = True  # False: the walk stopped at MOST_FOLDERS
    unlistable: list[Path] = field(default_factory=list)  # folders whose permissions refuse a listing


def inside(path: Path, workspace: Path) -> bool:
    return path == workspace or workspace in path.parents


def _pointer_target(entry: Path) -> Path | None:
    """The folder a `.git` file (`gitdir: PATH`) or link names, resolved; None if unreadable."""
    try:
        if entry.is_symlink():
            return Path(os.path.realpath(entry))
        # Never open() it: a FIFO planted as `.git` would hang arnes (read_regular: O_NONBLOCK, no link).
        first = read_regular(entry, _POINTER_BYTES)[0].split(b"\n", 1)[0].strip()
    except OSError:
        return None
    if not first.startswith(b"gitdir:"):
        return None
    target = Path(os.fsdecode(first.removeprefix(b"gitdir:").strip()))
    return Path(os.path.realpath(entry.parent / target))


def _common(git_dir: Path) -> Path | None:
    """The folder a `commondir` file names (git reads config and hooks there), resolved."""
    try:
        text = read_regular(git_dir / "commondir", _POINTER_BYTES)[0].split(b"\n", 1)[0].strip()
    except OSError:
        return None
    return Path(os.path.realpath(git_dir / os.fsdecode(text))) if text else None


def repo_at(path: Path, workspace: Path) -> Repo | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    pointer = (path.name == ".git" and not os.path.isdir(path)) or os.path.islink(path)
    first = _pointer_target(path) if pointer else path
    dirs = [first] if first is not None else []
    common = _common(first) if first is not None else None
    if common is not None and common != first:
        dirs.append(common)
    kept = tuple(d for d in dirs if inside(d, workspace) and d != workspace / ".git")
    return Repo(path, (st.st_dev, st.st_ino), kept, pointer)


def _bare(names: dict[str, bool]) -> bool:
    """git's `is_git_directory`: HEAD, objects/ and refs/ (refs may be a file with reftable)."""
    return "HEAD" in names and names.get("objects", False) and "refs" in names


@dataclass(frozen=True)
class _Listed:
    """One folder as last listed: its stamp, its subfolders, whether it holds a repository."""

    stamp: tuple[int, int, int, int]  # st_dev, st_ino, st_mtime_ns, st_ctime_ns
    folders: tuple[str, ...]
    git: bool  # a `.git` entry
    bare: bool  # laid out as a bare repository
    racy: bool  # changed so recently that a change in the same clock tick would not show


def _list(folder: str, stamp: tuple[int, int, int, int], racy: bool) -> _Listed | None:
    try:
        with os.scandir(folder) as entries:
            names = {e.name: e.is_dir(follow_symlinks=False) for e in entries}
    except PermissionError:
        raise  # said: a command may `chmod 000` the folder it made a repository in
    except OSError:
        return None
    folders = tuple(n for n, is_dir in names.items() if is_dir and n != ".git")
    return _Listed(stamp, folders, ".git" in names, _bare(names), racy)


class Walker:
    """find_repos, again after every command: a folder whose stamp (device, inode, mtime, ctime)
    did not change has the same entries, so it costs one lstat, not a listing. A command can set
    an mtime back, never a ctime; a folder whose ctime is within RACY_NS of its listing is listed
    again (a change in the same clock tick would leave the stamp as it was)."""

    def __init__(self, workspace: Path, most: int = MOST_FOLDERS):
        self.workspace = workspace
        self.most = most
        self._seen: dict[str, _Listed] = {}
        self.complete = True  # the last walk's
        self.unlistable: list[Path] = []  # the last walk's

    def find(self) -> Found:
        """Every repository under the workspace but its own `.git` (which SANDBOX_READ_ONLY holds)."""
        ws, found = str(self.workspace), Found()
        seen: dict[str, _Listed] = {}  # paths as strings: a Path per folder costs more than its lstat
        stack = [ws]
        while stack:
            folder = stack.pop()
            if len(seen) >= self.most:
                found.complete = False
                break
            try:
                listed = self._listing(folder)
            except PermissionError:
                found.unlistable.append(Path(folder))
                continue
            if listed is None:
                continue
            seen[folder] = listed
            if listed.git and folder != ws and (repo := repo_at(Path(folder, ".git"), self.workspace)) is not None:
                found.repos.append(repo)
            # Also beside a `.git`: one git does not take for a repository (the sandbox's empty
            # stand-in) makes git try the folder itself as a bare one.
            if listed.bare:
                if (repo := repo_at(Path(folder), self.workspace)) is not None:
                    found.repos.append(repo)
                if folder != ws:
                    continue  # its objects/ and refs/ hold no repository
            stack.extend(os.path.join(folder, name) for name in listed.folders)
        self._seen, self.complete, self.unlistable = seen, found.complete, found.unlistable
        return found

    def _listing(self, folder: str) -> _Listed | None:
        try:
            st = os.lstat(folder)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        old = self._seen.get(folder)
        if old is not None and old.stamp == stamp and not old.racy:
            return old
        return _list(folder, stamp, racy=st.st_ctime_ns >= time.time_ns() - RACY_NS)


def find_repos(workspace: Path, most: int = MOST_FOLDERS) -> Found:
    """Every repository under `workspace` but its own `.git`, walked once."""
    return Walker(workspace, most).find()
