"""Settings: user < project < local < flags, validated strictly (unknown key or bad rule -> exit 2).

The user's level is two files: Claude Code's `~/.claude/settings.json` (read leniently, and a file
that does not parse is one warning, never the end of the run) under arnes's own
`~/.config/arnes/settings.json`, which wins a value both set (the conflict named in one line).
Rules of every file accumulate: deny > ask > allow decides, whatever the file.
MCP servers also come from Claude Code's `~/.claude.json` (mcp/claude_json.py): its user scope is
the lowest of all, its local scope (this project's entry) the highest, above `.mcp.json`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arnes.config_conflicts import mode_conflict, rule_conflicts
from arnes.errors import ConfigError
from arnes.extensions.hook_if import TOOL_EVENTS
from arnes.extensions.hooks_config import FailMode, HookEntry, HookSettings, hook_scripts
from arnes.extensions.locations import user_skill_folders
from arnes.host.key_helper import KeyHelper
from arnes.host.testcmd import TEST_TIMEOUT, TestCommand, detect
from arnes.jsonfile import read_json
from arnes.llm.profiles import pieces_of
from arnes.lsp.settings import LspEntry
from arnes.mcp.approval import DISABLED, ENABLE_ALL, ENABLED, Approval
from arnes.mcp.claude_json import read_claude_json, shown_path
from arnes.mcp.settings import MCP_FILE, McpServer, ServerEntry, check_names, load_mcp_file
from arnes.permissions.grants import split_grants
from arnes.permissions.protected import claude_json_path, claude_user_dir, codex_user_dir, user_config_dir
from arnes.permissions.rules import RuleError, SourcedRule, parse_rule
from arnes.sandbox.env import secret_setting
from arnes.setting_sources import Source, reads

if TYPE_CHECKING:
    from arnes.extensions.plugins import Plugin

ProviderName = Literal["ollama", "openai", "anthropic", "script"]
ModeName = Literal["default", "acceptEdits", "plan", "bypass"]
SandboxMode = Literal["auto", "bubblewrap", "landlock", "off"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSettings(Strict):
    provider: ProviderName | None = Field(None, description="Which provider answers.")
    name: str | None = Field(None, description="Model name as the provider knows it.")
    base_url: str | None = Field(None, description="Endpoint, e.g. http://localhost:11434/v1.")
    context_window: int | None = Field(
        None, gt=0, description="Tokens the model can see at once (default: asked from the server, else the profile)."
    )
    max_output_tokens: int | None = Field(None, gt=0, description="Cap on one reply's tokens, sent on every wire.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature (default per model, 0.2).")
    timeout: float | None = Field(None, gt=0, description="Seconds to wait for the first byte of a reply (600).")
    read_timeout: float | None = Field(None, gt=0, description="Seconds to wait between two chunks of a reply (300).")
    stream: bool | None = Field(None, description="Stream the answer (default true); false for servers that cannot.")
    script: str | None = Field(None, description="The scripted model's turns (provider script).")
    steering: str | None = Field(
        None,
        description="Which model-adaptation pieces run: off, small or tests, less or plus pieces "
        "(small,-nudge, small,+fresh-draws); default: the model's profile, off for frontier models.",
    )
    edit_format: Literal["tools", "whole", "search-replace", "auto"] | None = Field(
        None,
        description="How the model hands over file changes (default: the model's profile); auto: whole "
        "when the task names files, else tool calls.",
    )

    @field_validator("steering")
    @classmethod
    def _known_pieces(cls, value: str | None) -> str | None:
        if value is not None:
            pieces_of(value)  # its ValueError names the set and its pieces
        return value


class PermissionSettings(Strict):
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    # camelCase as in DESIGN §5; "dontAsk" is the default mode with nobody asked (`never_ask`)
    defaultMode: ModeName | Literal["dontAsk"] | None = None  # noqa: N815
    additionalDirectories: list[str] = Field(  # noqa: N815  (Claude Code's key)
        default_factory=list, description="Folders outside the workspace the agent may read (your settings only)."
    )
    disableBypassPermissionsMode: Literal["disable"] | None = Field(  # noqa: N815  (Claude Code's key)
        None, description='"disable": no bypass mode, whatever a flag or defaultMode says (any settings file).'
    )

    @field_validator("allow", "ask", "deny")
    @classmethod
    def _rules_parse(cls, rules: list[str]) -> list[str]:
        for i, raw in enumerate(rules):
            try:
                parse_rule(raw)
            except RuleError as exc:
                raise ValueError(f"rule [{i}] {exc}") from exc
        return rules


class SandboxSettings(Strict):
    mode: SandboxMode | None = None
    network: bool | None = None
    read_paths: list[str] = Field(
        default_factory=list, description="Folders under home that commands may read (user settings only)."
    )
    env_passthrough: list[str] = Field(
        default_factory=list,
        description="Variables off the allow list that commands see too, names or globs (user settings only).",
    )


class VerifySettings(Strict):
    command: str | None = Field(
        None, description="The project's test command: --verify auto, teams, `arnes check`, the self-check."
    )
    timeout: float | None = Field(
        None, ge=1, le=600, description="Seconds the self-check's test run may take (300; the Bash tool's 600 at most)."
    )
    build: str | None = Field(None, description="The build command `arnes handoff` runs (optional).")
    ladder: dict[Literal["unit", "integration", "e2e"], str] = Field(default_factory=dict)


class RewindSettings(Strict):
    """Checkpoints for rewind (DESIGN §17); the user's settings only: a repository must not turn
    off the undo of what is done to it."""

    enabled: bool | None = Field(None, description="Checkpoint before every user turn (default true).")
    max_storage_mb: int | None = Field(
        None, ge=10, description="Checkpoint storage per workspace, MB (2048); the oldest sessions go first."
    )
    max_file_mb: int | None = Field(None, ge=1, description="A bigger file is recorded but not kept, MB (16).")


class PriceSettings(Strict):
    input: float = Field(ge=0, description="USD per million input tokens.")
    output: float = Field(ge=0, description="USD per million output tokens.")


class LimitSettings(Strict):
    max_turns: int | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
    max_cost: float | None = Field(None, gt=0)


RoleName = Literal["subagent", "compaction"]


class Settings(Strict):
    model: ModelSettings = Field(default_factory=ModelSettings)
    models: dict[RoleName, ModelSettings] = Field(default_factory=dict, description="Other models per role.")
    pricing: dict[str, PriceSettings] = Field(default_factory=dict)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    progress: bool | None = Field(None, description="Keep PROGRESS.md up to date after each task.")
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    rewind: RewindSettings = Field(default_factory=RewindSettings)
    mcpServers: dict[str, McpServer] = Field(default_factory=dict)  # noqa: N815  (Claude Code's key, DESIGN §13)
    # Claude Code's approval of the project's .mcp.json servers (mcp/approval.py); its keys, its spelling.
    enableAllProjectMcpServers: bool | None = Field(  # noqa: N815
        None, description="Start every server of the project's .mcp.json (a project's own: once trusted)."
    )
    enabledMcpjsonServers: list[str] = Field(  # noqa: N815
        default_factory=list, description="The .mcp.json servers that start; the others do not (once trusted)."
    )
    disabledMcpjsonServers: list[str] = Field(  # noqa: N815
        default_factory=list, description="The .mcp.json servers that never start, whichever file says so."
    )
    outputStyle: str | None = Field(  # noqa: N815  (Claude Code's key)
        None, description="How the agent talks: default, Explanatory, Learning, ... or a style file's name."
    )
    hooks: HookSettings = Field(default_factory=dict, description="Commands run at moments of the loop (§13).")
    hooks_fail: FailMode | None = Field(None, description='A failing PreToolUse hook blocks ("closed") or not.')
    disableAllHooks: bool = Field(  # noqa: N815  (Claude Code's key)
        False, description="No hook runs (your user settings); a project's file turns off only its own hooks."
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="Variables for arnes and the commands it runs (your user settings only)."
    )
    apiKeyHelper: str | None = Field(  # noqa: N815  (Claude Code's key)
        None, description="A command printing the Anthropic API key, run on your machine (your user settings only)."
    )


@dataclass
class EffectiveConfig:
    provider: ProviderName = "ollama"
    model: str | None = None
    base_url: str | None = None
    context_window: int | None = None
    context_source: str = "settings"  # where context_window came from: settings | flag
    max_output_tokens: int | None = None
    temperature: float | None = None
    steering: str | None = None
    edit_format: str | None = None
    timeout: float | None = None
    read_timeout: float | None = None
    stream: bool = True
    mode: ModeName = "default"
    sandbox: SandboxMode = "auto"
    network: bool = False
    read_paths: list[Path] = field(default_factory=list)
    env_passthrough: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # the user's settings' `env`: set when the run starts
    key_helper: KeyHelper | None = None  # the user's apiKeyHelper
    helper_key: str | None = None  # what it printed, once a run (runner.py)
    agents: object = None  # --agents: definitions given with the run (extensions/agents.py given_agents)
    partial_messages: bool = False  # --include-partial-messages: stream-json streams the reply's text
    permission_prompt_tool: str | None = None  # mcp__SERVER__TOOL: asks go to that MCP tool (mcp/approver.py)
    fallback_model: str | None = None  # --fallback-model: the model a run goes on with when the main one is overloaded
    verify_command: str | None = None
    verify_command_from: str | None = None  # the settings file that named it
    verify_timeout: float = TEST_TIMEOUT
    verify_build: str | None = None
    ladder: dict[str, str] = field(default_factory=dict)
    script: str | None = None
    roles: dict[RoleName, ModelSettings] = field(default_factory=dict)
    prices: dict[str, PriceSettings] = field(default_factory=dict)
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    progress: bool = False
    rules: list[SourcedRule] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # warnings already printed on stderr (for JSON readers too)
    never_ask: bool = False  # Claude Code's dontAsk mode: what would be asked is denied
    instructions_bytes: int | None = None  # Codex's project_doc_max_bytes: the instructions' cut (32 KiB)
    claude_model: tuple[str, str] | None = None  # ~/.claude/settings.json's `model` and its file (runner.py)
    bypass_disabled: str | None = None  # the settings file whose disableBypassPermissionsMode turned bypass off
    json_schema: dict[str, Any] | None = None  # --json-schema: the answer's schema (tools/structured.py)
    output_style: str | None = None  # Claude Code's outputStyle, by name (extensions/output_styles.py)
    output_style_from: str = ""  # the settings file that chose it
    trusted: bool = False  # whether the project's grants applied (DESIGN §10)
    ignored: dict[Path, dict[str, object]] = field(default_factory=dict)  # untrusted grants, per file
    base_url_from: str = "default"  # the layer that chose base_url: a key goes only where the user chose
    role_from: dict[RoleName, str] = field(default_factory=dict)  # the same, per role
    trust_status: str = "unknown"  # for `arnes permissions`: trusted, changed, declined, unknown
    mcp_servers: dict[str, ServerEntry] = field(default_factory=dict)  # by name; later layers win
    lsp_servers: list[LspEntry] = field(default_factory=list)  # the plugins' language servers
    hooks: list[HookEntry] = field(default_factory=list)  # every layer's, in order; `runs` says which may
    hooks_fail: FailMode = "open"  # Claude Code's: a hook that fails (exit 1, 127, ...) does not block
    rewind: RewindSettings = field(default_factory=RewindSettings)

    def commands_see(self) -> tuple[str, ...]:
        """The names off the allow list that commands get (sandbox/env.py): sandbox.env_passthrough,
        and your settings' `env` names that say no secret (those stay arnes's). Not the names a
        project's MCP file may expand: those are env_passthrough alone (mcp/expand.py)."""
        shown = [name for name, value in self.env.items() if not secret_setting(name, value)]
        return tuple(dict.fromkeys([*self.env_passthrough, *shown]))

    def configured_tests(self) -> TestCommand | None:
        """verify.command as the settings name it: the user's always, a project's only once the
        folder is trusted (load_config drops it before), since arnes runs it without asking."""
        if not self.verify_command:
            return None
        return TestCommand(self.verify_command, f"verify.command in {self.verify_command_from}")

    def test_command(self, workspace: Path) -> TestCommand | None:
        """The project's test command: the settings' verify.command, else detected from its files."""
        return self.configured_tests() or detect(workspace)

    def repo_chose_url(self, role: RoleName | None = None) -> bool:
        """Whether the base URL in use came from a project file rather than from the user."""
        layer = self.role_from.get(role, "default") if role else self.base_url_from
        return layer in PROJECT_LAYERS


def set_mode(cfg: EffectiveConfig, name: str) -> None:
    """A permission mode by its settings or flag name: Claude Code's `dontAsk` is arnes's default mode
    with nobody asked (`never_ask`), so a later layer or flag naming another mode ends it too."""
    cfg.never_ask = name == "dontAsk"
    cfg.mode = "default" if cfg.never_ask else cast(ModeName, name)


PROJECT_LAYERS = ("claude-project", "claude-local", "project", "local")
USER_LAYERS = ("claude-user", "user")  # the user's own files: their grants apply everywhere
CLAUDE_LAYERS = ("claude-user", "claude-project", "claude-local")  # Claude Code's files: lenient (config_claude.py)


def user_settings_path(env: dict[str, str] | None = None) -> Path:
    return user_config_dir(env) / "settings.json"


LAYER_SOURCES: dict[str, Source] = {
    "claude-user": "user", "user": "user", "claude-project": "project", "claude-local": "local",
    "project": "project", "local": "local",
}  # fmt: skip


def settings_layers(workspace: Path, env: dict[str, str] | None = None) -> list[tuple[str, Path]]:
    """The settings files in order, those of the sources this run reads (setting_sources.py)."""
    layers = [
        # Each level's Claude Code file before arnes's own, so that arnes's win where both set a value.
        ("claude-user", claude_user_dir(env) / "settings.json"),
        ("user", user_settings_path(env)),
        ("claude-project", workspace / ".claude" / "settings.json"),
        ("claude-local", workspace / ".claude" / "settings.local.json"),
        ("project", workspace / ".arnes" / "settings.json"),
        ("local", workspace / ".arnes" / "settings.local.json"),
    ]
    return [(layer, path) for layer, path in layers if reads(LAYER_SOURCES[layer])]


def load_file(path: Path) -> Settings:
    """Parse and validate one settings file, naming the file and the offending key on error."""
    raw = read_json(path)
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key"
            problems.append(f"{where}: {msg}")
        raise ConfigError(f"{path}: invalid settings: " + "; ".join(problems)) from exc


def load_config(workspace: Path, env: dict[str, str] | None = None, *, trusted: bool) -> EffectiveConfig:
    """Merge the settings files; scalars from later layers win, rules accumulate with their source.

    Unless the folder is `trusted`, the project layers keep only their restrictions; the grants
    they carry are collected in `ignored` for one warning and for the trust prompt.
    """
    cfg = EffectiveConfig(trusted=trusted)
    layers = settings_layers(workspace, env)
    user_files = [str(path) for layer, path in layers if layer in USER_LAYERS]
    claude_mode: tuple[str, str] | None = None  # the mode ~/.claude/settings.json set, for a conflict line
    # `claude mcp add`'s servers (~/.claude.json): user scope under every file, local scope above all.
    claude_json = claude_json_path(env)
    from_claude = read_claude_json(claude_json, workspace, shown_path(claude_json, env))
    cfg.warnings += from_claude.warnings
    if reads("user"):
        _add_servers(cfg, from_claude.user, shown_path(claude_json, env), "claude-user", trusted)
        _codex_servers(cfg, env, trusted)
    local_scope = f"{shown_path(claude_json, env)} (this project)"
    approval = Approval()  # of the .mcp.json servers, from every file that counts here (mcp/approval.py)
    approval.add(local_scope, from_claude.approval)
    hooks_off: dict[bool, str] = {}  # disableAllHooks: the user's file (True) or a project's (False)
    for layer, path in layers:
        if not path.is_file():
            continue
        if layer in CLAUDE_LAYERS:
            loaded = _claude_file(cfg, path, layer)
            if loaded is None:
                continue
            settings = loaded
        else:
            settings = load_file(path)
        cfg.files.append(path)
        check_names(settings.mcpServers, str(path))
        _add_servers(cfg, settings.mcpServers, path, layer, trusted)
        _add_hooks(cfg, settings.hooks, path, layer, trusted)
        if layer in USER_LAYERS:
            _hook_scripts(cfg, settings.hooks, Path(os.path.realpath(_home(env))))
            cfg.env.update(settings.env)
            if settings.apiKeyHelper:
                cfg.key_helper = KeyHelper(settings.apiKeyHelper, str(path), workspace)
        else:
            settings = _without_user_keys(settings, cfg, path)
        if layer in PROJECT_LAYERS and settings.sandbox.mode in ("off", "landlock"):
            # Trusted or not: the project's own hooks and servers would run unconfined (DESIGN §10),
            # or under Landlock, where the home folder is readable and the network open.
            cfg.warnings.append(
                f"{path}: sandbox.mode {settings.sandbox.mode!r} ignored: only your user settings or --sandbox may "
                "turn the sandbox off or choose a weaker one"
            )
            settings.sandbox.mode = None
        if layer in PROJECT_LAYERS and not trusted:
            settings = _restrictions_only(settings, cfg, path)
        approval.add(str(path), _approval_keys(settings))
        if settings.disableAllHooks:
            hooks_off.setdefault(layer in USER_LAYERS, str(path))
        m = settings.model
        cfg.provider = m.provider or cfg.provider
        cfg.model = m.name or cfg.model
        if m.base_url:
            cfg.base_url, cfg.base_url_from = m.base_url, layer
        cfg.context_window = m.context_window or cfg.context_window
        cfg.max_output_tokens = m.max_output_tokens or cfg.max_output_tokens
        cfg.temperature = m.temperature if m.temperature is not None else cfg.temperature
        cfg.steering = m.steering or cfg.steering
        cfg.edit_format = m.edit_format or cfg.edit_format
        cfg.timeout = m.timeout or cfg.timeout
        cfg.read_timeout = m.read_timeout or cfg.read_timeout
        if m.stream is not None:
            cfg.stream = m.stream
        cfg.script = m.script or cfg.script
        for role, chosen in settings.models.items():
            cfg.roles[role] = chosen
            cfg.role_from[role] = layer
        cfg.prices.update(settings.pricing)
        lim = settings.limits
        cfg.max_turns = lim.max_turns or cfg.max_turns
        cfg.max_tokens = lim.max_tokens or cfg.max_tokens
        cfg.max_cost = lim.max_cost or cfg.max_cost
        if settings.progress is not None:
            cfg.progress = settings.progress
        if settings.outputStyle:
            cfg.output_style, cfg.output_style_from = settings.outputStyle, str(path)
        p = settings.permissions
        if p.defaultMode == "bypass" and layer in PROJECT_LAYERS:
            cfg.warnings.append(
                f"{path}: defaultMode 'bypass' ignored: a project's settings cannot put it in bypass "
                "(use --permission-mode bypass or your user settings)"
            )
        elif p.defaultMode:
            if layer == "user" and claude_mode and (line := mode_conflict(claude_mode, (str(path), p.defaultMode))):
                cfg.warnings.append(line)
            if layer == "claude-user":
                claude_mode = (str(path), p.defaultMode)
            set_mode(cfg, p.defaultMode)
        if p.disableBypassPermissionsMode:  # a restriction: any file may make it, a project's too
            cfg.bypass_disabled = str(path)
        for kind in ("allow", "ask", "deny"):
            for rule in getattr(p, kind):
                cfg.rules.append(SourcedRule(kind, rule, str(path)))
        if p.additionalDirectories:  # the user's own: a project's was dropped above
            written = [_tilde(d, str(_home(env))) for d in p.additionalDirectories]
            open_to_reads(cfg, written, f"{path}: permissions.additionalDirectories")
        cfg.sandbox = settings.sandbox.mode or cfg.sandbox
        if settings.sandbox.network is not None:
            cfg.network = settings.sandbox.network
        _user_only_sandbox_keys(cfg, layer, path, settings.sandbox, str(_home(env)))
        if layer in PROJECT_LAYERS and settings.hooks_fail == "open":
            # Trusting a folder lets its own hooks run; it must not loosen the user's guard hooks
            # ("open" is the default: only a "closed" of the user's is worth a word).
            if cfg.hooks_fail == "closed":
                cfg.warnings.append(
                    f'{path}: hooks_fail "open" ignored: only your user settings may let a failing hook\'s call run'
                )
        else:
            cfg.hooks_fail = settings.hooks_fail or cfg.hooks_fail
        if settings.verify.command:
            cfg.verify_command, cfg.verify_command_from = settings.verify.command, str(path)
        cfg.verify_timeout = settings.verify.timeout or cfg.verify_timeout
        if settings.rewind.model_fields_set and layer != "user":
            cfg.warnings.append(f"{path}: rewind ignored: only your user settings may set it ({layer} layer given)")
        elif settings.rewind.model_fields_set:
            cfg.rewind = settings.rewind
        cfg.verify_build = settings.verify.build or cfg.verify_build
        cfg.ladder.update({str(k): v for k, v in settings.verify.ladder.items()})
    mcp_file = workspace / MCP_FILE
    if mcp_file.is_file() and reads("project"):  # the project's own server list: a grant, like its mcpServers
        servers = load_mcp_file(mcp_file)
        _add_mcp_json(cfg, servers, mcp_file, trusted, approval)
        if servers:
            cfg.files.append(mcp_file)
    if reads("local"):
        _add_servers(cfg, from_claude.local, local_scope, "claude-user", trusted)
    skill_folders = _add_plugins(cfg, workspace, env, trusted)
    if reads("user"):
        skill_folders = [*user_skill_folders(env), *skill_folders]
    open_skill_folders(cfg, skill_folders, _home(env), workspace)
    _hooks_off(cfg, hooks_off)
    for name, entry in list(cfg.mcp_servers.items()):
        if not entry.held and (held := approval.any_server(name)):
            cfg.mcp_servers[name] = dataclasses.replace(entry, held=held.reason)
            cfg.warnings.append(held.line(entry.source, name))
    cfg.warnings += rule_conflicts(cfg.rules, user_files)
    _deny_secrets_by_default(cfg, user_files, claude_json, claude_user_dir(env))
    _ask_before_hook_scripts(cfg, workspace)
    _warn_boxed_anyway(cfg)
    return cfg


def _add_plugins(cfg: EffectiveConfig, workspace: Path, env: dict[str, str] | None, trusted: bool) -> list[Path]:
    """The hooks and MCP servers of the Claude Code plugins on (extensions/plugins.py), and the
    skill folders of those whose files may be read in the sandbox (as their hooks'). The user's:
    as their settings' are, under their settings' servers of the same name. The project's (turned
    on by its settings): its grants, which wait for trust and stay in the sandbox. A part that
    cannot be read is one warning; the plugin's other parts, and the other plugins, still load.
    Its folder is readable in the sandbox, where its hooks and servers run. A plugin kept inside
    this workspace, and a `--plugin-dir` anywhere (often the repository's own folder, inside the
    workspace or beside it), run nothing: their files would run as yours, unnamed by the trust
    fingerprint and changed by a pull."""
    from arnes.config_claude import claude_settings
    from arnes.extensions.plugins import ROOT_ENV, enabled_plugins
    from arnes.host.paths import is_inside, resolve_real
    from arnes.mcp.settings import parse_servers

    skill_folders: list[Path] = []
    for plugin in enabled_plugins(env, workspace)[0]:
        if plugin.enabled_by == "--plugin-dir":
            if plugin.hooks_or_servers():
                cfg.warnings.append(
                    f"plugin {plugin.key} ({plugin.root}): its hooks and MCP servers do not run from --plugin-dir "
                    "(a folder named for one run may be the repository's, which trust does not cover); install "
                    "the plugin with Claude Code to run them"
                )
            continue
        if is_inside(resolve_real(workspace), resolve_real(plugin.root)):
            if plugin.hooks_or_servers():
                cfg.warnings.append(
                    f"plugin {plugin.key} is installed inside this workspace ({plugin.root}): its hooks and MCP "
                    "servers do not run here"
                )
            continue
        layer = "project" if plugin.enabled_by == "project" else "user"
        if layer == "user" or trusted:
            skill_folders += plugin.folders("skills")
        if layer == "user":  # `plugin_NAME_*` is your plugin's: no project server goes by it, even if the
            _reserve_plugin_names(cfg, plugin.key, plugin.server_name(""))  # plugin's own list is broken
        used = False
        hooks = servers = None
        try:
            hooks = plugin.hooks()
        except ConfigError as exc:
            cfg.warnings.append(f"plugin {plugin.key}: {exc}; its hooks do not apply")
        try:
            servers = plugin.servers()
        except ConfigError as exc:
            cfg.warnings.append(f"plugin {plugin.key}: {exc}; its MCP servers do not start")
        if hooks is not None:
            where, block = hooks
            try:
                raw, warnings = claude_settings({"hooks": block}, where, user=layer == "user")
                settings = Settings.model_validate(raw)
            except (ConfigError, ValidationError) as exc:
                cfg.warnings.append(f"plugin {plugin.key}: {str(exc).splitlines()[0]}; its hooks do not apply")
            else:
                cfg.warnings += warnings
                _add_hooks(cfg, settings.hooks, Path(where), layer, trusted, str(plugin.root))
                used = used or bool(settings.hooks)
                if layer == "project" and not trusted and settings.hooks:  # named in the trust prompt
                    cfg.ignored.setdefault(Path(where), {})["hooks"] = block
        if servers is not None:
            where, listed = servers
            try:
                parsed = parse_servers({"mcpServers": listed}, where)
            except ConfigError as exc:
                cfg.warnings.append(f"plugin {plugin.key}: {exc}; its MCP servers do not start")
                parsed = {}
            named = {  # a stdio server finds its own files by CLAUDE_PLUGIN_ROOT, as its hooks do
                plugin.server_name(n): server.model_copy(update={"env": {ROOT_ENV: str(plugin.root), **server.env}})
                if server.transport == "stdio"
                else server
                for n, server in parsed.items()
            }
            taken = {n for n in named if n in cfg.mcp_servers and (layer != "user" or cfg.mcp_servers[n].user)}
            _add_servers(cfg, {n: s for n, s in named.items() if n not in taken}, where, layer, trusted)
            if layer == "project" and not trusted and named:
                waiting = cfg.ignored.setdefault(Path(where), {})
                waiting.update({f"mcpServers.{n}": s.model_dump(exclude_defaults=True) for n, s in named.items()})
            used = used or bool(named)
        used = _add_lsp_servers(cfg, plugin, layer, trusted) or used
        # Its commands' shell lines name their scripts by ${CLAUDE_PLUGIN_ROOT} (command_shell.py).
        used = used or bool(plugin.folders("commands"))
        if used and (layer == "user" or trusted) and plugin.root not in cfg.read_paths:
            cfg.read_paths.append(plugin.root)
    return skill_folders


def _add_lsp_servers(cfg: EffectiveConfig, plugin: Plugin, layer: str, trusted: bool) -> bool:
    """A plugin's language servers (arnes/lsp/): the user's start when used; the project's wait
    for trust, as its MCP servers do. Whether it has any."""
    from arnes.lsp.settings import parse_lsp_servers

    try:
        found = plugin.lsp_servers()
        parsed = parse_lsp_servers(found[1], found[0]) if found is not None else {}
    except ConfigError as exc:
        cfg.warnings.append(f"plugin {plugin.key}: {exc}; its LSP servers do not start")
        return False
    if found is None or not parsed:
        return False
    for name, server in parsed.items():
        user = layer == "user"
        cfg.lsp_servers.append(LspEntry(plugin.server_name(name), server, found[0], user, user or trusted, plugin.root))
    if layer == "project" and not trusted:
        cfg.ignored.setdefault(Path(found[0]), {})["lspServers"] = found[1]
    return True


def _reserve_plugin_names(cfg: EffectiveConfig, key: str, prefix: str) -> None:
    """Drop the servers not of your own settings that take your plugin's names: your allow rules
    for `mcp__plugin_NAME_*` would answer for a repository's server."""
    for n in [n for n, entry in cfg.mcp_servers.items() if n.startswith(prefix) and not entry.user]:
        cfg.warnings.append(
            f"{cfg.mcp_servers[n].source}: MCP server {n} takes a name of your plugin {key} "
            f"({prefix}*); it does not start (rename it)"
        )
        del cfg.mcp_servers[n]


def _claude_file(cfg: EffectiveConfig, path: Path, layer: str) -> Settings | None:
    """A Claude Code settings file as arnes settings. The user's own that does not parse is one
    warning and is skipped (the other files still load); a project's stops the run, as arnes's own do."""
    from arnes.config_claude import CLAUDE_MODEL, read_claude_settings

    user = layer == "claude-user"
    try:
        raw, warnings = read_claude_settings(path, user=user)
        cfg.claude_model = raw.pop(CLAUDE_MODEL, None) or cfg.claude_model
        settings = Settings.model_validate(raw)
    except (ConfigError, ValidationError) as exc:
        if not user:
            raise
        first = str(exc).splitlines()[0]
        where = "" if first.startswith(str(path)) else f"{path}: "
        cfg.warnings.append(f"{where}{first}; its rules and hooks do not apply (the other settings files still do)")
        return None
    cfg.warnings += warnings
    return settings


def _warn_boxed_anyway(cfg: EffectiveConfig) -> None:
    """One line when the user's `"sandbox": false` hooks or servers run sandboxed here (untrusted folder)."""
    hooks = sum(e.user and not e.hook.sandbox and e.sandboxed for e in cfg.hooks)
    servers = sum(e.user and not e.config.sandbox and not e.unconfined and e.starts for e in cfg.mcp_servers.values())
    if hooks or servers:
        what = " and ".join(f"{n} {kind}" for n, kind in ((hooks, "hook(s)"), (servers, "MCP server(s)")) if n)
        cfg.warnings.append(
            f'your {what} with "sandbox": false run sandboxed here: this folder is not trusted, and its files '
            "would decide what they run (`arnes trust` to run them unconfined)"
        )


# Files that hold keys and credentials: not read unless the user's own settings allow the same rule.
SECRET_DENIES = (
    "Read(**/.env)", "Read(**/.env.*)", "Read(**/.envrc)", "Read(**/.dev.vars)", "Read(**/*.pem)", "Read(**/*.key)",
    "Read(**/id_rsa*)",
    "Read(**/id_ecdsa*)", "Read(**/id_ed25519*)", "Read(**/.netrc)", "Read(**/.pgpass)",
    "Read(**/.aws/credentials)", "Read(**/.docker/config.json)", "Read(**/.npmrc)", "Read(**/.pypirc)",
)  # fmt: skip
# Claude Code's account (OAuth) and its credentials, in the home folder: never the model's to read.
CLAUDE_SECRET_DENIES = ("Read(~/.claude.json)", "Read(~/.claude/.claude.json)", "Read(~/.claude/.credentials.json)")
# Credentials in the home folder: the workspace rules above are anchored at the workspace, and in
# bypass mode a read outside it is not asked. Keys, cloud and registry logins, other agents' tokens.
HOME_SECRET_DENIES = (
    "Read(~/.ssh/**)", "Read(~/.gnupg/**)", "Read(~/.aws/**)", "Read(~/.azure/**)", "Read(~/.config/gcloud/**)",
    "Read(~/.kube/**)", "Read(~/.docker/config.json)", "Read(~/.git-credentials)", "Read(~/.config/git/credentials)",
    "Read(~/.config/gh/hosts.yml)", "Read(~/.config/hub)", "Read(~/.netrc)", "Read(~/.pgpass)", "Read(~/.npmrc)",
    "Read(~/.pypirc)", "Read(~/.cargo/credentials)", "Read(~/.cargo/credentials.toml)", "Read(~/.vault-token)",
    "Read(~/.terraform.d/credentials.tfrc.json)", "Read(~/.codex/auth.json)", "Read(~/.codex/config.toml)",
    "Read(~/.local/share/keyrings/**)",
)  # fmt: skip
SECRET_SOURCE = "built in: secrets"


def _deny_secrets_by_default(cfg: EffectiveConfig, user: list[str], claude_json: Path, claude_dir: Path) -> None:
    lifted = {r.rule for r in cfg.rules if r.kind == "allow" and r.source in user}
    # CLAUDE_CONFIG_DIR moves Claude Code's file and its credentials: those paths are denied too.
    # (Unset, the file sits beside ~/.claude, not in it, and the built-in `~/` rules say it all.)
    paths = (claude_json, claude_json.parent / ".credentials.json") if claude_json.parent == claude_dir else ()
    moved = [f"Read({p})" for p in paths if not set("*?[]()") & set(str(p))]
    denies = dict.fromkeys([*SECRET_DENIES, *CLAUDE_SECRET_DENIES, *HOME_SECRET_DENIES, *moved])
    cfg.rules += [SourcedRule("deny", rule, SECRET_SOURCE) for rule in denies if rule not in lifted]


HOOK_SCRIPTS_SOURCE = "built in: what hooks and servers run"


def _ask_before_hook_scripts(cfg: EffectiveConfig, workspace: Path) -> None:
    """The workspace files that hooks and MCP servers run (the hook folders, and the scripts the
    settings' commands name: permissions/trust.py) ask before a file tool writes them, in every
    mode that asks, and the sandbox keeps them read-only (an ask rule's files are): the model
    rewriting the guard hook that judges its next call would answer for itself."""
    from arnes.permissions.protected import protected_part
    from arnes.permissions.trust import HOOK_DIRS, granting_files
    from arnes.permissions.trust_scripts import Uncoverable

    try:
        names = granting_files(workspace)
    except (Uncoverable, OSError):
        names = []
    # The hook folders ask whether or not they exist yet: a hook may read a file it will find there.
    globs = [f"./{d}/**" for d in HOOK_DIRS if protected_part(d) is None]
    cfg.rules += [SourcedRule("ask", f"Edit({spec})", HOOK_SCRIPTS_SOURCE) for spec in globs]
    ask_before_run_files(cfg, workspace, names, list(cfg.mcp_servers.values()), cfg.hooks)


def ask_before_run_files(
    cfg: EffectiveConfig, workspace: Path, names: list[str], servers: list[ServerEntry], hooks: list[HookEntry]
) -> None:
    """Ask rules (and read-only in the sandbox) for the workspace files `names` and those these
    servers and hooks run: also what no settings file names (servers from --mcp-config and
    ~/.claude.json, plugins' hooks), read from this run's own config."""
    from arnes.permissions.protected import protected_part
    from arnes.permissions.trust_scripts import Uncoverable, referenced_scripts

    block = {
        "mcpServers": {e.name: {"command": e.config.command or "", "args": e.config.args} for e in servers},
        "hooks": {"any": [{"hooks": [{"command": e.hook.command}]} for e in hooks if e.hook.command]},
    }
    with contextlib.suppress(Uncoverable, OSError):
        names = [*names, *referenced_scripts(workspace, [], [("this run", block)])]
    exact = [f"./{rule_literal(rel)}" for name in names for rel in _as_written_and_real(workspace, name)]
    exact = [spec for spec in exact if protected_part(spec[2:]) is None]
    known = {r.rule for r in cfg.rules if r.source == HOOK_SCRIPTS_SOURCE}
    specs = [f"Edit({spec})" for spec in dict.fromkeys(exact) if f"Edit({spec})" not in known]
    cfg.rules += [SourcedRule("ask", spec, HOOK_SCRIPTS_SOURCE) for spec in specs]


def _as_written_and_real(workspace: Path, name: str) -> list[str]:
    """A file a hook or server runs, as rules name it: the name made plain (`.claude/../x.sh` is
    `x.sh`), and where it leads when a link is on the way (the model writing the link's target
    rewrites the script)."""
    from arnes.host.paths import is_inside, resolve_real

    out = [os.path.normpath(name)]
    root = resolve_real(workspace)
    real = resolve_real(workspace / name)
    if is_inside(root, real) and real != root:
        out.append(real.relative_to(root).as_posix())
    return [rel for rel in dict.fromkeys(out) if rel not in (".", "..") and not rel.startswith("../")]


def rule_literal(rel: str) -> str:
    """A path as a rule's glob that matches that path alone: wildcard characters escaped; a
    parenthesis (which a rule cannot hold unbalanced) matched by `?`, wider, as an ask may be."""
    escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in rel)
    return escaped.replace("(", "?").replace(")", "?")


def add_flag_servers(cfg: EffectiveConfig, servers: dict[str, McpServer], flag: str) -> None:
    """Servers a flag names (`--mcp-config`): the user's own choice for this run, as their settings are."""
    _add_servers(cfg, servers, Path(flag), "user", True)


def _codex_servers(cfg: EffectiveConfig, env: dict[str, str] | None, trusted: bool) -> None:
    """The user's servers in Codex's `~/.codex/config.toml` (`[mcp_servers.NAME]`), under ~/.claude.json's
    of the same name; a server that does not read is one warning, and the others still start."""
    from arnes.extensions.codex_config import codex_config
    from arnes.mcp.settings import parse_servers

    folder = codex_user_dir(env)
    codex = codex_config(folder)
    cfg.warnings += codex.settings_notes
    cfg.instructions_bytes = codex.doc_max_bytes
    where = str(folder / "config.toml")
    for name, given in codex.servers.items():
        if name in cfg.mcp_servers:
            continue  # ~/.claude.json named it first; your arnes settings come after both
        try:
            _add_servers(cfg, parse_servers({"mcpServers": {name: given}}, where), where, "claude-user", trusted)
        except ConfigError as exc:
            cfg.warnings.append(f"{exc}; that server is left out")


def _add_servers(
    cfg: EffectiveConfig, servers: dict[str, McpServer], path: Path | str, layer: str, trusted: bool
) -> None:
    """Record a layer's MCP servers; a project's start only in a trusted folder (DESIGN §10)."""
    for name, server in servers.items():
        user = layer in USER_LAYERS
        lifted = [k for k, on in (("sandbox", not server.sandbox), ("network", server.network is True)) if on]
        if lifted and not user:
            keys = " and ".join(f"mcpServers.{name}.{k}" for k in lifted)
            cfg.warnings.append(f"{path}: {keys} ignored: only your user settings may lift the sandbox")
        earlier = cfg.mcp_servers.get(name)
        if not (user or trusted) and earlier is not None and earlier.starts:
            # An untrusted folder's server that would not start must not take the name of yours.
            cfg.warnings.append(f"{path}: mcpServers.{name} waits for `arnes trust`; your server {name} "
                                f"({earlier.source}) runs meanwhile")  # fmt: skip
            continue
        cfg.mcp_servers[name] = ServerEntry(name, server, str(path), user, user or trusted, trusted)


def _approval_keys(settings: Settings) -> dict[str, object]:
    return {
        ENABLE_ALL: settings.enableAllProjectMcpServers,
        ENABLED: settings.enabledMcpjsonServers,
        DISABLED: settings.disabledMcpjsonServers,
    }


def _add_mcp_json(
    cfg: EffectiveConfig, servers: dict[str, McpServer], path: Path, trusted: bool, approval: Approval
) -> None:
    """The project's `.mcp.json`: its servers start in a trusted folder, unless Claude Code's approval
    keys hold one back (one line each). A held server does not take the name of one that starts, as
    in Claude Code; an untrusted folder's servers are grants, named for the trust prompt."""
    waiting: dict[str, object] = {}
    for name, server in servers.items():
        held = approval.project_server(name, trusted)
        if held is None:
            _add_servers(cfg, {name: server}, path, "project", trusted)
            if not trusted:
                waiting[f"mcpServers.{name}"] = server.model_dump(exclude_defaults=True)
            continue
        cfg.warnings.append(held.line(str(path), name))
        if name not in cfg.mcp_servers:
            cfg.mcp_servers[name] = ServerEntry(name, server, str(path), False, trusted, trusted, held.reason)
    if waiting:
        cfg.ignored[path] = waiting


def _add_hooks(
    cfg: EffectiveConfig, hooks: HookSettings, path: Path, layer: str, trusted: bool, plugin_root: str | None = None
) -> None:
    """Record a layer's hooks; a project's run only in a trusted folder, and always sandboxed (DESIGN §10)."""
    user = layer in USER_LAYERS
    for event, matchers in hooks.items():
        for i, entry in enumerate(matchers):
            for j, hook in enumerate(entry.hooks):
                if not hook.sandbox and not user:
                    cfg.warnings.append(
                        f"{path}: hooks.{event}[{i}].hooks[{j}].sandbox ignored: only your user settings may "
                        "run a hook outside the sandbox"
                    )
                if hook.if_ is not None and event not in TOOL_EVENTS:
                    cfg.warnings.append(
                        f"{path}: hooks.{event}[{i}].hooks[{j}].if: a condition on a tool call, and {event} has "
                        f"none, so this hook never runs (as in Claude Code); remove the if to run it"
                    )
                    continue
                made = HookEntry(event, entry.matcher, hook, str(path), user, user or trusted, trusted, plugin_root)
                cfg.hooks.append(made)


def _hooks_off(cfg: EffectiveConfig, off: dict[bool, str]) -> None:
    """Claude Code's `disableAllHooks`. Your own file's turns every hook off (yours, the project's,
    plugins'); a project's file only the project's own hooks: a repository must not switch off the
    guard hooks of yours that watch it (one warning says they still run)."""
    if True in off:
        cfg.hooks = []
    elif False in off:
        if any(entry.user for entry in cfg.hooks):
            cfg.warnings.append(
                f"{off[False]}: disableAllHooks turns off only this project's own hooks; yours still run "
                "(set it in ~/.claude/settings.json to turn them off)"
            )
        cfg.hooks = [entry for entry in cfg.hooks if entry.user]


def open_to_reads(cfg: EffectiveConfig, folders: list[str], where: str) -> None:
    """Claude Code's additional directories, as reads: each folder's files may be read by the file
    tools (an allow rule, under every deny and ask rule) and by commands (bound read-only in the
    sandbox, as sandbox.read_paths); writing there still asks. Your home folder, a folder above
    it or `/` would open every key: refused in a warning, as is a folder that is not there."""
    from arnes.permissions.engine import folder_read_rule

    home = Path(os.path.realpath(os.path.expanduser("~")))
    for given in folders:
        if not os.path.isabs(given):
            cfg.warnings.append(f"{where}: {given!r} ignored: write the folder as an absolute path or ~/...")
            continue
        real = Path(os.path.realpath(given))
        rule = folder_read_rule(real)
        if not real.is_dir():
            cfg.warnings.append(f"{where}: {given} ignored: there is no such folder")
        elif real == Path("/") or home.is_relative_to(real) or rule is None:
            cfg.warnings.append(f"{where}: {given} ignored: it holds your home folder; name a folder inside it")
        else:
            cfg.rules.append(SourcedRule("allow", rule, where.split(":")[0]))
            _readable_in_sandbox(cfg, real, rule)


def _readable_in_sandbox(cfg: EffectiveConfig, real: Path, rule: str) -> None:
    """`real` (a folder outside the workspace; `rule` its `Read(FOLDER/**)`) bound read-only for
    commands. The built-in secret denies, anchored at the workspace, are anchored here too: the
    file tools refuse what they cover, and the sandbox hides it, as in the workspace."""
    base = rule.removeprefix("Read(").removesuffix("/**)")
    tails = [spec.removeprefix("Read(**/").removesuffix(")") for spec in SECRET_DENIES]
    cfg.rules += [SourcedRule("deny", f"Read({base}/**/{tail})", SECRET_SOURCE) for tail in tails]
    if real not in cfg.read_paths:
        cfg.read_paths.append(real)


def open_skill_folders(cfg: EffectiveConfig, folders: list[Path], home: Path, workspace: Path) -> None:
    """Your own skill folders (~/.config/arnes/skills, ~/.claude/skills, Codex's, your plugins')
    readable to commands, read-only, so a skill's bundled script runs (`python3 scripts/x.py` in the
    skill's folder), as your hooks' scripts do. Only these folders of yours, never their secrets
    (the built-in denies hide them); not a folder that holds your home folder, nor one in the
    workspace (there already). The file tools still read a skill's files only once it is loaded."""
    from arnes.permissions.engine import folder_read_rule

    home_real = Path(os.path.realpath(home))
    ws_real = Path(os.path.realpath(workspace))
    for folder in folders:
        real = Path(os.path.realpath(folder))
        if not real.is_dir() or home_real.is_relative_to(real) or real.is_relative_to(ws_real):
            continue
        rule = folder_read_rule(real)
        if rule is not None:
            _readable_in_sandbox(cfg, real, rule)


def _tilde(written: str, home: str) -> str:
    """`~` or `~/...` in a settings path, as the user's home (an absolute path stays as it is)."""
    return home + written[1:] if written == "~" or written.startswith("~/") else written


def _home(env: dict[str, str] | None) -> Path:
    return Path((os.environ if env is None else env).get("HOME") or os.path.expanduser("~"))


def _hook_scripts(cfg: EffectiveConfig, hooks: HookSettings, home: Path) -> None:
    """Your sandboxed hooks' scripts under home (~/.claude/hooks/x.sh) are readable to commands."""
    for matchers in hooks.values():
        for entry in matchers:
            for hook in entry.hooks:
                if not hook.sandbox:
                    continue
                cfg.read_paths += [f for f in hook_scripts(hook.command, home) if f not in cfg.read_paths]


def _without_user_keys(settings: Settings, cfg: EffectiveConfig, path: Path) -> Settings:
    """A project's file without the keys only your own settings may set, each named once: `env`
    would reach your host-run hooks and git, `additionalDirectories` would open folders outside
    the workspace to the repository's choosing. Trust does not change that."""
    if settings.env:
        why = "only your user settings set variables (a project's would reach your own hooks and git)"
        cfg.warnings.append(f"{path}: env ignored: {why}; export them, or move them to ~/.claude/settings.json")
    if settings.permissions.additionalDirectories:
        cfg.warnings.append(f"{path}: permissions.additionalDirectories ignored: only your user settings or "
                            "--add-dir open a folder outside the workspace")  # fmt: skip
    if settings.apiKeyHelper:
        cfg.warnings.append(f"{path}: apiKeyHelper ignored: only your user settings name a program that gives "
                            "your key (it runs on your machine, outside the sandbox)")  # fmt: skip
    permissions = settings.permissions.model_copy(update={"additionalDirectories": []})
    return settings.model_copy(update={"env": {}, "permissions": permissions, "apiKeyHelper": None})


def _restrictions_only(settings: Settings, cfg: EffectiveConfig, path: Path) -> Settings:
    limits = {"max_turns": cfg.max_turns, "max_tokens": cfg.max_tokens, "max_cost": cfg.max_cost}
    mode = "dontAsk" if cfg.never_ask else cfg.mode
    split = split_grants(settings.model_dump(exclude_unset=True), mode, limits)
    if split.ignored:
        cfg.ignored[path] = split.ignored
    return Settings.model_validate(split.kept)


def _user_only_sandbox_keys(cfg: EffectiveConfig, layer: str, path: Path, sandbox: SandboxSettings, home: str) -> None:
    """sandbox.read_paths and sandbox.env_passthrough widen what commands see: only the user's own
    settings may set them, never a repository's (trusted or not)."""
    if layer != "user":
        for key in ("read_paths", "env_passthrough"):
            if getattr(sandbox, key):
                cfg.warnings.append(f"{path}: sandbox.{key} ignored: only your user settings ({layer} layer given)")
        return
    for raw in sandbox.read_paths:
        expanded = _tilde(raw, home)
        if not os.path.isabs(expanded):
            raise ConfigError(f"{path}: sandbox.read_paths: {raw!r} is not an absolute path; write it as /... or ~/...")
        cfg.read_paths.append(Path(expanded))
    cfg.env_passthrough += sandbox.env_passthrough
