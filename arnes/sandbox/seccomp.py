"""A seccomp filter for bubblewrap's `--seccomp FD`, built as classic BPF in pure Python.

What it refuses, for every process in the sandbox:
- `socket(AF_UNIX, ...)` when the network is off: a host Unix socket (docker, ssh-agent, D-Bus, a
  database) can sit in any folder a host process writes, and a read-only mount does not stop
  `connect()` on a socket file, so hiding folders cannot be complete. `socketpair()` stays (it
  reaches nothing; asyncio and libuv need it), as do sockets of other families (the network
  namespace has no interface but loopback), except:
- `socket(AF_VSOCK, ...)`, always: vsock talks to the hypervisor and the other VMs of the host,
  and no network namespace holds it back (`--unshare-net` leaves it open; a sandbox reached the
  host's CID 2). The user's `network: true` means the network, not the machine underneath.
- setting the setuid or setgid bit (chmod, fchmod, fchmodat, fchmodat2, and the mode of open,
  creat, mkdir and mknod): a command must not leave a setuid file in the workspace for the host.
- io_uring (it can create sockets past the filter) and openat2 (its mode sits behind a pointer):
  ENOSYS, so programs fall back to the plain calls.
- the kernel keyring (add_key, request_key, keyctl): ENOSYS. Keyrings are not namespaced by a
  mount or PID namespace: run as root (a container, CI) without a user namespace, a command would
  read and write the keys of the host's root (`@u`, the session keyring it inherited).
- any other architecture's system calls (x86's 32-bit `int 0x80` has socketcall) and the x32
  ABI: the process is killed.

Why not libseccomp: its Python bindings are a Cython module tied to Debian's system Python, and
`pyseccomp` (ctypes) has not been released since 2021; both need libseccomp.so at run time. The
filter here is about fifty instructions over two architectures' syscall numbers (checked against
libseccomp's tables by a test where the library exists).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

AF_UNIX = 1
AF_VSOCK = 40
SETID_BITS = 0o6000

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO, _KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class Arch:
    audit: int
    syscalls: dict[str, int]
    x32: bool = False


# Which argument holds the mode, per call; calls missing from an architecture are left out.
_MODE_ARG = {
    "chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2, "open": 2, "openat": 3, "creat": 1,
    "mkdir": 1, "mkdirat": 2, "mknod": 1, "mknodat": 2,
}  # fmt: skip
_NOSYS = ("io_uring_setup", "io_uring_enter", "io_uring_register", "openat2", "add_key", "request_key", "keyctl")
_X86_64 = {
    "socket": 41, "open": 2, "creat": 85, "mkdir": 83, "mknod": 133, "chmod": 90, "fchmod": 91, "openat": 257,
    "mkdirat": 258, "mknodat": 259, "fchmodat": 268, "fchmodat2": 452, "openat2": 437, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "add_key": 248, "request_key": 249, "keyctl": 250,
}  # fmt: skip
_AARCH64 = {
    "socket": 198, "openat": 56, "mkdirat": 34, "mknodat": 33, "fchmod": 52, "fchmodat": 53, "fchmodat2": 452,
    "openat2": 437, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "add_key": 217,
    "request_key": 218, "keyctl": 219,
}  # fmt: skip
ARCHES = {"x86_64": Arch(0xC000003E, _X86_64, x32=True), "aarch64": Arch(0xC00000B7, _AARCH64)}
ARCHES["arm64"] = ARCHES["aarch64"]
ARCHES["amd64"] = ARCHES["x86_64"]


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument `index` in struct seccomp_data (little-endian)."""
    return 16 + 8 * index


class _Program:
    """Instructions with symbolic jump targets, resolved to BPF's relative offsets at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for at, (code, jt, jf, k) in enumerate(self.code):
            jumps = []
            for target in (jt, jf):
                offset = self.labels[target] - at - 1 if isinstance(target, str) else target
                if not 0 <= offset <= 255:
                    raise ValueError(f"seccomp jump out of range at {at}")
                jumps.append(offset)
            out += struct.pack("=HBBI", code, jumps[0], jumps[1], k)
        return bytes(out)


def program(*, block_unix_sockets: bool, machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, or None where its syscall numbers are unknown."""
    arch = ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    p = _Program()
    p.op(_LD_W_ABS, 4)  # arch
    p.op(_JEQ, arch.audit, 0, "kill")
    p.op(_LD_W_ABS, 0)  # syscall number
    if arch.x32:
        p.op(_JGE, _X32_BIT, "kill", 0)
    checks: list[tuple[str, str]] = []
    p.op(_JEQ, arch.syscalls["socket"], "socket", 0)
    for name, index in _MODE_ARG.items():
        if name in arch.syscalls:
            p.op(_JEQ, arch.syscalls[name], f"mode{index}", 0)
            checks.append((name, f"mode{index}"))
    for name in _NOSYS:
        p.op(_JEQ, arch.syscalls[name], "nosys", 0)
    p.op(_RET, _ALLOW)
    for index in sorted({int(label[4:]) for _, label in checks}):
        p.label(f"mode{index}")
        p.op(_LD_W_ABS, _arg_low(index))
        p.op(_JSET, SETID_BITS, "eperm", "allow")
    p.label("socket")
    p.op(_LD_W_ABS, _arg_low(0))
    p.op(_JEQ, AF_VSOCK, "eperm", 0)
    p.op(_JEQ, AF_UNIX, "eperm" if block_unix_sockets else "allow", "allow")
    p.label("allow")
    p.op(_RET, _ALLOW)
    p.label("eperm")
    p.op(_RET, _ERRNO | errno.EPERM)
    p.label("nosys")
    p.op(_RET, _ERRNO | errno.ENOSYS)
    p.label("kill")
    p.op(_RET, _KILL_PROCESS)
    return p.assemble()
