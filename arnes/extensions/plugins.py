"""Claude Code plugins the user installed: their commands, agents and skills.

Claude Code records what `/plugin install` put where in `~/.claude/plugins/installed_plugins.json`
(`{"version": 2, "plugins": {"NAME@MARKETPLACE": [{"scope": "user", "installPath": ...}]}}`), and
which of them are on in the user's `~/.claude/settings.json` (`"enabledPlugins":
{"NAME@MARKETPLACE": true}`). A plugin is a folder with `.claude-plugin/plugin.json` and the
same kinds of files as `~/.claude/`: `commands/`, `agents/`, `skills/` (or the paths its manifest
names, inside the plugin). They are the user's own, read as their `~/.claude/` files are, and
namespaced by the plugin's name as Claude Code does: `/NAME:command`, agent `NAME:agent`, skill
`NAME:skill`.

A plugin's hooks (`hooks/hooks.json`, or the manifest's `hooks`) and MCP servers (`.mcp.json` at
its root, or the manifest's `mcpServers`) are the user's too: they run as the user's own hooks
and servers do (config.py), sandboxed unless the user's own settings say otherwise, with the
plugin's folder readable there, `${CLAUDE_PLUGIN_ROOT}` put in as that folder and set for its hooks. A server is
named `plugin_NAME_SERVER`, so its tools are `mcp__plugin_NAME_SERVER__TOOL`, as in Claude Code.

Read here: user-scope installs the user's settings enable. Not yet: a plugin's LSP servers and
output styles (one line says which plugin has them, so nothing is silently missing), and
project- or local-scope installs (a repository's settings enabling a plugin would be a grant).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.host.paths import is_inside, resolve_real
from arnes.jsonfile import read_json
from arnes.permissions.protected import claude_user_dir

INSTALLED = Path("plugins") / "installed_plugins.json"
MANIFEST = Path(".claude-plugin") / "plugin.json"
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
# The parts a plugin runs: its manifest's key, and the file used when the manifest names none.
HOOKS = ("hooks", Path("hooks") / "hooks.json")
SERVERS = ("mcpServers", Path(".mcp.json"))


@dataclass(frozen=True)
class Plugin:
    name: str  # the namespace: plugin.json's "name", else the key's part before "@"
    key: str  # NAME@MARKETPLACE, as the settings enable it
    root: Path
    manifest: dict[str, Any]

    @property
    def namespace(self) -> str:
        return f"{self.name}:"

    def folders(self, kind: str) -> list[Path]:
        """Where this plugin keeps files of `kind`: the default folder, then the manifest's paths
        (a string or a list, relative to the plugin), each only if it stays inside the plugin."""
        named = self.manifest.get(kind)
        extra = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        out: list[Path] = []
        for rel in [kind, *(p for p in extra if isinstance(p, str))]:
            path = (self.root / rel).resolve()
            if is_inside(resolve_real(self.root), path) and path.is_dir() and path not in out:
                out.append(path)
        return out

    def unread(self) -> list[str]:
        """The parts arnes does not run yet, for one line."""
        parts = []
        if (self.root / ".lsp.json").is_file() or self.manifest.get("lspServers"):
            parts.append("LSP servers")
        if (self.root / "output-styles").is_dir() or self.manifest.get("outputStyles"):
            parts.append("output styles")
        return parts

    def hooks_or_servers(self) -> bool:
        """Whether the plugin has hooks or MCP servers, by their usual places (nothing parsed)."""
        return any(self.manifest.get(key) or (self.root / default).is_file() for key, default in (HOOKS, SERVERS))

    def hooks(self) -> tuple[str, Any] | None:
        """(where, the hooks block by event) of `hooks/hooks.json` or the manifest's `hooks` (a
        file inside the plugin, or the block itself), with the plugin's folder put in; None: none.
        ConfigError for a file that does not parse."""
        found = self._part(*HOOKS)
        if found is None:
            return None
        where, raw = found
        block = raw.get("hooks") if isinstance(raw, dict) and isinstance(raw.get("hooks"), dict) else raw
        return where, block

    def servers(self) -> tuple[str, Any] | None:
        """(where, {server: settings}) of `.mcp.json` at the plugin's root or the manifest's
        `mcpServers`, with the plugin's folder put in; None: none. ConfigError for a bad file."""
        found = self._part(*SERVERS)
        if found is None:
            return None
        where, raw = found
        listed = raw.get("mcpServers") if isinstance(raw, dict) and isinstance(raw.get("mcpServers"), dict) else raw
        return where, listed

    def server_name(self, server: str) -> str:
        """The name a plugin's server goes by: `plugin_NAME_SERVER`, in the letters a name may hold."""
        return re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_-]", "-", f"plugin_{self.name}_{server}"))

    def _part(self, key: str, default: Path) -> tuple[str, Any] | None:
        named = self.manifest.get(key)
        if isinstance(named, dict):
            return f"{self.root / MANIFEST} ({key})", _rooted(named, str(self.root))
        rel = Path(named) if isinstance(named, str) else default
        path = (self.root / rel).resolve()
        if not is_inside(resolve_real(self.root), path) or not path.is_file():
            return None
        return str(path), _rooted(read_json(path), str(self.root))


def _rooted(value: Any, root: str) -> Any:
    """`value` with `${CLAUDE_PLUGIN_ROOT}` put in as the plugin's folder, in every string."""
    if isinstance(value, str):
        return value.replace(ROOT_VARIABLE, root)
    if isinstance(value, list):
        return [_rooted(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _rooted(v, root) for k, v in value.items()}
    return value


def enabled_plugins(env: dict[str, str] | None = None) -> tuple[list[Plugin], list[str]]:
    """The plugins the user installed (user scope) and enabled, by key; and one line for each that
    cannot be read. Nothing installed, or no settings: no plugins, no lines."""
    base = claude_user_dir(env)
    installed_file, settings_file = base / INSTALLED, base / "settings.json"
    if not installed_file.is_file() or not settings_file.is_file():
        return [], []
    warnings: list[str] = []
    try:
        installed, settings = read_json(installed_file), read_json(settings_file)
    except ConfigError as exc:
        return [], [f"plugins not loaded: {exc}"]
    enabled = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    records = installed.get("plugins") if isinstance(installed, dict) else None
    if not isinstance(enabled, dict) or not isinstance(records, dict):
        return [], []
    plugins: list[Plugin] = []
    for key, on in enabled.items():
        if on is not True:
            continue
        root = _user_install(records.get(key))
        if root is None:
            warnings.append(f"plugin {key} is enabled in {settings_file} but not installed for you ({installed_file})")
            continue
        try:
            manifest = read_json(root / MANIFEST) if (root / MANIFEST).is_file() else {}
        except ConfigError as exc:
            warnings.append(f"plugin {key} not loaded: {exc}")
            continue
        name = manifest.get("name") if isinstance(manifest, dict) else None
        name = name if isinstance(name, str) and name else str(key).partition("@")[0]
        plugin = Plugin(name, str(key), root, manifest if isinstance(manifest, dict) else {})
        plugins.append(plugin)
        if plugin.unread():
            warnings.append(
                f"plugin {key}: its {' and '.join(plugin.unread())} are not used by arnes (its commands, agents, "
                "skills, hooks and MCP servers are)"
            )
    return plugins, warnings


def _user_install(entries: Any) -> Path | None:
    """The folder of the user-scope install among a key's records (the v2 format's list, or v1's one)."""
    for entry in entries if isinstance(entries, list) else [entries]:
        if not isinstance(entry, dict) or entry.get("scope", "user") != "user":
            continue
        path = entry.get("installPath")
        if isinstance(path, str) and Path(path).expanduser().is_dir():
            return Path(path).expanduser()
    return None
