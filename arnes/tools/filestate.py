"""Read-before-edit snapshots, the session's log of writes, and atomic writes."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from arnes.host.nofollow import read_regular
from arnes.tools.treewatch import Report, TreeWatch


@dataclass(frozen=True)
class Snapshot:
    size: int
    mtime_ns: int
    sha256: str


def snapshot(path: Path) -> Snapshot:
    """What a file held when it was read or written (OSError for what is no regular file now)."""
    data, st = read_regular(Path(os.path.realpath(path)))
    return Snapshot(st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())


@dataclass
class FileStateCache:
    """What the model has seen: a write over a file needs a Read of it, unchanged since.

    Keyed by real path, so a link and its target share one snapshot. This guards against editing
    blind or over someone else's change (a formatter, the user); it says nothing of what is written.
    """

    _snaps: dict[Path, Snapshot] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # The call a refusal for a missing Read answered with the file's content: made again unchanged,
    # it gets a pointed message (small models repeat it word for word).
    _refused: dict[Path, str] = field(default_factory=dict)
    _warned: set[tuple[Path, str]] = field(default_factory=set)
    # The last Write held back for what it held (not JSON, dropping the file's names): a reply
    # that then shows the content in the chat is answered with that Write spelled out.
    _held: Path | None = None
    _edits: dict[Path, tuple[str, str]] = field(default_factory=dict)  # the last Edit of each file

    def note_edit(self, path: Path, old: str, new: str) -> None:
        """The last Edit made to this file (what it replaced, and with what)."""
        with self._lock:
            self._edits[Path(os.path.realpath(path))] = (old, new)

    def last_edit(self, path: Path) -> tuple[str, str] | None:
        with self._lock:
            return self._edits.get(Path(os.path.realpath(path)))

    def hold_write(self, path: Path | None) -> None:
        with self._lock:
            self._held = path

    def held_write(self) -> Path | None:
        with self._lock:
            return self._held

    def note_refused(self, path: Path, call: str) -> None:
        with self._lock:
            self._refused[Path(os.path.realpath(path))] = call

    def warn_once(self, path: Path, what: str) -> bool:
        """True the first time `what` is said about this file in the session: a warning, not a wall."""
        key = Path(os.path.realpath(path))
        with self._lock:
            if (key, what) in self._warned:
                return False
            self._warned.add((key, what))
            return True

    def fresh(self, path: Path, what: str) -> bool:
        """Whether `what` has not been said about this file yet (warn_once, without saying it)."""
        with self._lock:
            return (Path(os.path.realpath(path)), what) not in self._warned

    def was_refused(self, path: Path, call: str) -> bool:
        with self._lock:
            return self._refused.get(Path(os.path.realpath(path))) == call

    def seen(self) -> list[Path]:
        """The real paths read or written in this session, the latest last."""
        with self._lock:
            return list(self._snaps)

    def record(self, path: Path) -> None:
        snap = snapshot(path)
        with self._lock:
            self._snaps[Path(os.path.realpath(path))] = snap

    def record_read(self, real: Path, data: bytes, st: os.stat_result) -> None:
        """What a Read returned, from the bytes it returned: no second open that could differ."""
        snap = Snapshot(st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())
        with self._lock:
            self._snaps[real] = snap

    def check_writable(self, path: Path, shown: str) -> str | None:
        """None when the write may go ahead; otherwise the message for the model."""
        problem = self.unwritable(path)
        if problem == "unread":
            return f"File has not been read yet. Read {shown} before modifying it."
        if problem == "modified":
            return f"File {shown} was modified since it was last read. Read it again before modifying it."
        return None

    def unwritable(self, path: Path) -> Literal["unread", "modified"] | None:
        """Why a write may not go ahead yet: never read, or changed since the read; None: it may."""
        with self._lock:
            snap = self._snaps.get(Path(os.path.realpath(path)))
        if snap is None:
            return "unread"
        if not path.exists():
            return None  # deleted since the read: recreating it is fine
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size != snap.size or st.st_mtime_ns != snap.mtime_ns:
            return "modified"  # a FIFO put in its place is no longer the file that was read (and would hang a read)
        try:
            data = read_regular(Path(os.path.realpath(path)))[0]
        except (OSError, ValueError):
            return "modified"
        if hashlib.sha256(data).hexdigest() != snap.sha256:
            return "modified"
        return None


@dataclass
class ChangeLog:
    """The content each file had before the session first wrote it: for the summary and the diff.

    Taking changes back is rewind's (arnes/rewind/): `on_write` tells it a file tool is about to
    write, so a file no checkpoint scan covers is kept first."""

    originals: dict[Path, bytes | None] = field(default_factory=dict)
    this_turn: set[Path] = field(default_factory=set)  # what the file tools wrote since the user's message
    # What shell commands changed (set by the session; None: commands are not watched).
    tree: TreeWatch | None = None
    on_write: Callable[[Path], None] | None = None

    def before_command(self) -> None:
        if self.tree is not None:
            self.tree.before_command()

    def shell_report(self) -> Report:
        return self.tree.report() if self.tree is not None else Report()

    def new_turn(self) -> None:
        self.this_turn = set()

    def before_write(self, path: Path, real: Path | None = None) -> None:
        real = real or Path(os.path.realpath(path))
        if self.on_write is not None:
            self.on_write(real)
        if real not in self.originals:
            self.originals[real] = _content(real)
        self.this_turn.add(real)

    def changed(self) -> list[Path]:
        """Files the file tools changed, then files shell commands changed that are worth naming."""
        out = [path for path, before in self.originals.items() if _differs(path, before)]
        if self.tree is not None:
            seen = set(out) | set(self.originals)
            out += [p for p in (self.tree.workspace / rel for rel in self.shell_report().named) if p not in seen]
        return out


def _differs(real: Path, before: bytes | None) -> bool:
    """Whether the file at `real` no longer holds `before`, reading at most one byte more than it:
    a test run that grows the file to 8 GiB (a sparse truncate) must not be read into memory."""
    try:
        after = read_regular(real, limit=0 if before is None else len(before) + 1)[0]
    except OSError:
        return before is not None
    return before is None or after != before


def _content(real: Path) -> bytes | None:
    """A file's bytes read through no link; None when it is gone (or a link or folder took its place)."""
    try:
        return read_regular(real)[0]
    except OSError:
        return None


def newline_of(text: str) -> str:
    """The file's dominant line ending, so an edit keeps it."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
