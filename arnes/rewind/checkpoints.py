"""What a session calls: a checkpoint before each user turn (and verify round), closed after it.

Numbers run through the session: user turns, rewinds and verify rounds share one sequence, so a
rewind is a point of its own and can be taken back like a turn. A resumed session goes on with
its numbers and its journal. Failing to checkpoint never stops the work: the reason is kept
(`problem`) and said once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from arnes.rewind.journal import Journal, Point, delta, replay
from arnes.rewind.scan import HEAVY, Manifest, Scanner, covered_file
from arnes.rewind.store import Store

MB = 1 << 20
MOST_FILE_BYTES = 16 * MB  # a bigger file is recorded, not kept
MOST_STORE_BYTES = 2048 * MB  # per workspace; the oldest sessions go first


@dataclass(frozen=True)
class Timing:
    seconds: float
    files_read: int


class Checkpoints:
    def __init__(
        self,
        workspace: Path,
        session: str,
        store: Store,
        most_file_bytes: int = MOST_FILE_BYTES,
        most_store_bytes: int = MOST_STORE_BYTES,
    ):
        self.workspace = workspace.resolve()
        self.session = session
        self.store = store
        self.most_store_bytes = most_store_bytes
        self.scanner = Scanner(self.workspace, most_file_bytes)
        self.problem: str | None = None
        self.notes: list[str] = []  # said once each, by whoever runs the session (the storage cap reached)
        self.last: Timing | None = None
        self._used: int | None = None  # bytes the store holds, known after the first scan
        self._open: int | None = None  # the point whose "after" is not written yet
        self._extra: set[str] = set()  # files the tools wrote where scans do not look
        journal = replay(store.read(session))
        points, running = journal.points, journal.final
        self._running: Manifest = running
        self._written = bool(points)
        self._next = max((p.n for p in points), default=0) + 1
        # The hashes a scan may reuse: this session's last state, or (read at the first scan, not at
        # start-up) the last state another session here recorded; None: not read yet.
        self._cache: Manifest | None = running if points else None
        self._cache_elsewhere = not points  # its contents may have been dropped by the cap since

    @property
    def next_number(self) -> int:
        return self._next

    def _newest_elsewhere(self) -> Manifest:
        """The last state another session here recorded: its hashes spare reading unchanged files."""
        for other in reversed(self.store.sessions()):
            if other != self.session.replace("/", "_"):
                return replay(self.store.read(other)).final
        return {}

    # -- the session's moments -----------------------------------------------------------------
    def begin(self, kind: str, label: str, jobs: bool = False, **extra: Any) -> int:
        """Point n opens with the workspace as it is now (and the open one, if any, closes there;
        `jobs`: the session's background shells still run, and may write after it)."""
        n = self._next
        self._next += 1
        manifest = self._scan()
        if manifest is None:
            return n
        if self._open is not None:
            self._write({"n": self._open, "phase": "after", **({"jobs": True} if jobs else {})}, manifest)
        record = {"n": n, "phase": "before", "kind": kind, "label": first_line(label), "time": _now(), **extra}
        self._write(record, manifest)
        self._open = n
        return n

    def end(self, jobs: bool = False, **extra: Any) -> None:
        """The open point closes with the workspace as it is now (`jobs`: as in `begin`)."""
        if self._open is None:
            return
        manifest = self._scan()
        if manifest is not None:
            self._write({"n": self._open, "phase": "after", **({"jobs": True} if jobs else {}), **extra}, manifest)
        self._open = None

    def before_write(self, real: Path) -> None:
        """A file tool is about to write `real`: when no scan covers it (a dependency folder), keep
        what it holds now in the open point, so a rewind can put it back."""
        if self._open is None or self.problem is not None:
            return
        try:
            rel = real.relative_to(self.workspace).as_posix()
        except ValueError:
            return
        if rel in self._extra or not covered_file(rel) or not any(p in HEAVY for p in rel.split("/")[:-1]):
            return  # a scan covers it
        self._extra.add(rel)
        try:
            with self.store.locked(), self.store.writer() as writer:
                found, _ = self.scanner.scan_only([rel], writer)
            self._count(writer.written)
            if found:
                record = {"n": self._open, "phase": "amend", "set": {r: e.to_json() for r, e in found.items()}}
                self.store.append(self.session, record)
                self._running = {**self._running, **found}
        except OSError as exc:
            self._fail(exc)

    def close(self) -> list[str]:
        """After the session: under the storage cap again (the sessions it dropped)."""
        self.end()
        if self.problem is not None:
            return []
        try:
            return self.store.collect(self.most_store_bytes, keep=self.session)
        except OSError as exc:
            self._fail(exc)
            return []

    # -- reading -----------------------------------------------------------------------------
    def current(self) -> Manifest | None:
        """The workspace now, as a checkpoint would record it (None: it could not be scanned)."""
        return self._scan()

    def journal(self) -> Journal:
        return replay(self.store.read(self.session))

    def points(self) -> list[Point]:
        return self.journal().points

    # -- inside ------------------------------------------------------------------------------
    def _scan(self) -> Manifest | None:
        if self.problem is not None:
            return None
        began = time.perf_counter()
        try:
            with self.store.locked(), self.store.writer() as writer:
                if self._cache is None:
                    self._cache = self._newest_elsewhere()
                manifest, read = self.scanner.scan(writer, self._cache, self._extra, self._cache_elsewhere)
            self._count(writer.written)
        except OSError as exc:
            self._fail(exc)
            return None
        self.last = Timing(time.perf_counter() - began, read)
        self._cache, self._cache_elsewhere = manifest, False
        return manifest

    def _count(self, added: int) -> None:
        """Keep the store under its cap while the session runs: older sessions go first; when that
        is not enough, new contents are no longer kept (recorded, not restorable), said once."""
        if self._used is None:
            self._used = self.store.size()
        self._used += added
        if self._used <= self.most_store_bytes or self.scanner.most_bytes == 0:
            return
        self.store.collect(self.most_store_bytes, keep=self.session)
        self._used = self.store.size()
        if self._used > self.most_store_bytes:
            self.scanner.most_bytes = 0
            self.notes.append(
                f"rewind: the checkpoint store of this workspace is full ({self._used >> 20} MB; rewind.max_storage_mb "
                f"is {self.most_store_bytes >> 20}): from now on changed files are recorded but their contents are not "
                "kept, so a rewind cannot restore them"
            )

    def _write(self, record: dict[str, Any], manifest: Manifest) -> None:
        if self._written:
            record.update(delta(self._running, manifest))
        else:
            record["full"] = {rel: e.to_json() for rel, e in manifest.items()}
        try:
            written = self.store.append(self.session, record)
        except OSError as exc:
            self._fail(exc)
            return
        if self._used is not None:
            self._used += written  # journals count toward the cap too
        self._written = True
        self._running = manifest

    def _fail(self, exc: OSError) -> None:
        self.problem = f"checkpoints are off for this session: {exc.strerror or exc} ({self.store.root})"


def first_line(text: str, most: int = 80) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= most else line[: most - 1] + "…"


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
