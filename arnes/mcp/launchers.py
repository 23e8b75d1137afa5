"""What a package launcher needs in the sandbox: `npx -y PKG`, `uvx PKG`, `uv tool run`, `pipx run`,
and tools `uv tool install` / `pipx install` put on PATH (~/.local/bin links into ~/.local/share).

The sandbox shows an empty home folder and no network (sandbox/home.py). A launcher fetches the
package over the network into its cache under home, and an installed tool runs from its own
virtual environment under ~/.local/share. For a server in the user's own settings whose command
is one of these, and only for such a server, mcp/start.py opens exactly that: the network (unless
the server says `"network": false`), the launcher's cache folders read-write (arnes's own, one set
per workspace and server, shown where the launcher looks: never another server's, nor the user's
~/.npm or ~/.cache/uv, which the launcher runs packages from on the host), an installed tool's
folder read-only. Nothing else of
home: ~/.npmrc, ~/.ssh and the rest stay hidden. A project's server gets none of it (DESIGN §13:
only the user's settings widen a server's sandbox).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LauncherNeeds:
    launcher: str  # npx | uvx | uv tool run | pipx run | uv tool | pipx
    writable: tuple[Path, ...] = ()  # caches it writes (made if missing)
    readable: tuple[Path, ...] = ()  # an installed tool's folder
    network: bool = False  # it fetches packages


def _base(environ: Mapping[str, str], variable: str, default: str, home: Path) -> Path:
    """An XDG folder: the variable's value when it names a folder under home, else the default."""
    value = environ.get(variable, "")
    if value and os.path.isabs(value):
        real = Path(os.path.realpath(value))
        if home in real.parents:
            return real
    return home / default


def _existing(*paths: Path) -> tuple[Path, ...]:
    return tuple(p for p in paths if p.is_dir())


def launcher_needs(argv: list[str], home: Path, environ: Mapping[str, str]) -> LauncherNeeds | None:
    """What the command `argv` (a user's server) needs beyond the sandbox, or None: nothing."""
    if not argv or not argv[0]:
        return None
    name, args = os.path.basename(argv[0]), argv[1:]
    cache = _base(environ, "XDG_CACHE_HOME", ".cache", home)
    data = _base(environ, "XDG_DATA_HOME", ".local/share", home)
    state = _base(environ, "XDG_STATE_HOME", ".local/state", home)
    if name == "npx":
        return LauncherNeeds("npx", (home / ".npm",), network=True)
    # uv: packages go to its cache; the Pythons it installed are used, read-only (installing one,
    # or writing the tools of `uv tool install` that run outside the sandbox, is not its job here).
    uv = LauncherNeeds("uvx", (cache / "uv",), _existing(data / "uv" / "python"), network=True)
    if name == "uvx":
        return uv
    if name == "uv" and args[:2] == ["tool", "run"]:
        return dataclasses.replace(uv, launcher="uv tool run")
    if name == "pipx" and args[:1] == ["run"]:
        # The temporary venv (~/.cache/pipx), the shared pip it installs with, its log; never the
        # venvs of installed tools, which run outside the sandbox.
        pipx_home = home / ".local/pipx" if (home / ".local/pipx").is_dir() else data / "pipx"
        return LauncherNeeds("pipx run", (cache / "pipx", pipx_home / "shared", state / "pipx" / "log"), network=True)
    return _installed(argv[0], home, data, environ)


def _installed(command: str, home: Path, data: Path, environ: Mapping[str, str]) -> LauncherNeeds | None:
    """A tool `uv tool install` or `pipx install` made: a link (~/.local/bin/NAME) into its venv."""
    found = command if os.path.isabs(command) else shutil.which(command, path=environ.get("PATH", os.defpath))
    if not found:
        return None
    real = Path(os.path.realpath(found))
    roots = {data / "uv" / "tools": ("uv tool", data / "uv"), data / "pipx" / "venvs": ("pipx", data / "pipx"),
             home / ".local/pipx/venvs": ("pipx", home / ".local/pipx")}  # fmt: skip
    for venvs, (launcher, root) in roots.items():
        if venvs in real.parents:
            return LauncherNeeds(launcher, readable=(root,))
    return None
