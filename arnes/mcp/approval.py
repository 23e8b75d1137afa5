"""Claude Code's approval of a project's `.mcp.json` servers, read from its settings files
(`enableAllProjectMcpServers`, `enabledMcpjsonServers`, `disabledMcpjsonServers`) and from this
project's entry of `~/.claude.json`, where Claude Code also keeps them.

In Claude Code a `.mcp.json` server is rejected when a file lists it in `disabledMcpjsonServers`,
approved when one lists it in `enabledMcpjsonServers` or sets `enableAllProjectMcpServers`, and
otherwise pending: asked about at the prompt, not started by `claude -p`. arnes keeps its own rule
first (DESIGN §10): nothing of an untrusted folder's `.mcp.json` starts, and trusting the folder
approves what the trust prompt showed. On top of it:

- `disabledMcpjsonServers` narrows from any file, the repository's own included, trusted or not;
- `enabledMcpjsonServers` and `enableAllProjectMcpServers` count from the user's own files, and
  from a project's only in a trusted folder (config.py drops them before): a repository does not
  approve its own servers;
- once a file that counts names servers one by one, a server it does not name is pending, as in
  `claude -p`: not started, and one line says where to add it.

`disabledMcpServers` of this project's `~/.claude.json` entry (Claude Code's `/mcp` "disable",
for a server of any scope) holds the server of that name too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ENABLE_ALL, ENABLED, DISABLED = "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"
KEYS = (ENABLE_ALL, ENABLED, DISABLED)
TOGGLED_OFF = "disabledMcpServers"  # ~/.claude.json only: Claude Code's `/mcp` disable, any scope


def approval_keys(
    raw: Mapping[str, Any], where: str, warnings: list[str], keys: tuple[str, ...] = KEYS
) -> dict[str, Any]:
    """The approval keys of one Claude Code file that have the right shape; a key that has not is
    left out with one line naming the file, the key and the shape it needs."""
    kept: dict[str, Any] = {}
    for key in keys:
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if key == ENABLE_ALL:
            if isinstance(value, bool):
                kept[key] = value
            else:
                warnings.append(f"{where}: {key} left out: it is true or false, not {type(value).__name__}")
        elif isinstance(value, list) and all(isinstance(name, str) for name in value):
            kept[key] = value
        else:
            warnings.append(f'{where}: {key} left out: it is a list of server names, like ["memory", "github"]')
    return kept


@dataclass(frozen=True)
class Held:
    """Why a configured server does not start, and what the user changes to start it."""

    reason: str
    fix: str

    def line(self, where: str, name: str) -> str:
        return f"{where}: mcpServers.{name} is not started: {self.reason} ({self.fix})"


@dataclass
class Approval:
    """The approval keys of every file that counts here, each name with the files that set it."""

    enabled: dict[str, list[str]] = field(default_factory=dict)
    disabled: dict[str, list[str]] = field(default_factory=dict)
    toggled_off: dict[str, list[str]] = field(default_factory=dict)
    all_from: list[str] = field(default_factory=list)  # files with enableAllProjectMcpServers: true
    lists: list[str] = field(default_factory=list)  # files that name servers one by one

    def add(self, source: str, keys: Mapping[str, Any]) -> None:
        """One file's keys (already checked by `approval_keys` or the settings model)."""
        if keys.get(ENABLE_ALL) is True:
            self.all_from.append(source)
        if keys.get(ENABLED):
            self.lists.append(source)
        for key, names in ((ENABLED, self.enabled), (DISABLED, self.disabled), (TOGGLED_OFF, self.toggled_off)):
            for name in keys.get(key) or []:
                names.setdefault(name, []).append(source)

    def project_server(self, name: str, trusted: bool) -> Held | None:
        """Whether the `.mcp.json` server `name` is held back; None: it starts where trust lets it."""
        if name in self.disabled:
            return Held(f"{DISABLED} in {_files(self.disabled[name])} names it", "take it out there to start it")
        if not trusted or self.all_from or name in self.enabled or not self.lists:
            return None  # untrusted: it waits for trust, which says so itself
        return Held(
            f"{ENABLED} in {_files(self.lists)} does not name it",
            f'add it there, or set "{ENABLE_ALL}": true',
        )

    def any_server(self, name: str) -> Held | None:
        """Whether the server `name`, of any scope, was disabled in Claude Code's `/mcp`."""
        if name not in self.toggled_off:
            return None
        return Held(
            f"{TOGGLED_OFF} in {_files(self.toggled_off[name])} names it",
            "Claude Code's /mcp disabled it here: enable it there again, or take it out of that list",
        )


def _files(sources: list[str]) -> str:
    return " and ".join(dict.fromkeys(sources))
