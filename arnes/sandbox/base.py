"""The Sandbox seam: wrap a command line so the OS, not the rules, holds the perimeter."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Literal, Protocol

from arnes.sandbox.env import command_env

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
    # From the user's settings only: variables off the allow list (sandbox/env.py) that commands
    # see too, and folders under home that stay readable (sandbox.env_passthrough, sandbox.read_paths).
    env_passthrough: tuple[str, ...] = ()
    read_paths: tuple[Path, ...] = ()
    # A user's MCP package launcher's caches (mcp/launchers.py), set for such a server's sandbox
    # only: (arnes's own folder for this workspace on the host, where the launcher looks for its
    # cache inside: ~/.npm, ~/.cache/uv), bound read-write by bubblewrap. Never the user's own
    # cache: what a server the repository can reach writes there would run later on the host.
    writable: tuple[tuple[Path, Path], ...] = ()
    # Unix sockets (docker, D-Bus, agents) with the network: None follows `network`; False keeps
    # them out although the network is on (the network a launcher was given, not the user's).
    unix_sockets: bool | None = None

    @property
    def sockets(self) -> bool:
        return self.network if self.unix_sockets is None else self.unix_sockets


@dataclass
class Confined:
    """A command ready to start: its argv, its environment, and file descriptors it inherits
    (bubblewrap reads its seccomp filter from one). Close it once the process has started."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        fds, self.pass_fds = self.pass_fds, ()
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Confined:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class Started(Protocol):
    """A running command as the caller waits for it: its output pipes, its exit code, and a kill
    of everything it started (a process group, or the whole sandbox it runs in)."""

    @property
    def stdout(self) -> IO[bytes] | None: ...

    @property
    def stderr(self) -> IO[bytes] | None: ...

    @property
    def returncode(self) -> int | None: ...

    def wait(self) -> int: ...

    def kill_group(self) -> None: ...


class Sandbox(Protocol):
    @property
    def name(self) -> str: ...

    def wrap(
        self, argv: list[str], cwd: Path, env: Mapping[str, str] | None = None, *, lasting: bool = False
    ) -> Confined:
        """How to run `argv` confined (with secrets left out of its environment). `env`: variables
        for the command alone (an MCP server's own), set inside the sandbox, never for what
        starts it on the host; ValueError when they cannot be passed. `lasting`: the process
        may outlive the next settle() (a background command, a server)."""
        ...

    def describe(self) -> str:
        """One line for the start-up banner: what is enforced, and what is not."""
        ...

    def settle(self) -> None:
        """Called after each command: undo what wrapping it had to leave behind (not what a
        lasting process may still need: that goes at close())."""
        ...

    def start(self, argv: list[str], cwd: Path) -> Started | None:
        """Start a foreground command in a sandbox kept for the session, or None: use wrap()."""
        ...

    def notes(self) -> list[str]:
        """What changed in how commands run since the last call, to say once."""
        ...

    def standing(self) -> list[Path]:
        """Empty mount points in the workspace that stay while start()'s sandbox lives."""
        ...

    def close(self) -> None:
        """The session ends: stop what start() kept running."""
        ...


class PerCommand:
    """The session-level half of `Sandbox` for a sandbox that wraps each command on its own and
    keeps nothing between commands (no sandbox, Landlock): every hook is a no-op."""

    def settle(self) -> None:
        return None

    def start(self, argv: list[str], cwd: Path) -> Started | None:
        return None

    def notes(self) -> list[str]:
        return []

    def standing(self) -> list[Path]:
        return []

    def close(self) -> None:
        return None


class NoSandbox(PerCommand):
    name = "off"

    def __init__(self, spec: SandboxSpec | None = None):
        self._env = command_env(os.environ, spec.env_passthrough if spec else ())

    def wrap(
        self, argv: list[str], cwd: Path, env: Mapping[str, str] | None = None, *, lasting: bool = False
    ) -> Confined:
        return Confined(argv, {**self._env, **(env or {})})

    def describe(self) -> str:
        return (
            "off: shell commands run unconfined and ask before running (unless read-only): NOT given: they can "
            "read the home folder and denied files, reach host Unix sockets and the network, and setuid bits are "
            "only removed at the end of the session; their environment is still the allow list"
        )
