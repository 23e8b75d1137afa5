"""How a language server is configured: a Claude Code plugin's `lspServers` or `.lsp.json`.

Claude Code's shape, per server: `command` and `extensionToLanguage` (which files it serves),
optionally `args`, `env`, `initializationOptions`, `settings` (answered to the server's
`workspace/configuration`), `startupTimeout` (ms). Only stdio servers exist here; keys arnes does
not use (`restartOnCrash`, `maxRestarts`, `shutdownTimeout`, ...) are accepted and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arnes.errors import ConfigError


class LspServer(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    extensions: dict[str, str] = Field(alias="extensionToLanguage", min_length=1)
    env: dict[str, str] = Field(default_factory=dict)
    initialization_options: Any = Field(default=None, alias="initializationOptions")
    settings: Any = None
    transport: str = "stdio"
    startup_ms: int = Field(default=30_000, alias="startupTimeout", gt=0)

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, value: dict[str, str]) -> dict[str, str]:
        for suffix in value:
            if not suffix.startswith(".") or len(suffix) < 2:
                raise ValueError(f'{suffix!r} is not a file suffix: write it as ".py"')
        return {suffix.lower(): language for suffix, language in value.items()}

    @field_validator("transport")
    @classmethod
    def _stdio(cls, value: str) -> str:
        if value != "stdio":
            raise ValueError(f"transport {value!r}: arnes speaks to language servers over stdio only")
        return value


@dataclass(frozen=True)
class LspEntry:
    """A configured server and where it came from: a plugin the user or the project turned on."""

    name: str
    config: LspServer
    source: str  # the file it came from
    user: bool  # the user's plugin (else the project's: always sandboxed, after trust)
    trusted: bool  # may start here
    root: Path  # the plugin's folder: readable in the sandbox, CLAUDE_PLUGIN_ROOT


def parse_lsp_servers(raw: Any, where: str) -> dict[str, LspServer]:
    """`{name: {...}}` as a plugin writes it; ConfigError naming the file and the server."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: lspServers must be an object of servers by name")
    servers: dict[str, LspServer] = {}
    for name, body in raw.items():
        try:
            servers[str(name)] = LspServer.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(p) for p in first["loc"]) or "(the server)"
            raise ConfigError(f"{where}: lspServers.{name}.{at}: {first['msg']}") from None
    return servers
