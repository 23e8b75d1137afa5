"""The MCP servers `claude mcp add` writes into Claude Code's `~/.claude.json`.

Claude Code keeps a user-scope server at the file's top-level `mcpServers` and a local-scope one
(the user's own, for one project) at `projects["<absolute project path>"].mcpServers`; with
`CLAUDE_CONFIG_DIR` set the file is `$CLAUDE_CONFIG_DIR/.claude.json`. Beside them, this
project's entry keeps the user's approval of the project's `.mcp.json` servers and the servers
`/mcp` disabled here (mcp/approval.py). The rest of the file is Claude Code's state (its OAuth
account, per-project history, tips): it is a credential store, so only those keys are taken,
nothing else is kept, shown or written, and its other keys are not named. The file can grow to
megabytes: a bigger one than MAX_BYTES, one that does not parse, or a server arnes cannot run is
one warning line and arnes runs on; it is never a traceback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from arnes.mcp.approval import KEYS, TOGGLED_OFF, approval_keys
from arnes.mcp.settings import NAME, McpServer
from arnes.nesting import Unreadable, json_loads

MAX_BYTES = 64 * 1024 * 1024
_KEYS = frozenset(McpServer.model_fields)


def shown_path(path: Path, env: Mapping[str, str] | None = None) -> str:
    """The file as the user knows it: `~/.claude.json` under home, else its full path."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


@dataclass
class ClaudeJsonServers:
    """The user scope's servers, this workspace's local scope's, and what to tell the user."""

    user: dict[str, McpServer] = field(default_factory=dict)
    local: dict[str, McpServer] = field(default_factory=dict)
    approval: dict[str, object] = field(default_factory=dict)  # this project's approval keys (mcp/approval.py)
    warnings: list[str] = field(default_factory=list)


def read_claude_json(path: Path, workspace: Path, shown: str, max_bytes: int = MAX_BYTES) -> ClaudeJsonServers:
    """The servers of `path` for `workspace`; a missing file is none, a broken one one warning."""
    found = ClaudeJsonServers()
    raw = _load(path, shown, found.warnings, max_bytes)
    if not isinstance(raw, dict):
        return found
    found.user = _servers(raw.get("mcpServers"), shown, found.warnings)
    projects = raw.get("projects")
    if isinstance(projects, dict):
        for key in _project_keys(workspace):
            project = projects.get(key)
            if isinstance(project, dict):
                where = f"{shown} (this project)"
                found.local = _servers(project.get("mcpServers"), where, found.warnings)
                found.approval = approval_keys(project, where, found.warnings, (*KEYS, TOGGLED_OFF))
                break
    return found


def _load(path: Path, shown: str, warnings: list[str], max_bytes: int) -> object:
    fix = "fix the file or move it aside (Claude Code keeps backups of it); the other settings still apply"
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.append(f"{shown}: its MCP servers are not read: {exc.strerror or type(exc).__name__}; {fix}")
        return None
    if len(data) > max_bytes:
        warnings.append(f"{shown}: its MCP servers are not read: the file is over {max_bytes} bytes; {fix}")
        return None
    if not data.strip():
        return None
    try:
        raw: object = json_loads(data)
    except ValueError as exc:  # the message names a line and column (or the nesting), never the text
        if isinstance(exc, json.JSONDecodeError):
            reason = f"not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        else:
            reason = str(exc) if isinstance(exc, Unreadable) else "not UTF-8 JSON"
        warnings.append(f"{shown}: its MCP servers are not read: {reason}; {fix}")
        return None
    if not isinstance(raw, dict):
        warnings.append(f"{shown}: its MCP servers are not read: the file is not a JSON object; {fix}")
        return None
    return raw


def _project_keys(workspace: Path) -> list[str]:
    """The keys Claude Code may have used for this workspace: its real path, as given, then the
    repository root above it (Claude Code records a project under its git root)."""
    real = os.path.realpath(workspace)
    keys = [real, os.path.abspath(workspace)]
    for folder in [Path(real), *Path(real).parents]:
        if (folder / ".git").exists():  # a folder or a worktree's gitfile
            keys.append(str(folder))
            break
    return list(dict.fromkeys(keys))


def _servers(listed: object, shown: str, warnings: list[str]) -> dict[str, McpServer]:
    """Each server that arnes can run; one that it cannot is left out with one line saying why.
    Keys of a server that arnes does not know are Claude Code's and are dropped quietly."""
    if listed is None:
        return {}
    if not isinstance(listed, dict):
        warnings.append(f"{shown}: mcpServers is not an object; its servers are left out")
        return {}
    servers: dict[str, McpServer] = {}
    for name, entry in listed.items():
        if not NAME.match(name):
            warnings.append(
                f"{shown}: mcpServers: {name!r} is left out: arnes needs letters, digits, - and single _ "
                "(tools appear as mcp__NAME__TOOL)"
            )
            continue
        if not isinstance(entry, dict):
            warnings.append(f"{shown}: mcpServers.{name} is left out: it is not an object")
            continue
        try:
            servers[name] = McpServer.model_validate({k: v for k, v in entry.items() if k in _KEYS})
        except ValidationError as exc:
            problems = "; ".join(
                (".".join(str(p) for p in err["loc"]) or "server") + ": " + err["msg"].removeprefix("Value error, ")
                for err in exc.errors()
            )
            warnings.append(f"{shown}: mcpServers.{name} is left out: {problems}")
    return servers
