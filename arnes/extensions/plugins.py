"""Claude Code plugins: their commands, agents, skills, output styles, hooks and MCP servers.

Claude Code records what `/plugin install` put where in `~/.claude/plugins/installed_plugins.json`
(`{"version": 2, "plugins": {"NAME@MARKETPLACE": [{"scope": "user", "installPath": ...}]}}`), and
which of them are on in the user's `~/.claude/settings.json` (`"enabledPlugins":
{"NAME@MARKETPLACE": true}`). A plugin is a folder with `.claude-plugin/plugin.json` and the
same kinds of files as `~/.claude/`: `commands/`, `agents/`, `skills/`, `output-styles/` (or the
paths its manifest names, inside the plugin). They are read as the user's `~/.claude/` files
are, and namespaced by the plugin's name as Claude Code does: `/NAME:command`, agent
`NAME:agent`, skill `NAME:skill` (a style is chosen by the name its front matter gives).

A plugin's hooks (`hooks/hooks.json`, or the manifest's `hooks`) and MCP servers (`.mcp.json` at
its root, or the manifest's `mcpServers`) are the user's too: they run as the user's own hooks
and servers do (config.py), sandboxed unless the user's own settings say otherwise, with the
plugin's folder readable there, `${CLAUDE_PLUGIN_ROOT}` put in as that folder and set for its
hooks and stdio servers. A server is named `plugin_NAME_SERVER`, so its tools are
`mcp__plugin_NAME_SERVER__TOOL`, as in Claude Code.

Which plugins are on: those the user's settings enable; those the project's `.claude/settings.json`
or `.claude/settings.local.json` enable (a project- or local-scope install, or one of the user's,
as Claude Code merges them); and `--plugin-dir DIR` for one run (start-up puts the folders in
`ARNES_PLUGIN_DIRS`, so every part of arnes that reads plugins sees the same list). A plugin the
project turns on is the project's: its hooks and servers are the project's grants (they wait
for `arnes trust` and never leave the sandbox). A `--plugin-dir` folder gives prompts only, as
the project's (config.py, locations.py). Every plugin file is read through no link out of its
folder. A project's `false` does not turn off a plugin the user enabled (a
repository does not switch off the user's guard hooks); one line says so.

Its language servers (`.lsp.json` at its root, or the manifest's `lspServers`) are run the same
way (arnes/lsp/): in the sandbox, started when a file they serve is first asked about or written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from arnes.errors import ConfigError
from arnes.host.paths import is_inside, resolve_real
from arnes.jsonfile import read_json
from arnes.permissions.protected import claude_user_dir

EnabledBy = Literal["user", "project", "--plugin-dir"]
MANIFEST_KEYS = {"output-styles": "outputStyles"}  # the manifest's key for a kind of file, when not its folder's name
INSTALLED = Path("plugins") / "installed_plugins.json"
MANIFEST = Path(".claude-plugin") / "plugin.json"
ROOT_ENV = "CLAUDE_PLUGIN_ROOT"  # set for a plugin's hooks and stdio MCP servers, as Claude Code does
ROOT_VARIABLE = "${" + ROOT_ENV + "}"
# The parts a plugin runs: its manifest's key, and the file used when the manifest names none.
HOOKS = ("hooks", Path("hooks") / "hooks.json")
SERVERS = ("mcpServers", Path(".mcp.json"))
LSP_SERVERS = ("lspServers", Path(".lsp.json"))
# `--plugin-dir` folders of this run, joined by os.pathsep (cli.py sets it at start-up).
DIRS_VARIABLE = "ARNES_PLUGIN_DIRS"
PROJECT_SETTINGS = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")


@dataclass(frozen=True)
class Plugin:
    name: str  # the namespace: plugin.json's "name", else the key's part before "@"
    key: str  # NAME@MARKETPLACE, as the settings enable it
    root: Path
    manifest: dict[str, Any]
    enabled_by: EnabledBy = "user"  # the user's settings, the project's, or the run's --plugin-dir

    @property
    def namespace(self) -> str:
        return f"{self.name}:"

    def folders(self, kind: str) -> list[Path]:
        """Where this plugin keeps files of `kind`: the default folder, then the manifest's paths
        (a string or a list, relative to the plugin), each only if it stays inside the plugin."""
        named = self.manifest.get(MANIFEST_KEYS.get(kind, kind))
        extra = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        out: list[Path] = []
        for rel in [kind, *(p for p in extra if isinstance(p, str) and "\0" not in p)]:
            path = (self.root / rel).resolve()
            if is_inside(resolve_real(self.root), path) and path.is_dir() and path not in out:
                out.append(path)
        return out

    def hooks_or_servers(self) -> bool:
        """Whether the plugin has hooks, MCP or language servers, by their usual places (nothing parsed)."""
        return any(
            self.manifest.get(key) or (self.root / default).is_file() for key, default in (HOOKS, SERVERS, LSP_SERVERS)
        )

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

    def lsp_servers(self) -> tuple[str, Any] | None:
        """(where, {server: settings}) of `.lsp.json` at the plugin's root or the manifest's
        `lspServers`, with the plugin's folder put in; None: none. ConfigError for a bad file."""
        return self._part(*LSP_SERVERS)

    def server_name(self, server: str) -> str:
        """The name a plugin's server goes by: `plugin_NAME_SERVER`, in the letters a name may hold."""
        return re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_-]", "-", f"plugin_{self.name}_{server}"))

    def _part(self, key: str, default: Path) -> tuple[str, Any] | None:
        named = self.manifest.get(key)
        if isinstance(named, dict):
            return f"{self.root / MANIFEST} ({key})", _rooted(named, str(self.root))
        if isinstance(named, str) and "\0" in named:
            raise ConfigError(f"{self.root / MANIFEST}: {key} names no file arnes can open (a NUL byte)")
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


def enabled_plugins(env: dict[str, str] | None = None, workspace: Path | None = None) -> tuple[list[Plugin], list[str]]:
    """The plugins on for a session in `workspace` (None: the user's alone), each once, the user's
    first; and one line for each that cannot be read. Nothing installed, no settings: none, no lines."""
    environ = dict(os.environ) if env is None else env
    base = claude_user_dir(environ)
    installed_file, settings_file = base / INSTALLED, base / "settings.json"
    warnings: list[str] = []
    records: dict[str, Any] = {}
    if installed_file.is_file():
        try:
            found = read_json(installed_file)
        except ConfigError as exc:
            warnings.append(f"plugins not loaded: {exc}")
        else:
            listed = found.get("plugins") if isinstance(found, dict) else None
            records = listed if isinstance(listed, dict) else {}
    real_ws = resolve_real(workspace) if workspace is not None else None
    plugins: list[Plugin] = []
    user_on = _switched(settings_file, warnings)
    for key, on in user_on.items():
        if on is True and records:
            root = _install(records.get(key), real_ws)
            if root is None:
                warnings.append(f"plugin {key} is enabled in {settings_file} but not installed ({installed_file})")
                continue
            _add(plugins, warnings, key, root, "user")
    if real_ws is not None:
        for rel in PROJECT_SETTINGS:
            where = real_ws / rel
            for key, on in _switched(where, warnings).items():
                if on is False and user_on.get(key) is True:
                    warnings.append(f"plugin {key} is turned off in {where} but your settings enable it: it stays on")
                if on is True and user_on.get(key) is False:  # your `false` is your word, as your `true` is
                    warnings.append(f"plugin {key} is turned on in {where} but your settings turn it off: it stays off")
                    continue
                if on is not True or user_on.get(key) is True or any(p.key == key for p in plugins):
                    continue
                root = _install(records.get(key), real_ws)
                if root is None:
                    warnings.append(f"plugin {key} is enabled in {where} but not installed ({installed_file})")
                    continue
                _add(plugins, warnings, key, root, "project")
    for folder in filter(None, environ.get(DIRS_VARIABLE, "").split(os.pathsep)):
        root = Path(folder)
        if not root.is_dir():
            warnings.append(f"--plugin-dir {folder}: not a folder; nothing loaded from it")
            continue
        _add(plugins, warnings, "", root.resolve(), "--plugin-dir")
    return plugins, warnings


def _switched(path: Path, warnings: list[str]) -> dict[str, Any]:
    """A settings file's `enabledPlugins` ({key: on}); {} when absent. A file that does not parse is
    one line here (the settings loader names it for its other keys too)."""
    if not path.is_file():
        return {}
    try:
        settings = read_json(path)
    except ConfigError as exc:
        warnings.append(f"plugins of {path} not loaded: {exc}")
        return {}
    switched = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    return switched if isinstance(switched, dict) else {}


def _add(plugins: list[Plugin], warnings: list[str], key: str, root: Path, enabled_by: EnabledBy) -> None:
    """The plugin in `root` (its manifest read), named by the manifest, else by its key or folder."""
    try:
        manifest = read_json(root / MANIFEST) if (root / MANIFEST).is_file() else {}
    except ConfigError as exc:
        warnings.append(f"plugin {key or root} not loaded: {exc}")
        return
    name = manifest.get("name") if isinstance(manifest, dict) else None
    name = name if isinstance(name, str) and name else (key.partition("@")[0] if key else root.name)
    manifest = manifest if isinstance(manifest, dict) else {}
    plugin = Plugin(name, key or f"{name}@--plugin-dir", root, manifest, enabled_by)
    if any(p.name == plugin.name for p in plugins):
        warnings.append(f"plugin {plugin.key} ({root}) not loaded: another plugin on is named {name}")
        return
    plugins.append(plugin)


def _install(entries: Any, workspace: Path | None) -> Path | None:
    """The folder of a key's install that serves here: the user-scope one, or a project- or
    local-scope one recorded for this workspace (the v2 format's list, or v1's one record)."""
    for entry in entries if isinstance(entries, list) else [entries]:
        if not isinstance(entry, dict):
            continue
        scope, project = entry.get("scope", "user"), entry.get("projectPath")
        mine = scope == "user" or (
            scope in ("project", "local")
            and workspace is not None
            and isinstance(project, str)
            and resolve_real(Path(project).expanduser()) == workspace
        )
        path = entry.get("installPath")
        if mine and isinstance(path, str) and Path(path).expanduser().is_dir():
            return Path(path).expanduser()
    return None
