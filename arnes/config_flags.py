"""Claude Code's flags (cliclaude.py) as arnes settings for this run: modes, rules, MCP servers,
`--settings`, and a warning for each flag accepted but not used (DESIGN §16).

Flags come after every settings file: a mode given here wins, rules add to theirs. A rule that
names a tool arnes does not have (WebFetch, WebSearch) matches nothing here and is skipped with
a warning; any other bad rule refuses the run, as `--allow` does.
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from pathlib import Path
from typing import Any

from arnes.cliclaude import IGNORED, split_rules
from arnes.config import EffectiveConfig, add_flag_servers, ask_before_run_files, open_to_reads, set_mode
from arnes.config_claude import claude_settings, translate_rule
from arnes.errors import ConfigError
from arnes.extensions.plugins import DIRS_VARIABLE
from arnes.host.flagfile import read_flag_file
from arnes.mcp.approval import KEYS as APPROVAL_KEYS
from arnes.mcp.settings import parse_servers
from arnes.nesting import json_loads
from arnes.permissions.rules import KNOWN_TOOLS, RuleError, RuleKind, SourcedRule, parse_rule

ALIASES = {"Task": "Delegate"}  # DESIGN §16: Claude Code's name for Delegate


def apply_claude_flags(args: argparse.Namespace, cfg: EffectiveConfig, workspace: Path | None = None) -> None:
    """Claude Code's flags on top of the settings (`workspace`: where the servers they add run)."""
    for dest, (flag, why) in IGNORED.items():
        if getattr(args, dest, None):
            cfg.warnings.append(f"{flag} ignored: {why}")
    if getattr(args, "json_schema", None):
        from arnes.tools.structured import parse_schema

        cfg.json_schema = parse_schema(args.json_schema, workspace)
    if getattr(args, "settings", None):
        _settings(args.settings, cfg, workspace)
    for folders in added_dirs(args):
        open_to_reads(cfg, [os.path.abspath(os.path.expanduser(f)) for f in folders], "--add-dir")
    cfg.partial_messages = bool(getattr(args, "include_partial_messages", False))
    cfg.fallback_model = getattr(args, "fallback_model", None) or None
    if getattr(args, "agents", None):
        cfg.agents = _json_or_file(args.agents, "--agents", workspace)
    _mode(args, cfg)
    for kind, flag, value in rule_lists(args):
        for rule in split_rules(value):
            _add_rule(cfg, kind, rule, flag)
    if args.strict_mcp_config:
        cfg.mcp_servers.clear()
    for value in args.mcp_config:
        servers = parse_servers(_json_or_file(value, "--mcp-config", workspace), "--mcp-config")
        add_flag_servers(cfg, servers, "--mcp-config")
        if workspace is not None:
            added = [cfg.mcp_servers[n] for n in servers if n in cfg.mcp_servers]
            ask_before_run_files(cfg, workspace, [], added, [])
    streams = args.input_format == args.output_format == "stream-json"
    if getattr(args, "replay_user_messages", False) and not streams:
        raise ConfigError("--replay-user-messages goes with --input-format stream-json and --output-format stream-json")
    tool = getattr(args, "permission_prompt_tool", None)
    if tool and tool.startswith("mcp__"):
        cfg.permission_prompt_tool = tool
    elif tool and (tool != "stdio" or args.input_format != "stream-json"):
        cfg.warnings.append(
            f"--permission-prompt-tool {tool}: only an MCP tool (mcp__SERVER__TOOL) or stdio with "
            "--input-format stream-json is answered; what would be asked is denied"
        )


def note_sources(args: argparse.Namespace) -> None:
    """`--setting-sources` (setting_sources.py), before any settings are read."""
    from arnes import setting_sources

    setting_sources.note(getattr(args, "setting_sources", None))


def note_plugin_dirs(args: argparse.Namespace) -> None:
    """`--plugin-dir`, before or after a subcommand: the folders go in ARNES_PLUGIN_DIRS, where every
    reader of plugins (settings, commands, agents, skills, doctor) and arnes's own child processes
    find the same list."""
    dirs = [os.path.abspath(os.path.expanduser(d)) for d in getattr(args, "plugin_dir", None) or []]
    if dirs:
        os.environ[DIRS_VARIABLE] = os.pathsep.join(dirs)


def _mode(args: argparse.Namespace, cfg: EffectiveConfig) -> None:
    mode = args.permission_mode
    if args.dangerously_skip_permissions:
        if mode not in (None, "bypass", "bypassPermissions"):
            raise ConfigError(
                f"--dangerously-skip-permissions is the bypass mode; it cannot go with --permission-mode {mode}"
            )
        mode = "bypass"
    if mode:
        set_mode(cfg, "bypass" if mode == "bypassPermissions" else mode)
    if cfg.mode == "bypass" and cfg.bypass_disabled:
        cfg.mode = "default"
        cfg.warnings.append(
            f'{cfg.bypass_disabled}: permissions.disableBypassPermissionsMode is "disable", so the bypass mode '
            "is off; running in the default mode (what would be asked is denied without a terminal)"
        )


BYPASS_AT_START = "the bypass mode is chosen when arnes starts (--permission-mode bypass), not switched to"


def bypass_refused(cfg: EffectiveConfig) -> str | None:
    """Why a running session may not switch to bypass (None: it started in it). As Claude Code
    wants the dangerous mode chosen at start; `disableBypassPermissionsMode` never starts in it."""
    return None if cfg.mode == "bypass" else BYPASS_AT_START


def rule_lists(args: argparse.Namespace) -> list[tuple[RuleKind, str, str]]:
    """The words given to --allowedTools / --disallowedTools, as Claude Code takes them: each flag
    takes words up to the next option. ConfigError for a later word that names no tool: it is the
    prompt, which would otherwise be read as rules (and an earlier prompt as a deny lost)."""
    lists: list[tuple[RuleKind, str, list[list[str]]]] = [
        ("allow", "--allowedTools", getattr(args, "allowed_tools", [])),
        ("deny", "--disallowedTools", getattr(args, "disallowed_tools", [])),
    ]
    found: list[tuple[RuleKind, str, str]] = []
    for kind, flag, given in lists:
        for values in given:
            for i, value in enumerate(values):
                if i > 0 and not _names_tools(value):
                    raise ConfigError(f"{flag}: {value!r} is not a tool rule; the flag takes the words up to the "
                                      "next option, so put the prompt before it or after --")  # fmt: skip
                found.append((kind, flag, value))
    return found


def added_dirs(args: argparse.Namespace) -> list[list[str]]:
    """--add-dir's words, as Claude Code takes them (up to the next option); ConfigError for a later
    word that is no folder: it is the prompt."""
    given: list[list[str]] = getattr(args, "add_dir", None) or []
    for folders in given:
        for word in folders[1:]:
            if not os.path.isdir(os.path.expanduser(word)):
                raise ConfigError(f"--add-dir: {word!r} is not a folder; the flag takes the words up to the next "
                                  "option, so put the prompt before it or after --")  # fmt: skip
    return given


def check_word_lists(args: argparse.Namespace) -> None:
    """The flags that take several words: a prompt after one is said in one line before anything runs."""
    rule_lists(args)
    added_dirs(args)


def _names_tools(value: str) -> bool:
    """Whether a word after a rule flag's first is more rules (Claude Code's space-separated list)
    rather than the prompt that followed it: every rule in it names a tool arnes knows."""
    tools = [translate_rule(rule).split("(", 1)[0] for rule in split_rules(value)]
    return bool(tools) and all(t in ALIASES or t in KNOWN_TOOLS or t.startswith("mcp__") for t in tools)


def _add_rule(cfg: EffectiveConfig, kind: RuleKind, raw: str, flag: str) -> None:
    rule = translate_rule(raw)
    tool = rule.split("(", 1)[0]
    if tool in ALIASES:
        rule = ALIASES[tool] + rule[len(tool) :]
    elif not tool.startswith("mcp__") and tool not in KNOWN_TOOLS:
        cfg.warnings.append(f"{flag} {raw}: arnes has no tool {tool}; the rule matches nothing here, skipped")
        return
    try:
        parse_rule(rule)
    except RuleError as exc:
        raise ConfigError(f"{flag}: {exc}") from exc
    cfg.rules.append(SourcedRule(kind, rule, "flag"))


def _settings(value: str, cfg: EffectiveConfig, workspace: Path | None) -> None:
    """`--settings`: Claude Code settings for this run; their permissions apply as flags do."""
    raw = _json_or_file(value, "--settings", workspace)
    if isinstance(raw, dict) and raw.get("hooks"):
        raise ConfigError("--settings: hooks are not read from --settings; put them in .claude/settings.json")
    kept, warnings = claude_settings(raw, "--settings")
    cfg.warnings += warnings
    if approval := [key for key in APPROVAL_KEYS if key in kept]:
        cfg.warnings.append(
            f"--settings: {', '.join(approval)} ignored: which .mcp.json servers start is read from the settings "
            "files (~/.claude/settings.json, .claude/settings.local.json), not from --settings"
        )
    permissions = kept.get("permissions", {})
    for kind in ("allow", "ask", "deny"):
        cfg.rules += [SourcedRule(kind, rule, "--settings") for rule in permissions.get(kind, [])]
    if "defaultMode" in permissions:  # a mode arnes knows (claude_settings names any other in a warning)
        set_mode(cfg, permissions["defaultMode"])


def _json_or_file(value: str, flag: str, workspace: Path | None) -> Any:
    """A flag's JSON, given inline (`{...}`) or as a file (host/flagfile.py)."""
    inline = value.lstrip().startswith("{")
    text, where = (value, flag) if inline else (read_flag_file(value, flag, workspace), f"{flag} {value}")
    try:
        return json_loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except ValueError as exc:
        raise ConfigError(f"{where}: not read: {exc}") from None


def system_prompts(args: argparse.Namespace, workspace: Path | None = None) -> tuple[str, str]:
    """(what replaces arnes's system prompt, what is added after it); empty: nothing.

    Claude Code's SDKs pass `--system-prompt ""` whenever the caller sets none: an empty prompt
    keeps arnes's own, which carries the tools' contract (DESIGN §3)."""
    base = _text(args, "system_prompt", workspace)
    append = _text(args, "append_system_prompt", workspace)
    return base, append


def _text(args: argparse.Namespace, name: str, workspace: Path | None) -> str:
    text = getattr(args, name, None) or ""
    path = getattr(args, f"{name}_file", None)
    if path:
        if text:
            raise ConfigError(f"--{name.replace('_', '-')} and --{name.replace('_', '-')}-file: give one")
        text = read_flag_file(path, f"--{name.replace('_', '-')}-file", workspace)
    return text.strip()


def offered_tools(args: argparse.Namespace, names: list[str], cfg: EffectiveConfig) -> set[str] | None:
    """`--tools`: the built-in tools offered ("" none, "default" all); None: every one."""
    value = getattr(args, "tools", None)
    if value is None or value.strip() == "default":
        return None
    chosen = {ALIASES.get(name, name) for name in split_rules(value)}
    unknown = sorted(chosen - set(names))
    if unknown:
        cfg.warnings.append(f"--tools: arnes has no tool {', '.join(unknown)}; not offered")
    return chosen & set(names)


def chosen_session_id(args: argparse.Namespace, traces: Path) -> str | None:
    """`--session-id`: a UUID no session here has used yet (Claude Code's rule)."""
    value = getattr(args, "session_id", None)
    if not value:
        return None
    try:
        chosen = str(uuid.UUID(value))
    except ValueError:
        raise ConfigError(f"--session-id {value!r} is not a UUID") from None
    if args.resume is not None and not getattr(args, "fork_session", False):
        raise ConfigError(
            "--session-id names a new session; it goes with --resume or --continue only with --fork-session"
        )
    if (traces / f"{chosen}.jsonl").exists():
        raise ConfigError(f"--session-id {chosen} is already in use here")
    return chosen
