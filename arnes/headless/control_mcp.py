"""The SDK's control requests about MCP servers: `mcp_status`, `mcp_reconnect` and `mcp_toggle`
(`ClaudeSDKClient.get_mcp_status`, `reconnect_mcp_server`, `toggle_mcp_server`); and arnes's own
request the other way, `mcp_message`, which reaches the SDK's in-process servers (`relay`).

The SDK's program is the user's own: as at the prompt, it may stop a server and start one again.
It never starts a server arnes would not start at launch: one of a folder not trusted, or one
Claude Code's approval keys leave out (mcp/approval.py), as Claude Code's reconnect refuses a
disabled or unapproved server. A change counts from the next turn's first request (the session
offers a server's tools while it runs, session.py `tool_specs`). Reconnecting waits for the server
to start or fail, at most its `timeout`: the answer says which.
"""

from __future__ import annotations

from typing import Any

from arnes.headless.channel import Channel, Json, Unanswered, as_object
from arnes.mcp.client import McpHub, ServerState
from arnes.mcp.sdk_relay import Relay
from arnes.ui.stream_json import mcp_status

TURNED_OFF = "turned off by the SDK (mcp_toggle)"


def relay(channel: Channel) -> Relay:
    """Each JSON-RPC message for an SDK server as Claude Code sends it: an `mcp_message` control
    request; the SDK's `mcp_response` is the answer (its error, or none in time, raises)."""

    def send(server: str, message: Json, timeout: float) -> Json:
        reply = channel.request({"subtype": "mcp_message", "server_name": server, "message": message}, timeout)
        if reply.get("subtype") == "error":
            raise ConnectionError(f"the Agent SDK refused the message for {server!r}: {reply.get('error')}")
        return as_object(as_object(reply.get("response")).get("mcp_response"))

    return send


def status(hub: McpHub | None) -> Json:
    """Claude Code's `McpStatusResponse`: each server's state, where it came from, its tools."""
    servers = hub.servers.items() if hub is not None else []
    return {"mcpServers": [_one(name, st) for name, st in servers]}


def _one(name: str, st: ServerState) -> dict[str, Any]:
    entry, cfg = st.entry, st.entry.config
    source = entry.source
    scope = "dynamic" if source == "--mcp-config" else "local" if source.endswith("(this project)") else None
    config: dict[str, Any] = {"type": cfg.transport, "url": cfg.url} if cfg.transport != "stdio" else {}
    if cfg.transport == "sdk":
        config = {"type": "sdk", "name": cfg.name or name}
    elif not config:  # as written: no `env` or `headers`, which may hold a token
        config = {"type": "stdio", "command": cfg.command, "args": list(cfg.args)}
    found: dict[str, Any] = {
        "name": name,
        **mcp_status(st.state),
        "config": config,
        "scope": scope or ("user" if entry.user else "project"),
        "source": source,  # arnes's own: the file it came from
    }
    if st.state == "started":
        found["tools"] = [{"name": t.name, "description": t.description} for t in st.tools]
    return found


def reconnect(hub: McpHub | None, request: Json) -> Json:
    """Stop the server and start it again; an error says why it did not start."""
    name, st = _server(hub, request, "mcp_reconnect")
    assert hub is not None
    _may_start(name, st)
    if st.state == f"not started: {TURNED_OFF}":
        raise Unanswered(f"the MCP server {name!r} is turned off (mcp_toggle): enable it to start it again")
    _started(name, hub.restart(name))
    return {}


def toggle(hub: McpHub | None, request: Json) -> Json:
    """`enabled: false` stops the server until it is enabled again; `true` starts it (if it may)."""
    name, st = _server(hub, request, "mcp_toggle")
    assert hub is not None
    enabled = request.get("enabled")
    if not isinstance(enabled, bool):
        raise Unanswered("mcp_toggle takes enabled: true or false")
    if not enabled:
        if st.entry.starts:  # one that does not start here stays as it is
            hub.turn_off(name, TURNED_OFF)
        return {}
    _may_start(name, st)
    if st.state != "started":
        _started(name, hub.restart(name))
    return {}


def _server(hub: McpHub | None, request: Json, subtype: str) -> tuple[str, ServerState]:
    name = request.get("serverName")
    if not isinstance(name, str) or not name:
        raise Unanswered(f"{subtype} takes serverName: a server's name as mcp_status gives it")
    if hub is None:
        raise Unanswered(f"no MCP server {name!r}: none is configured here (.mcp.json, mcpServers in settings)")
    st = hub.servers.get(name)
    if st is None:
        raise Unanswered(f"no MCP server {name!r} here (servers: {', '.join(hub.servers)})")
    return name, st


def _may_start(name: str, st: ServerState) -> None:
    """Only what would start at launch: never a server of an untrusted folder or one left out."""
    if st.entry.held:
        raise Unanswered(f"the MCP server {name!r} does not start here: {st.entry.held}")
    if not st.entry.trusted:
        raise Unanswered(
            f"the MCP server {name!r} does not start here: this folder is not trusted (`arnes trust` or --trust)"
        )


def _started(name: str, st: ServerState) -> None:
    if st.state != "started":
        last = f" (its stderr: {st.stderr_tail[-1]})" if st.stderr_tail else ""
        raise Unanswered(f"the MCP server {name!r} did not start: {st.state.removeprefix('failed: ')}{last}")
