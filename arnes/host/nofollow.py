"""Open a path without following any link on the way: what was judged is what is opened.

A decision is made on a real path (no link in it). Opening it again by name would follow a link
swapped in since; these primitives refuse instead. On Linux 5.6+ one `openat2` with
RESOLVE_NO_SYMLINKS does it in a single system call; elsewhere each component is opened with
O_NOFOLLOW from the folder before it. Either way a link anywhere on the path fails with ELOOP
(or ENOTDIR), which callers turn into "changed while reading".
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import stat
import sys
from functools import cache
from pathlib import Path
from typing import Any

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
# openat2 has the same number on every architecture of the unified syscall table.
_SYS_OPENAT2 = 437
_AT_FDCWD = -100
_ARCHES = frozenset({"x86_64", "amd64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x", "loongarch64"})
# ENOTDIR: O_NOFOLLOW|O_DIRECTORY on a link; EXDEV: RESOLVE_BENEATH refused a way out.
LINK_ERRORS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EXDEV})


class LinkRefused(OSError):
    """A link (or a non-folder) where the judged path had a real folder or file."""


@cache
def _openat2() -> Any | None:
    """The openat2 entry point and its struct, or None where the kernel or libc lacks it."""
    if sys.platform != "linux" or platform.machine().lower() not in _ARCHES:
        return None
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    probe = OpenHow(os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0, _RESOLVE_NO_SYMLINKS)
    fd = syscall(_SYS_OPENAT2, _AT_FDCWD, b"/", ctypes.byref(probe), ctypes.sizeof(probe))
    if fd < 0:
        return None  # ENOSYS (old kernel) or a seccomp filter: walk instead
    os.close(fd)
    return ctypes, syscall, OpenHow


def open_beneath(dirfd: int, relative: str, flags: int, mode: int = 0o666) -> int:
    """Open `relative` below the folder `dirfd`, through no link and never above it."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise LinkRefused(errno.EXDEV, f"{relative!r} is not a path below the folder")
    flags |= os.O_CLOEXEC | os.O_NOFOLLOW
    fd = _fast_open(dirfd, "/".join(parts), flags, mode, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS, relative)
    if fd is not None:
        return fd
    current = dirfd
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            except OSError as exc:
                raise _error(exc.errno or errno.EIO, relative) from exc
            if current != dirfd:
                os.close(current)
            current = child
        try:
            return os.open(parts[-1], flags, mode, dir_fd=current)
        except OSError as exc:
            raise _error(exc.errno or errno.EIO, relative) from exc
    finally:
        if current != dirfd:
            os.close(current)


def _fast_open(dirfd: int, path: str, flags: int, mode: int, resolve: int, shown: str) -> int | None:
    """openat2, or None where it is missing (or interrupted): the caller walks instead."""
    fast = _openat2()
    if fast is None:
        return None
    ctypes, syscall, how_type = fast
    how = how_type(flags, mode if flags & os.O_CREAT else 0, resolve | _RESOLVE_NO_MAGICLINKS)
    fd = int(syscall(_SYS_OPENAT2, dirfd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how)))
    if fd >= 0:
        return fd
    code = ctypes.get_errno()
    if code == errno.EINTR:
        return None
    raise _error(code, shown)


def open_real(real: Path, flags: int = os.O_RDONLY) -> int:
    """Open an absolute real path (one with no link in it) exactly, or fail."""
    if real.is_absolute():  # one system call where openat2 exists
        fd = _fast_open(_AT_FDCWD, str(real), flags | os.O_CLOEXEC | os.O_NOFOLLOW, 0, _RESOLVE_NO_SYMLINKS, str(real))
        if fd is not None:
            return fd
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if str(real) == "/":
            return os.dup(root)
        return open_beneath(root, str(real), flags)
    finally:
        os.close(root)


class NotRegularFile(OSError):
    """A pipe, socket or device under a name that should be a file."""


def read_regular(real: Path, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `real` (at most `limit`), opened through no link.

    O_NONBLOCK: a FIFO planted under the judged name must not hang the reader before the
    regular-file check refuses it.
    """
    fd = open_real(real, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(real))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a pipe, socket or device)", str(real))
        chunks: list[bytes] = []
        total = 0
        while limit is None or total < limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def open_folder(folder: Path, create: bool = False, start: Path = Path("/")) -> int:
    """A folder's fd, opened component by component below `start` through no link.

    With `create`, missing folders are made on the way (the write path of atomic writes,
    traces and timelines).
    """
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in folder.relative_to(start).parts:
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                child = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except OSError as exc:
                    raise _error(exc.errno or errno.EIO, str(folder)) from exc
            except OSError as exc:
                raise _error(exc.errno or errno.EIO, str(folder)) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _error(code: int, where: str) -> OSError:
    if code in LINK_ERRORS:
        return LinkRefused(code, f"{where} changed since it was judged: a link now stands on its way")
    if code == errno.ENOENT:
        return FileNotFoundError(code, os.strerror(code), where)
    return OSError(code, os.strerror(code), where)
