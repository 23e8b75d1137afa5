"""Landlock, where user namespaces (and so bubblewrap) are unavailable: the kernel refuses writes
outside the workspace and /tmp, and the seccomp filter refuses setuid bits and (network off) Unix
sockets. Weaker than bubblewrap, and it says so: it cannot hide files or the home folder, keep
.git/hooks read-only inside a writable workspace, or turn the network off."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

from arnes.sandbox.base import Confined, PerCommand, SandboxSpec
from arnes.sandbox.env import command_env


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

    def wrap(self, argv: list[str], cwd: Path) -> Confined:
        # A fresh interpreter applies the ruleset to itself and then becomes the command, so no
        # preexec_fn runs in a threaded parent.
        writable = "" if self.spec.read_only_workspace else str(self.spec.workspace)
        unix = ["--unix"] if self.spec.network else []
        helper = [sys.executable, "-m", "arnes.sandbox.landlock_exec", writable, *unix, "--", *argv]
        return Confined(helper, dict(self._env))

    def describe(self) -> str:
        return (
            "landlock: writes only in the workspace and /tmp, no setuid bits, no Unix sockets unless the network "
            "is on, secrets not in env; NOT given: denied files and the home folder are readable (~/.ssh too), "
            ".git is writable, the network is not restricted; so commands still ask as without a sandbox"
        )
