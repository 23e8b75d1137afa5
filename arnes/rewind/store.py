"""Where checkpoints live: file contents in packs, one journal per session, in the user's state folder.

`$XDG_STATE_HOME/arnes/checkpoints/<key>/`, the key a hash of the workspace's real path: outside
every workspace, so a repository can neither plant a checkpoint nor change one. Contents are
stored once per workspace (by SHA-256), zlib-compressed when that helps, many to a pack file:
one file per checkpoint instead of one per content keeps the first checkpoint of a big tree near
`git add -A` (bench/rewind). A storage cap drops the oldest sessions first, then the packs no
remaining session needs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import struct
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arnes.host.paths import resolve_real
from arnes.nesting import json_loads
from arnes.permissions.protected import user_state_dir

_IDX = struct.Struct(">32sQQ?")  # sha256, offset, stored length, stored raw (not compressed)
SESSION_FILE = ".jsonl"
ACTIVE_SECONDS = 3600  # a session that wrote its journal this recently may still be running: never dropped


@dataclass(frozen=True)
class Location:
    pack: str
    offset: int
    length: int
    raw: bool


def store_for(workspace: Path, env: dict[str, str] | None = None) -> Store:
    """The checkpoint store of this workspace (by its real path)."""
    real = str(resolve_real(workspace))
    key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Store(user_state_dir(env) / "checkpoints" / key, real)


class Store:
    def __init__(self, root: Path, workspace: str = ""):
        self.root = root
        self.workspace = workspace
        self._index: dict[bytes, Location] | None = None

    # -- layout ------------------------------------------------------------------------------
    @property
    def packs(self) -> Path:
        return self.root / "packs"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    def ensure(self) -> None:
        for folder in (self.root, self.packs, self.sessions_dir):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker = self.root / "workspace"
        if self.workspace and not marker.exists():
            marker.write_text(self.workspace + "\n", encoding="utf-8", errors="surrogateescape")

    @contextlib.contextmanager
    def locked(self, exclusive: bool = False) -> Iterator[None]:
        """Writers share the lock; the collector takes it alone (no pack vanishes under a writer)."""
        self.ensure()
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    # -- contents ----------------------------------------------------------------------------
    def index(self) -> dict[bytes, Location]:
        if self._index is None:
            self._index = {}
            with contextlib.suppress(FileNotFoundError):
                for name in os.listdir(self.packs):
                    if name.endswith(".idx"):
                        self._read_idx(name[: -len(".idx")])
        return self._index

    def _read_idx(self, pack: str) -> None:
        assert self._index is not None
        try:
            data = (self.packs / f"{pack}.idx").read_bytes()
        except OSError:
            return
        usable = len(data) - len(data) % _IDX.size
        for sha, offset, length, raw in _IDX.iter_unpack(data[:usable]):
            self._index.setdefault(sha, Location(pack, offset, length, raw))

    def has(self, sha: str) -> bool:
        return bytes.fromhex(sha) in self.index()

    def get(self, sha: str) -> bytes:
        """A content by its hash; KeyError when the store no longer has it."""
        loc = self.index()[bytes.fromhex(sha)]
        with open(self.packs / f"{loc.pack}.pack", "rb") as handle:
            handle.seek(loc.offset)
            stored = handle.read(loc.length)
        data = stored if loc.raw else zlib.decompress(stored)
        if hashlib.sha256(data).hexdigest() != sha:
            raise KeyError(sha)  # a damaged pack: never restore the wrong bytes
        return data

    def writer(self) -> PackWriter:
        return PackWriter(self)

    # -- journals ----------------------------------------------------------------------------
    def journal(self, session: str) -> Path:
        return self.sessions_dir / f"{session.replace('/', '_')}{SESSION_FILE}"

    def append(self, session: str, record: dict[str, Any]) -> int:
        """Add one line to the session's journal; the bytes it took."""
        self.ensure()
        line = (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        fd = os.open(self.journal(session), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        return len(line)

    def read(self, session: str) -> list[dict[str, Any]]:
        """The journal's records; a line cut by a crash ends it."""
        try:
            text = self.journal(session).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        for line in text.split("\n"):
            if not line:
                continue
            try:
                record = json_loads(line)
            except ValueError:
                break
            if isinstance(record, dict):
                records.append(record)
        return records

    def sessions(self) -> list[str]:
        """The sessions with a journal here, the newest last."""
        try:
            entries = list(os.scandir(self.sessions_dir))
        except FileNotFoundError:
            return []
        journals = [e for e in entries if e.name.endswith(SESSION_FILE)]
        journals.sort(key=lambda e: e.stat().st_mtime_ns)
        return [e.name[: -len(SESSION_FILE)] for e in journals]

    # -- the cap -----------------------------------------------------------------------------
    def size(self) -> int:
        total = 0
        for folder in (self.packs, self.sessions_dir):
            with contextlib.suppress(FileNotFoundError):
                total += sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())
        return total

    def collect(self, most_bytes: int, keep: str) -> list[str]:
        """Under the cap again: drop the oldest sessions (never `keep`), then what nobody needs."""
        dropped: list[str] = []
        if self.size() <= most_bytes:
            return dropped
        with self.locked(exclusive=True):
            recent = time.time() - ACTIVE_SECONDS
            for session in self.sessions():
                if self.size() <= most_bytes:
                    break
                if session == keep.replace("/", "_") or self._touched(session) > recent:
                    continue  # this one, or one that may still be running in another arnes
                self.journal(session).unlink(missing_ok=True)
                dropped.append(session)
                self._sweep()
        return dropped

    def _touched(self, session: str) -> float:
        try:
            return self.journal(session).stat().st_mtime
        except FileNotFoundError:
            return 0.0

    def _sweep(self) -> None:
        """Delete packs no journal needs; repack those mostly dead."""
        live: set[bytes] = set()
        for session in self.sessions():
            for record in self.read(session):
                for entry in _entries_of(record):
                    if entry[0] == "f" and len(entry) > 5 and entry[5]:
                        with contextlib.suppress(ValueError):
                            live.add(bytes.fromhex(entry[5]))
        by_pack: dict[str, list[tuple[bytes, Location]]] = {}
        for sha, loc in self.index().items():
            by_pack.setdefault(loc.pack, []).append((sha, loc))
        for pack, items in by_pack.items():
            wanted = [(sha, loc) for sha, loc in items if sha in live]
            if len(wanted) == len(items):
                continue
            if wanted and sum(loc.length for _, loc in wanted) * 2 > sum(loc.length for _, loc in items):
                continue  # mostly alive: not worth a rewrite yet
            if wanted:
                with self.writer() as out:
                    for sha, _ in wanted:
                        out.add(sha.hex(), self.get(sha.hex()))
            for suffix in (".idx", ".pack"):
                (self.packs / f"{pack}{suffix}").unlink(missing_ok=True)
            self._index = None


def _entries_of(record: dict[str, Any]) -> Iterator[list[Any]]:
    for key in ("files", "set"):
        value = record.get(key)
        if isinstance(value, dict):
            yield from (v for v in value.values() if isinstance(v, list))


class PackWriter:
    """New contents of one checkpoint, appended to one pack; its index is written on close, so a
    pack without an index (a crash) is never read."""

    def __init__(self, store: Store):
        self.store = store
        self.name = uuid.uuid4().hex
        self._handle: IO[bytes] | None = None
        self._offset = 0
        self._written: list[tuple[bytes, int, int, bool]] = []
        self._pending: set[bytes] = set()

    def __enter__(self) -> PackWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(keep=exc[0] is None)

    @property
    def written(self) -> int:
        """Bytes this writer added to the store."""
        return self._offset

    def wants(self, sha: str) -> bool:
        digest = bytes.fromhex(sha)
        return digest not in self._pending and digest not in self.store.index()

    def add(self, sha: str, data: bytes, packed: bytes | None = None) -> None:
        """Store `data` under its hash (`packed`: its compressed form, made in a worker thread)."""
        if not self.wants(sha):
            return
        stored = packed if packed is not None else compress(data)
        raw = stored is data or len(stored) >= len(data)
        if raw:
            stored = data
        if self._handle is None:
            self.store.ensure()
            self._handle = open(self.store.packs / f"{self.name}.pack", "xb")  # noqa: SIM115  (closed in close())
        self._handle.write(stored)
        self._written.append((bytes.fromhex(sha), self._offset, len(stored), raw))
        self._pending.add(bytes.fromhex(sha))
        self._offset += len(stored)

    def close(self, keep: bool = True) -> None:
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        pack = self.store.packs / f"{self.name}.pack"
        if not keep:
            handle.close()
            pack.unlink(missing_ok=True)
            return
        handle.flush()
        os.fsync(handle.fileno())
        handle.close()
        idx = b"".join(_IDX.pack(*row) for row in self._written)
        tmp = self.store.packs / f".{self.name}.idx.tmp"
        tmp.write_bytes(idx)
        os.replace(tmp, self.store.packs / f"{self.name}.idx")
        index = self.store.index()
        for sha, offset, length, raw in self._written:
            index.setdefault(sha, Location(self.name, offset, length, raw))


def compress(data: bytes) -> bytes:
    """zlib at its fastest level: source text shrinks 3-4x at ~150 MB/s; returns `data` itself
    when compressing would not pay (already compressed, tiny)."""
    if len(data) < 64:
        return data
    packed = zlib.compress(data, 1)
    return packed if len(packed) < len(data) else data
