"""What arnes takes from Codex's own settings, `~/.codex/config.toml` (CODEX_HOME moves it).

Only what means the same here: `project_doc_fallback_filenames`, the names Codex reads in a folder
that has no AGENTS.md, and `[mcp_servers.NAME]`, the user's MCP servers, in arnes's own keys
(`mcpServers` as in ~/.claude.json). The file is the user's own; a file that does not parse, or a
value of the wrong shape, is one note naming the file and the key, and that part is not taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arnes.nesting import toml_loads

MOST_BYTES = 256 * 1024
MOST_NAMES = 8


@dataclass(frozen=True)
class CodexConfig:
    fallbacks: tuple[str, ...] = ()  # file names read where a folder has no AGENTS.md
    notes: list[str] = field(default_factory=list)  # on the file and its fallback names: for the instructions
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # as mcpServers entries
    server_notes: list[str] = field(default_factory=list)  # on its servers: for the settings' warnings


def codex_config(codex_dir: Path) -> CodexConfig:
    path = codex_dir / "config.toml"
    if not path.is_file():  # the user's own file: a link to their dotfiles is fine
        return CodexConfig()
    try:
        with path.open("rb") as file:
            data = file.read(MOST_BYTES)
    except OSError as exc:
        return CodexConfig(notes=[f"{path}: not read ({exc.strerror or exc})"])
    try:
        raw = toml_loads(data.decode("utf-8"))
    except (ValueError, UnicodeError) as exc:
        return CodexConfig(notes=[f"{path}: not read: {exc}; fix the file or move it aside"])
    servers, server_notes = _servers(raw.get("mcp_servers", {}), path)
    notes: list[str] = []
    names = raw.get("project_doc_fallback_filenames", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        notes.append(f"{path}: project_doc_fallback_filenames is a list of file names; ignored")
        names = []
    kept = tuple(n for n in names if _plain_name(n))[:MOST_NAMES]
    notes += [f"{path}: project_doc_fallback_filenames: {n!r} is not a file name in a folder; ignored"
              for n in names if not _plain_name(n)]  # fmt: skip
    return CodexConfig(kept, notes, servers, server_notes)


# Codex's server keys -> arnes's (mcp/settings.py McpServer); `enabled = false` leaves a server out.
_SAME = ("command", "args", "env", "url", "enabled_tools", "disabled_tools")
_RENAMED = {"http_headers": "headers", "startup_timeout_sec": "timeout", "tool_timeout_sec": "tool_timeout"}


def _servers(raw: object, path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    if not isinstance(raw, dict):
        return {}, [f"{path}: mcp_servers is a table of servers; ignored"]
    servers: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for name, given in raw.items():
        if not isinstance(given, dict):
            notes.append(f"{path}: mcp_servers.{name} is not a table; ignored")
            continue
        if given.get("enabled") is False:
            continue
        server = {key: given[key] for key in _SAME if key in given}
        server |= {ours: given[theirs] for theirs, ours in _RENAMED.items() if theirs in given}
        token = given.get("bearer_token_env_var")
        if isinstance(token, str) and token:
            server["headers"] = {**server.get("headers", {}), "Authorization": f"Bearer ${{{token}}}"}
        unused = sorted(set(given) - {*_SAME, *_RENAMED, "enabled", "bearer_token_env_var"})
        if unused:
            notes.append(f"{path}: mcp_servers.{name}: keys arnes does not use, ignored: {', '.join(unused)}")
        servers[name] = server
    return servers, notes


def _plain_name(name: str) -> bool:
    """A name inside the folder it is looked for in (`TEAM_GUIDE.md`, `.agents.md`, `docs/AI.md`)."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts) and "\0" not in name
