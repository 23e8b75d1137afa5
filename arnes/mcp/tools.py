"""An MCP server's tool as an arnes Tool: `mcp__NAME__TOOL`, its JSON schema as the server gave it."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Protocol

from pydantic import ConfigDict

from arnes.tools.base import NoPaths, ToolArgs, ToolContext, ToolError

UNSAFE = re.compile(r"[^A-Za-z0-9_-]")  # what providers accept in a tool name


class Caller(Protocol):
    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]: ...


class McpArgs(ToolArgs):
    """Any arguments: the server validates them against its own schema and says what is wrong."""

    model_config = ConfigDict(extra="allow")
    schema_: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(cls.schema_)


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{UNSAFE.sub('_', tool)}"[:64]


class McpTool(NoPaths[ToolArgs]):
    """Runs on the server; never read-only (what it does is the server's business), no paths."""

    read_only = False

    def __init__(self, server: str, tool: str, description: str, schema: dict[str, Any], hub: Caller):
        self.name = tool_name(server, tool)
        self.description = f"(MCP server {server}) {description}".strip()
        self.server, self.tool, self._hub = server, tool, hub
        self.args_model: type[ToolArgs] = type(f"Args_{self.name}", (McpArgs,), {"schema_": _schema(schema)})

    def run(self, args: ToolArgs, ctx: ToolContext) -> str:
        try:
            text, is_error = self._hub.call(self.server, self.tool, args.model_dump())
        except ConnectionError as exc:
            raise ToolError(f"{self.name} could not run: {exc}. Go on without it, or tell the user.") from exc
        if is_error:
            raise ToolError(f"{self.name} returned an error: {text}")
        return text


def _schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's schema, as an object schema (a provider rejects anything else)."""
    out = {k: v for k, v in schema.items() if k not in ("$schema", "title")}
    out["type"] = "object"
    out.setdefault("properties", {})
    return out
