"""The Sandbox seam: wrap a command line so the OS, not the rules, holds the perimeter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from arnes.errors import ConfigError

SandboxMode = Literal["auto", "bubblewrap", "landlock", "off"]


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandboxed command may touch."""

    workspace: Path
    network: bool = False
    read_only: tuple[Path, ...] = ()  # inside the workspace, kept read-only (.git/hooks, .arnes, ...)
    read_only_workspace: bool = False  # read-only agents: the workspace itself is not writable
    # Called before each command: the files a Read deny or ask rule covers, to be made unreadable.
    hidden: Callable[[], list[Path]] = field(default=lambda: [])
    # Called before each command: files an Edit deny or ask rule covers, kept read-only.
    unwritable: Callable[[], list[Path]] = field(default=lambda: [])


class Sandbox(Protocol):
    @property
    def name(self) -> str: ...

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        """The command line that runs `argv` confined."""
        ...

    def describe(self) -> str:
        """One line for the start-up banner: what is enforced, and what is not."""
        ...

    def settle(self) -> None:
        """Called after each command: undo what wrapping it had to leave behind."""
        ...


class NoSandbox:
    name = "off"

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        return argv

    def describe(self) -> str:
        return "off: shell commands run unconfined and ask before running (unless read-only)"

    def settle(self) -> None:
        return None


def choose_sandbox(mode: SandboxMode, spec: SandboxSpec) -> Sandbox:
    """`auto` takes the first backend that works here; a named one must work or it is an error."""
    from arnes.sandbox.bubblewrap import Bubblewrap
    from arnes.sandbox.landlock import LandlockSandbox

    if mode == "off":
        return NoSandbox()
    backends: dict[str, tuple[Callable[[], str | None], Callable[[SandboxSpec], Sandbox]]] = {
        "bubblewrap": (Bubblewrap.unavailable, Bubblewrap),
        "landlock": (LandlockSandbox.unavailable, LandlockSandbox),
    }
    names = ["bubblewrap", "landlock"] if mode == "auto" else [mode]
    problems = []
    for name in names:
        unavailable, build = backends[name]
        problem = unavailable()
        if problem is None:
            return build(spec)
        problems.append(f"{name}: {problem}")
    if mode == "auto":
        return NoSandbox()
    raise ConfigError(f"--sandbox {mode} cannot run here ({'; '.join(problems)}); use --sandbox auto or off")
