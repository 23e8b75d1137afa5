"""How an MCP server is configured: `.mcp.json` and `mcpServers` in settings (Claude Code's shape)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arnes.errors import ConfigError
from arnes.jsonfile import read_json

MCP_FILE = ".mcp.json"
# `__` separates server and tool in `mcp__NAME__TOOL`, so a server's name may not hold it.
NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$")


class McpServer(BaseModel):
    """One server: a command (stdio), a URL (streamable HTTP, or the older HTTP+SSE), or a server in
    the Agent SDK's own program (`sdk`: only from the SDK's `--mcp-config`, reached through its
    control channel, mcp/sdk_relay.py)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio", "http", "streamable-http", "sse", "sdk"] | None = None
    name: str | None = Field(None, description="An SDK server's own name (the SDK writes it).")
    command: str | None = Field(None, description="The program that speaks MCP on stdin/stdout.")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="Variables set for the server only.")
    url: str | None = Field(None, description="Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.")
    headers: dict[str, str] = Field(default_factory=dict)
    # At most a day: a bigger number (1e300, or 1e400 read as infinity) overflows the event loop's clock.
    timeout: float = Field(30, gt=0, le=86_400, allow_inf_nan=False, description="Seconds to start and list the tools.")
    tool_timeout: float = Field(
        120, gt=0, le=86_400, allow_inf_nan=False, description="Seconds one tool call may take."
    )
    sandbox: bool = Field(True, description="Run a stdio server in the sandbox (false: only in user settings).")
    network: bool | None = Field(None, description="Network for a sandboxed stdio server (user settings only).")
    enabled_tools: list[str] | None = Field(None, description="Only these of the server's tools (Codex's key).")
    disabled_tools: list[str] = Field(default_factory=list, description="None of these tools (Codex's key).")

    def offers(self, tool: str) -> bool:
        """Whether the server's tool is offered and callable: the user turned the others off."""
        return (self.enabled_tools is None or tool in self.enabled_tools) and tool not in self.disabled_tools

    @model_validator(mode="after")
    def _kind(self) -> McpServer:
        if self.transport == "sdk":
            return self
        if self.transport == "stdio" and not self.command:
            raise ValueError('a stdio server needs "command" (or give "type": "http" and "url")')
        if self.transport != "stdio" and not self.url:
            raise ValueError(f'an {self.transport} server needs "url"')
        return self

    @property
    def transport(self) -> Literal["stdio", "http", "sse", "sdk"]:
        if self.type in ("sse", "sdk"):
            return self.type
        if self.type in ("http", "streamable-http") or (self.type is None and self.url and not self.command):
            return "http"
        return "stdio"


def check_names(servers: dict[str, McpServer], where: str) -> None:
    for name in servers:
        if not NAME.match(name):
            raise ConfigError(
                f"{where}: mcpServers: {name!r} is not a server name; use letters, digits, - and single _ "
                "(tools appear as mcp__NAME__TOOL)"
            )


@dataclass(frozen=True)
class ServerEntry:
    """A configured server and whether it may start (a project's server waits for trust)."""

    name: str
    config: McpServer
    source: str  # the file it came from
    user: bool  # from the user's own settings: may turn the sandbox off or the network on
    trusted: bool  # may start here
    folder_trusted: bool = True  # "sandbox": false holds only in a folder the user trusted (like hooks)
    held: str = ""  # why it does not start though trust would let it (Claude Code's approval, mcp/approval.py)

    @property
    def starts(self) -> bool:
        return self.trusted and not self.held

    @property
    def unconfined(self) -> bool:
        """The user's own server with `"sandbox": false`, in a folder the user trusted."""
        return self.user and not self.config.sandbox and self.folder_trusted


class McpFile(BaseModel):
    model_config = ConfigDict(extra="allow")  # Claude Code's file may carry other keys; only this one counts

    mcpServers: dict[str, McpServer] = Field(default_factory=dict)  # noqa: N815  (the file's own key)


def load_mcp_file(path: Path) -> dict[str, McpServer]:
    """The servers of one `.mcp.json`, or one clear error naming the file and the key."""
    return parse_servers(read_json(path), path)


def parse_servers(raw: object, path: Path | str) -> dict[str, McpServer]:
    """`{"mcpServers": {...}}` found at `path` (a file, `--mcp-config`), or one clear error naming it."""
    listed = raw.get("mcpServers") if isinstance(raw, dict) else None
    if isinstance(listed, dict) and path != "--mcp-config":
        sdk = next((name for name, s in listed.items() if isinstance(s, dict) and s.get("type") == "sdk"), None)
        if sdk is not None:
            raise ConfigError(
                f"{path}: mcpServers.{sdk} is an in-process SDK server (create_sdk_mcp_server), which only the "
                "Agent SDK that starts arnes can offer (its --mcp-config); give it as a stdio or http server"
            )
    try:
        servers = McpFile.model_validate(raw).mcpServers
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
            problems.append(f"{where}: {msg}")
        raise ConfigError(f"{path}: invalid MCP servers: " + "; ".join(problems)) from exc
    check_names(servers, str(path))
    return servers
