"""Claude Code plugins the user installed: their commands, agents and skills.

Claude Code records what `/plugin install` put where in `~/.claude/plugins/installed_plugins.json`
(`{"version": 2, "plugins": {"NAME@MARKETPLACE": [{"scope": "user", "installPath": ...}]}}`), and
which of them are on in the user's `~/.claude/settings.json` (`"enabledPlugins":
{"NAME@MARKETPLACE": true}`). A plugin is a folder with `.claude-plugin/plugin.json` and the
same kinds of files as `~/.claude/`: `commands/`, `agents/`, `skills/` (or the paths its manifest
names, inside the plugin). They are the user's own, read as their `~/.claude/` files are, and
namespaced by the plugin's name as Claude Code does: `/NAME:command`, agent `NAME:agent`, skill
`NAME:skill`.

Read here: user-scope installs the user's settings enable. Not yet: a plugin's hooks and MCP
servers (one line says which plugin has them, so nothing is silently missing), and project- or
local-scope installs (a repository's settings enabling a plugin would be a grant).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.host.paths import is_inside, resolve_real
from arnes.jsonfile import read_json
from arnes.permissions.protected import claude_user_dir

INSTALLED = Path("plugins") / "installed_plugins.json"
MANIFEST = Path(".claude-plugin") / "plugin.json"


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
        if (self.root / "hooks" / "hooks.json").is_file() or self.manifest.get("hooks"):
            parts.append("hooks")
        if (self.root / ".mcp.json").is_file() or self.manifest.get("mcpServers"):
            parts.append("MCP servers")
        return parts


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
                f"plugin {key}: its {' and '.join(plugin.unread())} are not run by arnes (its commands, agents "
                "and skills are read); configure them in your settings to use them"
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
