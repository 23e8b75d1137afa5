"""What the workspace holds now, as a checkpoint records it: every file, link and folder covered.

Covered: everything under the workspace but `.git` and `.arnes` at any depth (and the other paths
arnes protects), special files (pipes, sockets, devices), and dependency or cache folders
(`node_modules`, `.venv`, `__pycache__`, ...) that git does not show. So what git would list is
covered, and so are ignored files outside those folders (`.env`, a local config, a log). A file's
content is kept up to a size cap; a bigger one is recorded (its size and time) but not kept.

A later scan reuses the hash of every file whose inode, size, time and mode did not change, so it
costs a stat per file plus the reading of what changed (bench/rewind).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arnes.host.nofollow import read_regular
from arnes.host.ripgrep import null_separated
from arnes.permissions.protected import protected_component, protected_part
from arnes.rewind.store import PackWriter, compress

# Folders of installs, caches and build output: not covered unless git would show a file in them.
HEAVY = frozenset({
    "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "site-packages", ".cache", ".gradle", "target", ".next", "dist", "build",
})  # fmt: skip
# A file whose time is this close to the scan may still be changing within the same tick: hashed again next time.
RACY_NS = 2_000_000_000
BATCH_BYTES = 32 << 20  # contents read ahead at most (memory stays bounded)


@dataclass(frozen=True)
class Entry:
    kind: str  # "f" file, "l" link, "d" folder
    mode: int  # permission bits
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    ref: str = ""  # f: sha256 of the content ("" when not kept: too big); l: the link's target
    # The inode's change time: a program can set a file's mtime back (os.utime) after rewriting it in
    # place with the same size, never its ctime, so a reused hash needs both unchanged (as git does).
    ctime_ns: int = 0

    def same(self, other: Entry | None) -> bool:
        """The same thing to a user: kind, permission bits and content (not times or inodes)."""
        if other is None or other.kind != self.kind or other.mode != self.mode:
            return False
        if self.kind == "f":
            return bool(self.ref) and self.ref == other.ref and self.size == other.size
        return self.ref == other.ref

    def to_json(self) -> list[Any]:
        return [self.kind, self.mode, self.size, self.mtime_ns, self.ino, self.ref, self.ctime_ns]

    @staticmethod
    def from_json(raw: Any) -> Entry | None:
        if not isinstance(raw, list) or len(raw) != 7 or raw[0] not in ("f", "l", "d"):
            return None
        kind, mode, size, mtime_ns, ino, ref, ctime_ns = raw
        if not all(isinstance(v, int) for v in (mode, size, mtime_ns, ino, ctime_ns)) or not isinstance(ref, str):
            return None
        return Entry(kind, mode, size, mtime_ns, ino, ref, ctime_ns)


Manifest = dict[str, Entry]


def covered_file(rel: str) -> bool:
    """Whether a path relative to the workspace is one a checkpoint may hold and a rewind may write."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return False
    return protected_part(rel) is None


class Scanner:
    """Scans one workspace, keeping what it learnt (the folders git shows files in) for the session."""

    def __init__(self, workspace: Path, most_bytes: int):
        self.workspace = workspace
        self.most_bytes = most_bytes  # the biggest content kept
        self._listed_heavy: set[str] | None = None

    def scan(
        self, writer: PackWriter, previous: Manifest, extra: Iterable[str] = (), check_store: bool = False
    ) -> tuple[Manifest, int]:
        """The manifest now (new contents into `writer`) and how many files were read. `previous`
        spares reading unchanged files; with `check_store` (it came from another session, whose
        contents the cap may have dropped since) only those whose content the store still has."""
        return self._record(self._walk(extra), writer, previous, check_store)

    def scan_only(self, rels: Iterable[str], writer: PackWriter) -> tuple[Manifest, int]:
        """The entries of these paths alone (and the folders on their way), as `scan` would record them."""
        seen: set[str] = set()
        return self._record([f for rel in rels for f in self._extra(rel, seen)], writer, {}, False)

    def _record(
        self, found: list[tuple[str, os.stat_result]], writer: PackWriter, previous: Manifest, check_store: bool
    ) -> tuple[Manifest, int]:
        settled = time.time_ns() - RACY_NS  # a file written since may still be changing within its time tick
        manifest: Manifest = {}
        to_read: list[tuple[str, os.stat_result]] = []
        for rel, st in found:  # a hot loop: one pass over every file of the tree
            mode = st.st_mode & 0o1777
            if stat.S_ISREG(st.st_mode):
                old = previous.get(rel)
                if (
                    old is not None
                    and old.mtime_ns == st.st_mtime_ns
                    and old.ctime_ns == st.st_ctime_ns
                    and old.size == st.st_size
                    and old.ino == st.st_ino
                    and old.mode == mode
                    and old.kind == "f"
                    and st.st_mtime_ns < settled
                    and (not check_store or not old.ref or writer.store.has(old.ref))
                ):
                    manifest[rel] = old
                elif st.st_size > self.most_bytes:
                    manifest[rel] = Entry("f", mode, st.st_size, st.st_mtime_ns, st.st_ino, "", st.st_ctime_ns)
                else:
                    to_read.append((rel, st))
            elif stat.S_ISDIR(st.st_mode):
                manifest[rel] = Entry("d", mode)
            elif stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(self.workspace / rel)
                except OSError:
                    continue
                manifest[rel] = Entry("l", 0, 0, st.st_mtime_ns, st.st_ino, target)
        for rel, entry, data, packed in self._read_all(to_read):
            manifest[rel] = entry
            if entry.ref and data is not None:
                writer.add(entry.ref, data, packed)
        return manifest, len(to_read)

    def _read_all(
        self, found: list[tuple[str, os.stat_result]]
    ) -> Iterator[tuple[str, Entry, bytes | None, bytes | None]]:
        """Read, hash and compress in two threads (hashlib and zlib let go of the GIL), in batches."""
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="arnes-checkpoint") as pool:
            batch: list[tuple[str, os.stat_result]] = []
            size = 0
            for item in found:
                batch.append(item)
                size += item[1].st_size
                if size >= BATCH_BYTES or len(batch) >= 512:
                    yield from (r for r in pool.map(self._read_one, batch) if r is not None)
                    batch, size = [], 0
            yield from (r for r in pool.map(self._read_one, batch) if r is not None)

    def _read_one(self, found: tuple[str, os.stat_result]) -> tuple[str, Entry, bytes | None, bytes | None] | None:
        rel = found[0]
        try:
            data, st = read_regular(self.workspace / rel, limit=self.most_bytes + 1)
        except OSError:
            return None  # gone since the walk, or no longer a regular file
        mode = st.st_mode & 0o1777
        if len(data) > self.most_bytes:
            return rel, Entry("f", mode, st.st_size, st.st_mtime_ns, st.st_ino, "", st.st_ctime_ns), None, None
        sha = hashlib.sha256(data).hexdigest()
        entry = Entry("f", mode, len(data), st.st_mtime_ns, st.st_ino, sha, st.st_ctime_ns)
        return rel, entry, data, compress(data)

    # -- the walk ----------------------------------------------------------------------------
    def _walk(self, extra: Iterable[str]) -> list[tuple[str, os.stat_result]]:
        root = str(self.workspace)
        out: list[tuple[str, os.stat_result]] = []
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            top = not rel_dir.count("/")  # features.json, .claude/settings.json: names near the top
            try:
                entries = os.scandir(os.path.join(root, rel_dir) if rel_dir else root)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    name = entry.name
                    if (not name.isascii() or name[0] == "." or "~" in name) and protected_component(name):
                        continue  # .git, .arnes at any depth, as a disk that folds names sees them
                    rel = f"{rel_dir}/{name}" if rel_dir else name
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    mode = st.st_mode
                    if stat.S_ISDIR(mode):
                        if name in HEAVY and not self._shown(rel):
                            continue
                        stack.append(rel)
                    elif not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                        continue  # a pipe, socket or device
                    elif top and protected_part(rel) is not None:
                        continue
                    out.append((rel, st))
        extra = [rel for rel in extra]
        if extra:  # files the session's tools wrote where the walk does not go
            seen = {rel for rel, _ in out}
            for rel in extra:
                out += self._extra(rel, seen)
        return out

    def _extra(self, rel: str, seen: set[str]) -> list[tuple[str, os.stat_result]]:
        """`rel` and the folders on its way (not yet `seen`), through no link."""
        if rel in seen or not covered_file(rel) or any(protected_component(p) for p in rel.split("/")):
            return []
        out = []
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            if sub in seen:
                continue
            try:
                st = os.lstat(self.workspace / sub)
            except OSError:
                break
            if i < len(parts) and not stat.S_ISDIR(st.st_mode):
                break  # a link or file on the way: not followed
            seen.add(sub)
            out.append((sub, st))
        return out

    def _shown(self, rel: str) -> bool:
        """Whether git would show a file inside the folder `rel` (learnt once per session)."""
        if self._listed_heavy is None:
            self._listed_heavy = self._heavy_folders_git_shows()
        return rel in self._listed_heavy

    def _heavy_folders_git_shows(self) -> set[str]:
        """The dependency-named folders holding a file git shows: one .gitignore does not exclude
        (ripgrep's view), or one the repository tracks anyway (`git add -f build/deploy.sh`)."""
        import subprocess

        from arnes.host.git import Repository, repository, run_git
        from arnes.host.ripgrep import NO_IGNORE_DOT, ripgrep

        globs = [arg for name in sorted(HEAVY) for arg in ("--glob", f"**/{name}/**")]
        argv = [ripgrep(), "--files", "--null", "--hidden", "--no-require-git", NO_IGNORE_DOT, *globs]
        names: list[str] = []
        try:
            done = subprocess.run(argv, cwd=self.workspace, capture_output=True, check=False, timeout=120)
            names += null_separated(done.stdout)
        except (OSError, subprocess.TimeoutExpired):
            pass
        repo = repository(self.workspace)  # git with the repository's own programs turned off (host/git.py)
        if isinstance(repo, Repository):
            try:
                tracked = run_git(repo, ["ls-files", "-z", "--", *(f":(glob)**/{name}/**" for name in sorted(HEAVY))])
                names += null_separated(tracked.stdout) if tracked.returncode == 0 else []
            except (OSError, subprocess.TimeoutExpired):
                pass
        shown: set[str] = set()
        for name in names:
            parts = name.split("/")
            for i, part in enumerate(parts[:-1]):
                if part in HEAVY:
                    shown.add("/".join(parts[: i + 1]))
        return shown
