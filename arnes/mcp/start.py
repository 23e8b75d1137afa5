"""Start a session's MCP servers: the SDK loads here, only when a server is configured."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from arnes.mcp.settings import ServerEntry
from arnes.sandbox.base import Sandbox, SandboxMode
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

    def sandbox_for(entry: ServerEntry) -> Sandbox | None:
        """The session's sandbox for a stdio server; only the user's own settings may lift it or open
        the network (DESIGN §13)."""
        if entry.unconfined:
            return None
        assert session.shared is not None
        network = entry.config.network if entry.user and entry.config.network is not None else session.network
        spec = dataclasses.replace(session.shared.spec, network=network)
        return choose_sandbox(_mode(session.sandbox), spec)

    return McpHub(list(servers.values()), session.workspace, sandbox_for)


def _mode(sandbox: Sandbox) -> SandboxMode:
    return "bubblewrap" if sandbox.name == "bubblewrap" else "landlock" if sandbox.name == "landlock" else "off"
