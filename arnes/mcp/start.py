"""Start a session's MCP servers: the SDK loads here, only when a server is configured."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from arnes.mcp.expand import ExpansionError, VariableCheck, expand_server
from arnes.mcp.launchers import launcher_needs
from arnes.mcp.sdk_relay import Relay
from arnes.mcp.settings import ServerEntry
from arnes.sandbox.base import Sandbox, SandboxMode, SandboxSpec
from arnes.sandbox.choose import choose_sandbox

if TYPE_CHECKING:
    from arnes.mcp.client import McpHub
    from arnes.session import Shared


def make_hub(
    shared: Shared,
    servers: dict[str, ServerEntry],
    *,
    network: bool,
    env_passthrough: tuple[str, ...],
    start_ms: int | None = None,
    relay: Relay | None = None,
) -> McpHub | None:
    """The hub of a session's servers (in its shared sandbox's spec; `network` and `env_passthrough`
    are the session's), or None if none is set; `start` it once the banner is out (its thread
    imports the SDK, which would slow the banner down). `start_ms`: Claude Code's MCP_TIMEOUT, for
    each server whose settings name no `timeout` of their own (a server's own wins). `relay`: the
    Agent SDK's control channel, which reaches its in-process servers (mcp/sdk_relay.py)."""
    if not servers:
        return None
    if start_ms is not None:
        servers = {name: with_start_timeout(entry, start_ms / 1000) for name, entry in servers.items()}
    from arnes.mcp.client import McpHub  # the SDK itself loads in the hub's thread

    environ = dict(os.environ)  # the user's environment as arnes started: where `${VAR}` comes from
    workspace = str(shared.engine.workspace)  # the names a server's environment gets (mcp/client.py) expand too
    environ |= {"CLAUDE_PROJECT_DIR": workspace, "ARNES_PROJECT_DIR": workspace}

    def resolve(entry: ServerEntry) -> ServerEntry:
        """Its `${VAR}`s expanded (mcp/expand.py): called only for a server that may start.
        ExpansionError also for a project's package launcher: with no network it can fetch
        nothing, and would be seen only as a time-out."""
        check = VariableCheck(entry.user, env_passthrough)
        expanded = dataclasses.replace(entry, config=expand_server(entry.config, environ, check))
        if not entry.user and not network and entry.config.transport == "stdio":
            needs = launcher_needs([expanded.config.command or "", *expanded.config.args], Path.home(), environ)
            if needs is not None and needs.network:
                raise ExpansionError(
                    f"{needs.launcher} fetches packages, and a project's servers run with no network; install "
                    "the server and name its command, or add it to your own settings (~/.claude.json, "
                    "~/.config/arnes/settings.json), where it gets the network and a cache"
                )
        return expanded

    def sandbox_for(entry: ServerEntry) -> Sandbox | None:
        """The session's sandbox for a stdio server; only the user's own settings may lift it or open
        the network (DESIGN §13), and a user's package launcher gets what it needs (launcher_spec)."""
        if entry.unconfined:
            return None
        opened = entry.config.network if entry.user and entry.config.network is not None else network
        spec = dataclasses.replace(shared.spec, network=opened)
        if entry.user:
            spec = launcher_spec(spec, entry, environ)
        return choose_sandbox(sandbox_mode(shared.sandbox), spec)

    return McpHub(list(servers.values()), shared.engine.workspace, sandbox_for, resolve, relay)


def with_start_timeout(entry: ServerEntry, seconds: float) -> ServerEntry:
    if "timeout" in entry.config.model_fields_set:
        return entry
    return dataclasses.replace(entry, config=entry.config.model_copy(update={"timeout": seconds}))


def launcher_spec(spec: SandboxSpec, entry: ServerEntry, environ: Mapping[str, str]) -> SandboxSpec:
    """The named exception for the user's own `npx`/`uvx`/`pipx run`/installed-tool server
    (mcp/launchers.py): caches read-write (arnes's own for this workspace and this server, shown
    where the launcher looks), its tool's folder read-only, and the network unless the server turns it
    off. Anything else: the spec as it was."""
    home = os.path.expanduser("~")
    if not os.path.isabs(home) or home == "/":
        return spec
    real_home = Path(os.path.realpath(home))
    needs = launcher_needs([entry.config.command or "", *entry.config.args], real_home, environ)
    if needs is None:
        return spec
    own = launcher_caches(spec.workspace, environ, entry)
    caches = tuple((own / folder.relative_to(real_home), folder) for folder in needs.writable)
    for source, _ in caches:  # made here: a missing one cannot be bound
        source.mkdir(parents=True, exist_ok=True, mode=0o700)
    if entry.config.network is None and needs.network and not spec.network:
        # The network for its registry, not the Unix sockets that come with "network": true
        # (docker's socket is the host's root).
        spec = dataclasses.replace(spec, network=True, unix_sockets=False)
    return dataclasses.replace(
        spec,
        writable=(*spec.writable, *caches),
        read_paths=(*spec.read_paths, *needs.readable),
    )


def launcher_caches(workspace: Path, environ: Mapping[str, str], entry: ServerEntry) -> Path:
    """Where one server's launcher keeps its packages: arnes's cache folder, a folder per
    workspace and, in it, per server (its name and command line). A package a server fetched, or
    anything the server wrote in its cache (it reads the repository, and the repository may steer
    it: a linter runs the project's config), is what that server alone runs next time, inside
    the sandbox: never another server's, which may hold a token that one was never given (a
    shared cache let a lint server's project config rewrite the GitHub server's package), and
    never ~/.npm or ~/.cache/uv, which npx and uvx run from on the host."""
    given = environ.get("XDG_CACHE_HOME", "")
    base = given if os.path.isabs(given) else os.path.join(os.path.expanduser("~"), ".cache")
    place = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:16]
    line = [entry.name, entry.config.command or "", *entry.config.args]
    server = hashlib.sha256(b"\0".join(os.fsencode(part) for part in line)).hexdigest()[:16]
    return Path(base) / "arnes" / "launchers" / place / server


def sandbox_mode(sandbox: Sandbox) -> SandboxMode:
    """The mode that makes another sandbox like the session's (for a server's own)."""
    return "bubblewrap" if sandbox.name == "bubblewrap" else "landlock" if sandbox.name == "landlock" else "off"
