"""Workspace files arnes itself reads and writes on the host: AGENTS.md and PROGRESS.md for the
prompt, features.json, traces, team files and timelines, eval task files.

These never pass the permission gate, so this is where the gate's two promises are kept for
them: no link is followed out of the workspace (a repository may ship `PROGRESS.md -> ~/.bashrc`
or `.arnes/traces -> /somewhere`), and nothing the session's rules keep from the model's Read
(`Read(**/.env*)`, an ask rule) reaches the provider by this other road. A link that stays
inside is followed (CLAUDE.md -> AGENTS.md is common), then the real path is opened through no
link, so a swap after the check fails instead of landing elsewhere. arnes's own logs (traces,
timelines) are stricter: no link at all on their way.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from arnes.host.atomic import atomic_write
from arnes.host.nofollow import LinkRefused, NotRegularFile, open_folder, read_regular
from arnes.host.paths import is_inside, resolve_real


class Refused(OSError):
    """A host-side file arnes will not touch; the message says which and why, for a person."""


class Rules(Protocol):
    """What HostFiles asks of the session's rules (RuleEngine has both)."""

    def hidden(self, tool: str, path: Path) -> bool: ...
    def write_covered(self, path: Path) -> bool: ...


@dataclass(frozen=True)
class HostFiles:
    root: Path  # the workspace (made real on creation)
    rules: Rules | None = None  # None: only the perimeter and links are checked

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", resolve_real(Path(os.path.abspath(self.root))))

    def _judged(self, rel: str) -> tuple[Path, Path]:
        path = self.root / rel
        real = resolve_real(path)
        if not is_inside(self.root, real):
            raise Refused(errno.EXDEV, f"{rel} is a link out of the workspace (to {real}); arnes does not follow it")
        return path, real

    def read(self, rel: str, limit: int | None = None) -> bytes | None:
        """The file's bytes; None when there is none. Refused: a link out, a rule, not a file."""
        found = self.read_stat(rel, limit)
        return None if found is None else found[0]

    def read_stat(self, rel: str, limit: int | None = None) -> tuple[bytes, os.stat_result] | None:
        """`read`, with the stat of the very file the bytes came from (for a read-before-edit snapshot)."""
        path, real = self._judged(rel)
        if self.rules is not None and self.rules.hidden("Read", path):
            raise Refused(errno.EACCES, f"{rel} is covered by a deny or ask rule for Read, so arnes does not read it")
        try:
            return read_regular(real, limit)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except NotRegularFile as exc:
            raise Refused(errno.EINVAL, f"{rel} is not a regular file (a pipe, socket or device)") from exc
        except LinkRefused as exc:
            raise Refused(exc.errno, f"{rel} changed while arnes read it (a link appeared)") from exc

    def read_text(self, rel: str, limit: int | None = None) -> str | None:
        data = self.read(rel, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def is_file(self, rel: str) -> bool:
        """A regular file inside the workspace (by real path); links out count as absent."""
        try:
            _, real = self._judged(rel)
            return stat.S_ISREG(os.lstat(real).st_mode)
        except OSError:
            return False

    def write(self, rel: str, data: bytes, *, judged: bool = True) -> None:
        """Write atomically on the real path inside; `judged`: a deny or ask Edit rule refuses."""
        path, real = self._judged(rel)
        if judged and self.rules is not None and self.rules.write_covered(path):
            raise Refused(errno.EACCES, f"{rel} is covered by a deny or ask rule for Edit, so arnes does not write it")
        try:
            atomic_write(path, data, real=real)
        except LinkRefused as exc:
            raise Refused(exc.errno, f"{rel} changed while arnes wrote it (a link appeared)") from exc

    def remove(self, rel: str) -> None:
        """Unlink the file (or link) named `rel`, inside a folder reached through no link."""
        path = self.root / rel
        try:
            folder = open_folder(path.parent, start=self.root)
        except FileNotFoundError:
            return
        except LinkRefused as exc:
            raise Refused(exc.errno, f"{rel} is behind a link; arnes does not remove through it") from exc
        try:
            os.unlink(path.name, dir_fd=folder)
        except FileNotFoundError:
            pass
        finally:
            os.close(folder)

    def append(self, rel: str) -> IO[str]:
        """arnes's own log at `rel`, opened to append (created, with its folders), through no link."""
        path = self.root / rel
        try:
            folder = open_folder(path.parent, create=True, start=self.root)
            try:
                fd = os.open(path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o666, dir_fd=folder)  # fmt: skip
            finally:
                os.close(folder)
        except OSError as exc:
            if isinstance(exc, LinkRefused) or exc.errno in (errno.ELOOP, errno.ENOTDIR):
                why = f"{rel}: a link stands on its way; arnes writes its logs only into real folders"
                raise Refused(errno.ELOOP, why) from exc
            raise
        return os.fdopen(fd, "a", encoding="utf-8")

    def entries(self, folder: str, suffix: str) -> list[tuple[str, os.stat_result]]:
        """Regular files (not links) in `folder` whose names end with `suffix`, with their stat."""
        try:
            fd = open_folder(self.root / folder, start=self.root)
        except OSError:
            return []
        try:
            out = []
            for name in os.listdir(fd):
                if not name.endswith(suffix):
                    continue
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((name, st))
            return sorted(out)
        finally:
            os.close(fd)


def open_log(path: Path, root: Path) -> IO[str] | None:
    """A log file arnes chose under `root`, opened through no link; None for a path elsewhere
    (one the user gave, which the caller opens as usual)."""
    absolute = Path(os.path.abspath(path))
    for base in (Path(os.path.abspath(root)), resolve_real(root)):
        if is_inside(base, absolute) and absolute != base:
            return HostFiles(root).append(str(absolute.relative_to(base)))
    return None
