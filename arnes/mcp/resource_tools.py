"""Claude Code's `ListMcpResourcesTool` and `ReadMcpResourceTool`: the resources MCP servers offer
(documents, schemas, records: data a server publishes by URI), offered while a running server says
it has some.

They only read what a server chose to publish, so they ask nothing, as in Claude Code; a deny rule
naming either tool stops it. The answers are Claude Code's JSON: a list of `{uri, name, mimeType,
description, server}`, and `{contents: [{uri, mimeType, text}]}` (binary contents are named, not
shown).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import Field

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError


class Resources(Protocol):
    def with_resources(self) -> list[str]: ...
    def list_resources(self, server: str) -> list[dict[str, str]]: ...
    def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]: ...


class ListArgs(ToolArgs):
    server: str | None = Field(None, description="Only this server's resources (default: every server's).")


class ReadArgs(ToolArgs):
    server: str = Field(description="The MCP server's name.")
    uri: str = Field(description="The resource's URI, as ListMcpResourcesTool gives it.")


class _OnHub:
    def __init__(self, hub: Resources):
        self._hub = hub


class ListMcpResources(_OnHub, BaseTool[ListArgs]):
    name = "ListMcpResourcesTool"
    description = "List the resources (documents, data by URI) the connected MCP servers offer."
    args_model = ListArgs

    def run(self, args: ListArgs, ctx: ToolContext) -> str:
        servers = [_offering(self._hub, args.server)] if args.server is not None else self._hub.with_resources()
        found: list[dict[str, str]] = []
        for server in servers:
            try:
                found += self._hub.list_resources(server)
            except ConnectionError as exc:
                raise ToolError(f"{exc}. Go on without its resources, or tell the user.") from exc
        return json.dumps(found, ensure_ascii=False)


class ReadMcpResource(_OnHub, BaseTool[ReadArgs]):
    name = "ReadMcpResourceTool"
    description = "Read one resource of an MCP server by its URI (see ListMcpResourcesTool)."
    args_model = ReadArgs

    def run(self, args: ReadArgs, ctx: ToolContext) -> str:
        try:
            contents = self._hub.read_resource(_offering(self._hub, args.server), args.uri)
        except ConnectionError as exc:
            raise ToolError(f"{exc}. Check the URI with ListMcpResourcesTool, or go on without it.") from exc
        text = json.dumps({"contents": contents}, ensure_ascii=False)
        if len(text) > ctx.mcp_output_chars:
            raise ToolError(
                f"the resource {args.uri} is {len(text)} characters, more than an MCP result may be here "
                f"({ctx.mcp_output_chars}; MAX_MCP_OUTPUT_TOKENS raises it)."
            )
        return text


def _offering(hub: Resources, server: str) -> str:
    """`server` if it runs and has resources, else the error the model reads."""
    servers = hub.with_resources()
    if server not in servers:
        have = ", ".join(servers) or "none"
        raise ToolError(f"no running MCP server {server!r} offers resources (these do: {have}).")
    return server
