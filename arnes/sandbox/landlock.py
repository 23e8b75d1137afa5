"""Landlock, where user namespaces (and so bubblewrap) are unavailable: the kernel refuses writes
outside the workspace and /tmp, and the seccomp filter refuses setuid bits and (network off) Unix
sockets. Weaker than bubblewrap, and it says so: it cannot hide files or the home folder, keep
.git/hooks read-only inside a writable workspace, or turn the network off."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from arnes.sandbox.base import Confined, PerCommand, SandboxSpec
from arnes.sandbox.env import command_env
from arnes.sandbox.landlock_exec import ENV_VARIABLE

# The helper's start: the folders that hold arnes and landlock first on sys.path, then its main.
_BOOT = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from arnes.sandbox.landlock_exec import main; main(sys.argv[2:])"
)


@cache
def _import_roots() -> list[str]:
    import landlock

    import arnes

    roots = [Path(arnes.__file__).resolve().parent.parent, Path(landlock.__file__).resolve().parent.parent]
    return list(dict.fromkeys(map(str, roots)))


class LandlockSandbox(PerCommand):  # a fresh interpreter per command applies the ruleset
    name = "landlock"

    def __init__(self, spec: SandboxSpec):
        self.spec = spec
        self._env = command_env(os.environ, spec.env_passthrough)

    @staticmethod
    @cache
    def unavailable() -> str | None:
        try:
            import ctypes

            import landlock

            # The library takes any non-zero errno as a failure, also one an earlier ctypes call of
            # this thread left behind (a refused openat2): clear it, or a working kernel reads as none.
            ctypes.set_errno(0)
            if landlock.landlock_abi_version() < 1:
                return "the kernel has no Landlock"
        except Exception as exc:
            return f"Landlock is not usable: {exc}"
        return None

    def wrap(
        self, argv: list[str], cwd: Path, env: Mapping[str, str] | None = None, *, lasting: bool = False
    ) -> Confined:
        # A fresh interpreter applies the ruleset to itself and then becomes the command, so no
        # preexec_fn runs in a threaded parent. It runs in the workspace before any rule holds:
        # isolated (-I), so neither the workspace (`-m` would put it first on sys.path: its own
        # `arnes/` would run here) nor PYTHON* variables choose what it imports; arnes's and
        # landlock's folders are named to it instead. The command's own variables (`env`) travel
        # as one JSON value the helper sets only once the rules hold.
        writable = "" if self.spec.read_only_workspace else str(self.spec.workspace)
        unix = ["--unix"] if self.spec.sockets else []
        helper = [sys.executable, "-I", "-c", _BOOT, json.dumps(_import_roots()), writable, *unix, "--", *argv]
        extra = {ENV_VARIABLE: json.dumps(dict(env))} if env else {}
        return Confined(helper, {**self._env, **extra})

    def describe(self) -> str:
        return (
            "landlock: writes only in the workspace and /tmp, no setuid bits, no Unix sockets unless the network "
            "is on, env allow-listed; NOT given: denied files and the home folder are readable (~/.ssh too), "
            ".git is writable, the network is not restricted; so commands still ask as without a sandbox"
        )
