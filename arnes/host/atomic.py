"""Atomic writes on the real path that was judged: below tools/ and host/files.py, which both write."""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from pathlib import Path

from arnes.host.nofollow import LinkRefused, open_folder


def atomic_write(path: Path, data: bytes, real: Path | None = None, mode: int | None = None) -> None:
    """Write via a temporary file and rename: readers see the old file or the new, never half.

    The bytes land on `real` (the real path the permission decision was made on; by default the
    real path now). Every folder on the way is opened without following links, so a link swapped
    in after the decision makes the write fail instead of landing elsewhere. A link at the file
    itself is replaced by the file, inside the folder that was judged. The file's mode is kept
    (or set to `mode`); new files get the default mode under the umask. Ctrl-C mid-write leaves no temporary behind.
    """
    target = real or Path(os.path.realpath(path))
    wanted = mode
    folder = _open_folder(target.parent)
    try:
        try:
            st = os.stat(target.name, dir_fd=folder, follow_symlinks=False)
            mode = st.st_mode & 0o7777 if stat.S_ISREG(st.st_mode) else _default_mode()
        except FileNotFoundError:
            mode = _default_mode()
        if wanted is not None:
            mode = wanted
        tmp = f".{target.name}.arnes-{uuid.uuid4().hex[:8]}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
            os.replace(tmp, target.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def _open_folder(folder: Path) -> int:
    """Open `folder` component by component, never through a link; create what is missing."""
    try:
        return open_folder(folder, create=True)
    except LinkRefused as exc:
        raise LinkRefused(exc.errno, f"{folder} changed while writing (a link appeared); read it again") from exc


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
