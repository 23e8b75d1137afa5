"""What arnes takes from Codex's own settings, `~/.codex/config.toml` (CODEX_HOME moves it).

Only what means the same here: `project_doc_fallback_filenames`, the names Codex reads in a folder
that has no AGENTS.md, `project_doc_max_bytes`, where Codex cuts them (arnes's cut of all the
instructions, bounded), and `[mcp_servers.NAME]`, the user's MCP servers, in arnes's own keys
(`mcpServers` as in ~/.claude.json). The file is the user's own; a file that does not parse, or a
value of the wrong shape, is one note naming the file and the key, and that part is not taken.
Every other key (Codex's model, approval and sandbox keys, its profiles) is named in one note: a
user who set `approval_policy` should learn that arnes's permissions do not follow it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arnes.nesting import toml_loads

MOST_BYTES = 256 * 1024
MOST_NAMES = 8
# project_doc_max_bytes is held to this range: instructions beyond a mebibyte are a mistake (or an
# attack on the context), and below a kibibyte hardly a heading is left.
DOC_BYTES = (1024, 1024 * 1024)
_USED = ("project_doc_fallback_filenames", "project_doc_max_bytes", "mcp_servers")


@dataclass(frozen=True)
class CodexConfig:
    fallbacks: tuple[str, ...] = ()  # file names read where a folder has no AGENTS.md
    notes: list[str] = field(default_factory=list)  # on the file and its fallback names: for the instructions
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # as mcpServers entries
    settings_notes: list[str] = field(default_factory=list)  # on its servers and keys: the settings' warnings
    doc_max_bytes: int | None = None  # project_doc_max_bytes, bounded; None: arnes's own cut


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
    servers, settings_notes = _servers(raw.get("mcp_servers", {}), path)
    if unused := sorted(key for key in raw if key not in _USED):
        settings_notes.insert(0, f"{path}: Codex keys arnes does not use, ignored: {', '.join(unused)}")
    notes: list[str] = []
    doc_bytes = _doc_bytes(raw.get("project_doc_max_bytes"), path, notes)
    names = raw.get("project_doc_fallback_filenames", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        notes.append(f"{path}: project_doc_fallback_filenames is a list of file names; ignored")
        names = []
    kept = tuple(n for n in names if _plain_name(n))[:MOST_NAMES]
    notes += [f"{path}: project_doc_fallback_filenames: {n!r} is not a file name in a folder; ignored"
              for n in names if not _plain_name(n)]  # fmt: skip
    return CodexConfig(kept, notes, servers, settings_notes, doc_bytes)


def _doc_bytes(value: object, path: Path, notes: list[str]) -> int | None:
    if value is None:
        return None
    least, most = DOC_BYTES
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        notes.append(f"{path}: project_doc_max_bytes is a number of bytes (e.g. 65536); ignored")
        return None
    if not least <= value <= most:
        bounded = min(max(value, least), most)
        notes.append(f"{path}: project_doc_max_bytes {value} is outside {least}..{most}; {bounded} is used")
        return bounded
    return value


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
