"""`main([WORKSPACE, [--unix], --, CMD...])`: restrict this process, then exec CMD (started by
sandbox/landlock.py as an isolated interpreter, never with `-m` in the workspace).

An empty WORKSPACE means a read-only agent: nothing but /tmp and /dev is writable. The same
seccomp filter as bubblewrap's is applied (no setuid bits; no Unix sockets unless `--unix`).
Variables for CMD alone (an MCP server's `env`) come as JSON in ARNES_LANDLOCK_ENV and are set
only once the rules hold.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

from arnes.sandbox import seccomp

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
ENV_VARIABLE = "ARNES_LANDLOCK_ENV"


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def apply_seccomp(block_unix_sockets: bool) -> bool:
    """Install the filter on this process (inherited by what it execs); False where unsupported."""
    program = seccomp.program(block_unix_sockets=block_unix_sockets)
    if program is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0)


def main(argv: list[str]) -> None:
    import ctypes

    import landlock

    ctypes.set_errno(0)  # see LandlockSandbox.unavailable: a stale errno reads as a failure
    workspace, rest = argv[0], argv[argv.index("--") + 1 :]
    allow_unix = "--unix" in argv[1 : argv.index("--")]
    access = landlock.FSAccess
    read = access.READ_FILE | access.READ_DIR | access.EXECUTE
    ruleset = landlock.Ruleset()
    ruleset.allow("/", rules=read)
    writable = [p for p in (workspace, "/tmp", "/dev") if p]
    ruleset.allow(*[p for p in writable if os.path.exists(p)], rules=access.all())
    ruleset.apply()
    apply_seccomp(block_unix_sockets=not allow_unix)
    env = dict(os.environ)
    extra = json.loads(env.pop(ENV_VARIABLE, "{}"))
    os.execvpe(rest[0], rest, {**env, **{str(k): str(v) for k, v in extra.items()}})


if __name__ == "__main__":
    main(sys.argv[1:])
