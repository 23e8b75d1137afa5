"""Start a session's MCP servers: the SDK loads here, only when a server is configured."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from arnes.mcp.expand import VariableCheck, expand_server
from arnes.mcp.launchers import launcher_needs
from arnes.mcp.settings import ServerEntry
from arnes.sandbox.base import Sandbox, SandboxMode, SandboxSpec
from arnes.sandbox.choose import choose_sandbox

if TYPE_CHECKING:
    from arnes.mcp.client import McpHub
    from arnes.session import Session


def make_hub(session: Session, servers: dict[str, ServerEntry]) -> McpHub | None:
    """The hub of the session's servers, or None if none is set; `start` it once the banner is out
    (its thread imports the SDK, which would slow the banner down)."""
    if not servers:
        return None
    from arnes.mcp.client import McpHub  # the SDK itself loads in the hub's thread

    environ = dict(os.environ)  # the user's environment as arnes started: where `${VAR}` comes from

    def resolve(entry: ServerEntry) -> ServerEntry:
        """Its `${VAR}`s expanded (mcp/expand.py): called only for a server that may start."""
        check = VariableCheck(entry.user, session.env_passthrough)
        return dataclasses.replace(entry, config=expand_server(entry.config, environ, check))

    def sandbox_for(entry: ServerEntry) -> Sandbox | None:
        """The session's sandbox for a stdio server; only the user's own settings may lift it or open
        the network (DESIGN §13), and a user's package launcher gets what it needs (launcher_spec)."""
        if entry.unconfined:
            return None
        assert session.shared is not None
        network = entry.config.network if entry.user and entry.config.network is not None else session.network
        spec = dataclasses.replace(session.shared.spec, network=network)
        if entry.user:
            spec = launcher_spec(spec, entry, environ)
        return choose_sandbox(_mode(session.sandbox), spec)

    return McpHub(list(servers.values()), session.workspace, sandbox_for, resolve)


def launcher_spec(spec: SandboxSpec, entry: ServerEntry, environ: Mapping[str, str]) -> SandboxSpec:
    """The named exception for the user's own `npx`/`uvx`/`pipx run`/installed-tool server
    (mcp/launchers.py): its caches read-write, its tool's folder read-only, and the network
    unless the server turns it off. Anything else: the spec as it was."""
    home = os.path.expanduser("~")
    if not os.path.isabs(home) or home == "/":
        return spec
    needs = launcher_needs([entry.config.command or "", *entry.config.args], Path(os.path.realpath(home)), environ)
    if needs is None:
        return spec
    for folder in needs.writable:  # as the launcher itself would; a missing one cannot be bound
        folder.mkdir(parents=True, exist_ok=True)
    if entry.config.network is None and needs.network and not spec.network:
        # The network for its registry, not the Unix sockets that come with "network": true
        # (docker's socket is the host's root).
        spec = dataclasses.replace(spec, network=True, unix_sockets=False)
    return dataclasses.replace(
        spec,
        writable=(*spec.writable, *needs.writable),
        read_paths=(*spec.read_paths, *needs.readable),
    )


def _mode(sandbox: Sandbox) -> SandboxMode:
    return "bubblewrap" if sandbox.name == "bubblewrap" else "landlock" if sandbox.name == "landlock" else "off"
