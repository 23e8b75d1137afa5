"""Landlock, where user namespaces (and so bubblewrap) are unavailable: the kernel refuses writes
outside the workspace and /tmp. Weaker than bubblewrap, and it says so: it cannot hide files,
keep .git/hooks read-only inside a writable workspace, or turn the network off."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from arnes.sandbox.base import SandboxSpec


class LandlockSandbox:
    name = "landlock"

    def __init__(self, spec: SandboxSpec):
        self.spec = spec

    @staticmethod
    @cache
    def unavailable() -> str | None:
        try:
            import landlock

            if landlock.landlock_abi_version() < 1:
                return "the kernel has no Landlock"
        except Exception as exc:
            return f"Landlock is not usable: {exc}"
        return None

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        # A fresh interpreter applies the ruleset to itself and then becomes the command, so no
        # preexec_fn runs in a threaded parent.
        writable = "" if self.spec.read_only_workspace else str(self.spec.workspace)
        return [sys.executable, "-m", "arnes.sandbox.landlock_exec", writable, "--", *argv]

    def settle(self) -> None:
        return None

    def describe(self) -> str:
        return (
            "landlock: writes only in the workspace and /tmp (files are not hidden, .git is writable, network "
            "not restricted; commands still ask as without a sandbox)"
        )
