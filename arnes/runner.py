"""Settings + flags -> a Session -> a run -> what the user sees and the exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from arnes.agent.budget import Budget
from arnes.agent.events import EventBus, Notice, ResumedAt, Retry, Subscriber
from arnes.agent.listing import visible_files
from arnes.agent.loop import Agent, RunResult
from arnes.agent.named import names_a_file
from arnes.agent.run_context import Limits, Role
from arnes.agent.sessions import refusal, remember
from arnes.agent.trace import JsonlTrace
from arnes.agent.transcript import open_transcript, transcript_file
from arnes.cliargs import workspace_of
from arnes.closing import close
from arnes.config import EffectiveConfig, ModelSettings, RoleName
from arnes.config_flags import (
    apply_claude_flags,
    chosen_session_id,
    note_plugin_dirs,
    note_sources,
    offered_tools,
    system_prompts,
)
from arnes.envlimits import env_limits, output_tokens
from arnes.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_LIMIT, EXIT_OK, EXIT_RED, ConfigError
from arnes.extensions.hooks_config import FailMode
from arnes.host.files import HostFiles, open_log
from arnes.llm.base import AUTH_TOKEN_ENV, PROFILES, Provider, ProviderSettings, bad_url
from arnes.llm.claude_ids import model_for
from arnes.llm.factory import make_provider
from arnes.llm.models import defaults_for
from arnes.llm.pricing import Price, price_for
from arnes.llm.profiles import FormatChoice, Profile, profile_for
from arnes.llm.recovering import RecoveringProvider
from arnes.llm.retry import RetryingProvider
from arnes.llm.window import probe_window
from arnes.messages import Message
from arnes.permissions.approvers import Approver, choose_approver
from arnes.permissions.rules import RuleError, SourcedRule, parse_rule
from arnes.safe import terminal_console
from arnes.sandbox.base import Sandbox
from arnes.session import NON_INTERACTIVE_TURNS, Session, default_tools, new_session_id, open_shared
from arnes.tools.structured import StructuredAnswer
from arnes.ui.render import TerminalRenderer
from arnes.ui.stdout import PipedConsole, Stdout
from arnes.workflow.verify import Verifier
from arnes.workspace_trust import say, trusted_config, warn_withheld_keys

if TYPE_CHECKING:
    from arnes.extensions.agents import Catalog
    from arnes.extensions.hooks import HookRunner
    from arnes.extensions.output_styles import OutputStyle
    from arnes.mcp.client import McpHub
    from arnes.mcp.sdk_relay import Relay
    from arnes.rewind.checkpoints import Checkpoints

CONTINUE = "Continue with the task where you left off."
HooksAround = Callable[["HookRunner | None", FailMode], "HookRunner"]  # a caller's hooks around the settings'

DEFAULT_TIMEOUT = 600.0  # seconds before the first byte: a CPU reading a 5k-token prompt needs minutes
DEFAULT_READ_TIMEOUT = 300.0  # seconds between chunks: a reasoning model may think quietly for a while


def apply_settings_env(cfg: EffectiveConfig) -> None:
    """Your settings' `env` (Claude Code's key), as Claude Code applies it: set in arnes's own
    environment when the run starts (a provider's base URL counts); what commands see of it is
    `EffectiveConfig.commands_see`."""
    for name, value in cfg.env.items():
        os.environ[name] = value


def claude_model(cfg: EffectiveConfig) -> str | None:
    """~/.claude/settings.json's `model`, below --model and arnes's own settings: Claude Code's
    aliases mapped as in command and agent files (llm/claude_ids.py), on Anthropic's API only;
    for another provider, one warning that it was not used."""
    if cfg.claude_model is None:
        return None
    name, path = cfg.claude_model
    if cfg.provider != "anthropic":
        cfg.warnings.append(
            f"{path}: model {name!r} not used: it names a model of Anthropic's API and this run's provider is "
            f"{cfg.provider} (choose one with --model or model.name in arnes's settings)"
        )
        return None
    return model_for(name, "anthropic")[0]


MODEL_ENV = "ANTHROPIC_MODEL"


def env_model(cfg: EffectiveConfig) -> str | None:
    """ANTHROPIC_MODEL (your shell or your settings' `env`), as Claude Code orders it: below --model,
    above every settings file's model; aliases mapped as in command files. Only for Anthropic's API:
    for another provider it names no model that provider serves, so it is not used."""
    name = os.environ.get(MODEL_ENV, "").strip()
    if not name or cfg.provider != "anthropic":
        return None
    return model_for(name, "anthropic")[0]


def resolve_config(args: argparse.Namespace, workspace: Path, *, ask: bool = True) -> EffectiveConfig:
    """Settings files first, flags last; bad flags are reported like bad settings."""
    # At a terminal the user is asked about trust, except with -p (a print run never asks, as in Claude Code).
    terminal = ask and not getattr(args, "print", False) and sys.stdin.isatty() and sys.stderr.isatty()
    note_plugin_dirs(args)  # before the settings: they read the plugins
    note_sources(args)  # and which of them to read
    cfg = trusted_config(workspace, getattr(args, "trust", False), terminal)
    apply_settings_env(cfg)
    for kind in ("allow", "ask", "deny"):
        for raw in getattr(args, kind):
            try:
                parse_rule(raw)
            except RuleError as exc:
                raise ConfigError(f"--{kind}: {exc}") from exc
            cfg.rules.append(SourcedRule(kind, raw, "flag"))
    for name in ("context_window", "max_turns", "max_tokens", "max_cost", "max_output_tokens", "timeout"):
        value = getattr(args, name, None)
        if value is not None and value <= 0:
            raise ConfigError(f"--{name.replace('_', '-')} must be a positive number, not {value}")
    cfg.provider = args.provider or cfg.provider
    cfg.model = args.model or env_model(cfg) or cfg.model or claude_model(cfg)
    if args.base_url:
        if why := bad_url(args.base_url):
            raise ConfigError(f"--base-url {why}")
        cfg.base_url, cfg.base_url_from = args.base_url, "flag"
    cfg.script = args.script or cfg.script
    if args.context_window:
        cfg.context_window, cfg.context_source = args.context_window, "flag"
    from_env, said = output_tokens(os.environ)  # Claude Code's CLAUDE_CODE_MAX_OUTPUT_TOKENS: below the flag
    cfg.warnings += [w for w in said if w not in cfg.warnings]
    cfg.max_output_tokens = getattr(args, "max_output_tokens", None) or from_env or cfg.max_output_tokens
    temperature = getattr(args, "temperature", None)
    if temperature is not None and not 0 <= temperature <= 2:
        raise ConfigError(f"--temperature must be between 0 and 2, not {temperature}")
    cfg.temperature = temperature if temperature is not None else cfg.temperature
    cfg.timeout = getattr(args, "timeout", None) or cfg.timeout
    cfg.steering = getattr(args, "steering", None) or cfg.steering
    cfg.edit_format = getattr(args, "edit_format", None) or cfg.edit_format
    apply_claude_flags(args, cfg, workspace)  # --permission-mode and Claude Code's spellings (config_flags.py)
    cfg.sandbox = args.sandbox or cfg.sandbox
    cfg.max_turns = args.max_turns or cfg.max_turns
    cfg.max_tokens = getattr(args, "max_tokens", None) or cfg.max_tokens
    cfg.max_cost = getattr(args, "max_cost", None) or cfg.max_cost
    cfg.progress = getattr(args, "progress", False) or cfg.progress
    warn_withheld_keys(cfg)
    return cfg


HELPED_KEY = "ANTHROPIC_API_KEY"  # the key Claude Code's apiKeyHelper gives


def _helper_key(cfg: EffectiveConfig) -> str | None:
    """The key the user's apiKeyHelper prints, when the environment has none (run once a run); not
    with ANTHROPIC_AUTH_TOKEN, which Claude Code prefers to the helper (llm/base.py `auth_token`)."""
    if cfg.key_helper is None or os.environ.get(HELPED_KEY) or os.environ.get(AUTH_TOKEN_ENV):
        return None
    if cfg.helper_key is None:
        from arnes.host.key_helper import run_key_helper

        cfg.helper_key = run_key_helper(cfg.key_helper)
    return cfg.helper_key


def _settings(
    chosen: ModelSettings, cfg: EffectiveConfig, stream: bool, window: int | None, role: RoleName | None = None
) -> ProviderSettings:
    """One provider's request settings: the role's own, else the session's, else the model's defaults."""
    name = chosen.provider or cfg.provider
    profile = PROFILES[name]
    model = chosen.name or (cfg.model if name == cfg.provider else None) or profile.default_model
    base_url = chosen.base_url or (cfg.base_url if name == cfg.provider else None)
    repo_url = cfg.repo_chose_url(role) if chosen.base_url else base_url is not None and cfg.repo_chose_url()
    if base_url and (why := bad_url(base_url)):  # a settings file's (the flag's is checked in resolve_config)
        raise ConfigError(f"{name} base_url {why} (settings: model.base_url, or models.ROLE.base_url)")
    defaults = defaults_for(model)
    steers = profile_for(model, cfg.steering, cast(FormatChoice | None, cfg.edit_format)).steering != "off"
    temperature = next((t for t in (chosen.temperature, cfg.temperature) if t is not None), defaults.temperature)
    return ProviderSettings(
        provider=name,
        model=model,
        base_url=base_url,
        api_key=_helper_key(cfg) if profile.api_key_env == HELPED_KEY and not repo_url else None,
        script=chosen.script or cfg.script,
        stream=stream,
        env_key=not repo_url,  # a key from the environment never goes to a URL a repository chose
        max_output_tokens=chosen.max_output_tokens or cfg.max_output_tokens or defaults.max_output_tokens,
        temperature=temperature,
        max_tokens_key=defaults.max_tokens_key,
        timeout=chosen.timeout or cfg.timeout or DEFAULT_TIMEOUT,
        read_timeout=chosen.read_timeout or cfg.read_timeout or DEFAULT_READ_TIMEOUT,
        context_window=window,
        text_calls=steers,
    )


def _provider(
    chosen: ModelSettings, cfg: EffectiveConfig, stream: bool, window: int | None, role: RoleName | None = None
) -> tuple[Provider, str, str]:
    settings = _settings(chosen, cfg, stream, window, role)
    return _made(settings), settings.provider, settings.model


def _made(settings: ProviderSettings) -> Provider:
    provider = make_provider(settings)
    if settings.text_calls:  # the profile steers: calls printed as text are read as calls
        provider = RecoveringProvider(provider, settings.max_output_tokens)
    return provider


def _draw_provider(cfg: EffectiveConfig, stream: bool, window: int | None, profile: Profile) -> Provider | None:
    """The main model sampled as the profile draws (adapt/draws.py), when its pieces draw."""
    if not profile.draws_per_turn:
        return None
    settings = _settings(ModelSettings(), cfg, stream, window)
    if settings.provider == "script":  # a script is not sampled, and a second copy would start over
        return None
    return _made(replace(settings, temperature=profile.draw_temperature, top_p=profile.draw_top_p))


def resolve_window(cfg: EffectiveConfig, settings: ProviderSettings) -> tuple[int, str]:
    """The flag, the settings, the server (llama.cpp, Ollama), then the profile, in that order."""
    if cfg.context_window:
        return cfg.context_window, cfg.context_source
    profile = PROFILES[settings.provider]
    found = probe_window(
        settings.provider,
        settings.base_url or profile.default_base_url,
        settings.model,
        profile.default_context_window,
    )
    if found:
        return found.tokens, found.source
    return profile.default_context_window, "profile"


def build_session(
    args: argparse.Namespace,
    workspace: Path,
    cfg: EffectiveConfig,
    session_id: str | None = None,
    *,
    interactive: bool = False,
    approver: Approver | None = None,
    verify: str | None = None,
    verify_rounds: int = 3,
    self_check: bool = True,
    models: tuple[Provider, dict[Role, Provider]] | None = None,
    trace: Path | None = None,
    extra_hooks: HooksAround | None = None,
    mcp_relay: Relay | None = None,
    task: str | None = None,
) -> Session:
    """The session of a run, built whole: its parts (sandbox, hooks, MCP servers, checkpoints, the
    verifier) are made first and given to it, never set on it afterwards.

    A run nobody watches gets a turn limit even when none was set. `verify`: a verify command, or
    "auto" for the detected one (`--verify`); `self_check` False where the caller runs the tests
    itself; `models`: the main provider and roles to share (a team's nodes play one model);
    `trace`: the trace's path, when not the session's own under .arnes/traces/; `extra_hooks`:
    a caller's hooks around the settings' (the Agent SDK's callbacks, headless/sdk_hooks.py);
    `mcp_relay`: the Agent SDK's channel to its in-process MCP servers (mcp/sdk_relay.py);
    `task`: the run's first request, when known (the `auto` edit format is chosen by it)."""
    stream = cfg.stream and not args.no_stream
    from_env, said = env_limits(os.environ)  # after the settings' env was applied (resolve_config)
    cfg.warnings += [w for w in said if w not in cfg.warnings]  # a team builds several sessions
    window, window_source = resolve_window(cfg, _settings(ModelSettings(), cfg, stream, None))
    main, main_name, main_model = _provider(ModelSettings(), cfg, stream, window)
    roles: dict[Role, Provider] = {}
    in_use = {(main_name, main_model)}
    for role, chosen in cfg.roles.items():
        provider, name, model = _provider(chosen, cfg, stream, window, role)
        roles[role] = provider
        in_use.add((name, model))
    overrides = {model: Price(p.input, p.output) for model, p in cfg.prices.items()}
    prices: dict[str, Price] = {}
    for name, model in sorted(in_use):
        price = price_for(name, model, overrides)
        if price is None and cfg.max_cost is not None:
            raise ConfigError(
                f'--max-cost needs a price for model {model!r}: add it under "pricing" in settings '
                f'(e.g. "pricing": {{"{model}": {{"input": 3.0, "output": 15.0}}}}, USD per million tokens)'
            )
        if price is not None:
            prices[model] = price
    profile = profile_for(main_model, cfg.steering, cast(FormatChoice | None, cfg.edit_format))
    builtin = [tool.name for tool in default_tools()]
    offered = offered_tools(args, builtin, cfg)
    system_base, system_append = system_prompts(args, workspace)
    session_id = session_id or new_session_id()
    bus = EventBus()

    def retrying(provider: Provider) -> Provider:
        return RetryingProvider(provider, on_retry=lambda n, delay, err: bus.emit(Retry(n, delay, err)))

    if models is not None:
        main_provider, all_roles = models
    else:
        main_provider, all_roles = retrying(main), {role: retrying(p) for role, p in roles.items()}
        drawing = _draw_provider(cfg, stream, window, profile)
        if drawing is not None:
            all_roles["draw"] = retrying(drawing)

    def switch(provider: Provider, model: str) -> Provider:
        chosen = ModelSettings(provider=provider.name if provider.name in PROFILES else None, name=model)
        return retrying(_provider(chosen, cfg, stream, window)[0])

    if cfg.fallback_model and models is None:
        main_provider = with_fallback(main_provider, cfg.fallback_model, switch, bus)

    checkpoints = make_checkpoints(workspace.resolve(), session_id, cfg)
    shared = open_shared(
        workspace.resolve(), cfg.mode, cfg.rules, cfg.sandbox, cfg.network, cfg.commands_see(),
        tuple(cfg.read_paths), on_write=checkpoints.before_write if checkpoints is not None else None,
    )  # fmt: skip
    ws, sandbox = shared.engine.workspace, shared.sandbox
    if profile.edit_format == "auto":
        profile = profile.for_task(task is None or names_a_file(task, visible_files(ws, shared.engine)))
    writer = {"whole": "Write", "search-replace": "Edit"}.get(profile.edit_format)
    if offered is not None and writer is not None and writer not in offered:
        profile = replace(profile, edit_format="tools")  # `--tools` without it: the reply changes no file either
    # `--tools` is the user's own list: it replaces the profile's, which only decides when nobody said.
    hidden = profile.not_offered if offered is None else tuple(name for name in builtin if name not in offered)
    hooks: HookRunner | None = None
    if any(entry.runs for entry in cfg.hooks):
        from arnes.extensions.hooks import Hooks

        hooks = Hooks(cfg.hooks, ws, sandbox, shared.spec, cfg.hooks_fail)
    if extra_hooks is not None:
        hooks = extra_hooks(hooks, cfg.hooks_fail)
    say_plugin_gaps(cfg, workspace)
    mcp = None
    if cfg.mcp_servers:  # started behind the banner (agent/loop.py): start-up does not wait for them
        from arnes.mcp.start import make_hub

        mcp = make_hub(
            shared, cfg.mcp_servers, network=cfg.network, env_passthrough=tuple(cfg.env_passthrough),
            start_ms=from_env.mcp_start_ms, relay=mcp_relay,
        )  # fmt: skip
    lsp = None
    if cfg.lsp_servers:
        from arnes.lsp.hub import make_lsp_hub
        from arnes.mcp.start import sandbox_mode

        lsp = make_lsp_hub(cfg.lsp_servers, ws, shared.spec, sandbox_mode(shared.sandbox))
    return Session(
        workspace=ws,
        provider=main_provider,
        roles=all_roles,
        model_switch=switch,
        bus=bus,
        shared=shared,
        steering_set=profile.steering,
        draws=profile.draws_per_turn,
        edit_format=profile.edit_format,
        hidden_tools=hidden,
        test_command=cfg.configured_tests(),
        test_timeout=cfg.verify_timeout,
        mode=cfg.mode,
        rules=cfg.rules,
        sandbox_mode=cfg.sandbox,
        network=cfg.network,
        env_passthrough=cfg.commands_see(),
        read_paths=tuple(cfg.read_paths),
        approver=approver or prompt_tool(cfg, mcp) or choose_approver(sys.stdin, sys.stderr),
        never_ask=cfg.never_ask,
        instructions_bytes=cfg.instructions_bytes,
        env_limits=from_env,
        system_base=system_base,
        system_append=system_append,
        limits=Limits(max_turns=cfg.max_turns or (None if interactive else NON_INTERACTIVE_TURNS)),
        budget=Budget(max_tokens=cfg.max_tokens, max_cost=cfg.max_cost, prices=prices),
        context_window=window,
        context_source=window_source,
        id=session_id,
        # The project's tests run on arnes's own initiative only where they cannot reach the host:
        # in bubblewrap, or in a folder the user trusts (as the ladder, handoff and team commands).
        self_check=self_check
        and not getattr(args, "no_self_check", False)
        and (sandbox.name == "bubblewrap" or cfg.trusted),
        verifier=make_verifier(ws, sandbox, None if verify == "auto" else verify, verify_rounds, cfg)
        if verify is not None
        else None,
        checkpoints=checkpoints,
        agents=agent_catalog(HostFiles(ws, shared.engine), cfg),
        output_style=output_style(HostFiles(ws, shared.engine), cfg),
        structured=StructuredAnswer(cfg.json_schema) if cfg.json_schema is not None else None,
        mcp=mcp,
        lsp=lsp,
        hooks=hooks,
        trace_path=trace or trace_file(args, ws, session_id),
        transcript_path=transcript_file(ws, session_id) if hooks is not None else None,
    )


def trace_file(args: argparse.Namespace, workspace: Path, session_id: str) -> Path:
    """`--trace`, else the session's own trace under .arnes/traces/."""
    return Path(args.trace) if getattr(args, "trace", None) else workspace / ".arnes" / "traces" / f"{session_id}.jsonl"


def copy_trace(files: HostFiles, source: Path, into: Path) -> None:
    """A fork's trace starts as a copy of the trace it forks, so resuming the fork resumes all of it."""
    text = files.read_text(str(source.relative_to(files.root)))
    if text is None:
        raise ConfigError(f"cannot fork {source}: it is gone")
    handle = open_log(into, files.root)
    if handle is None:
        into.parent.mkdir(parents=True, exist_ok=True)
        handle = into.open("a", encoding="utf-8")
    with handle:
        handle.write(text)


def make_checkpoints(workspace: Path, session_id: str, cfg: EffectiveConfig) -> Checkpoints | None:
    """Rewind's checkpoints (DESIGN §17), unless the user's settings turn them off; a session that
    starts in plan mode has them too (an approved plan, `/mode`, may let it write)."""
    if cfg.rewind.enabled is False:
        return None
    from arnes.rewind.checkpoints import MB, MOST_FILE_BYTES, MOST_STORE_BYTES, Checkpoints
    from arnes.rewind.store import store_for

    settings = cfg.rewind
    return Checkpoints(
        workspace,
        session_id,
        store_for(workspace),
        most_file_bytes=settings.max_file_mb * MB if settings.max_file_mb else MOST_FILE_BYTES,
        most_store_bytes=settings.max_storage_mb * MB if settings.max_storage_mb else MOST_STORE_BYTES,
    )


def agent_catalog(host: HostFiles, cfg: EffectiveConfig) -> Catalog:
    """The agent definitions Delegate may name; what was refused or ignored is said once, on stderr."""
    from arnes.extensions.agents import given_agents, load_catalog
    from arnes.extensions.locations import one_warning

    catalog = load_catalog(host, trusted=cfg.trusted)
    if (warning := one_warning("agent definition files", catalog.warnings)) is not None:
        cfg.said.append(say(warning))
    if cfg.agents is not None:
        given, warnings = given_agents(cfg.agents, "--agents")
        catalog.add_given(given)
        cfg.said += [say(w) for w in warnings]
    return catalog


def output_style(host: HostFiles, cfg: EffectiveConfig) -> OutputStyle | None:
    """The style the settings choose (None: arnes's default); a name that cannot be used, or a
    style file that was refused, is said once, on stderr."""
    from arnes.extensions.locations import one_warning
    from arnes.extensions.output_styles import load_styles

    styles = load_styles(host, trusted=cfg.trusted)
    if (warning := one_warning("output style files", [r.why for r in styles.refused])) is not None:
        cfg.said.append(say(warning))
    style, warning = styles.choose(cfg.output_style, cfg.output_style_from)
    if warning is not None:
        cfg.said.append(say(warning))
    return style


def say_plugin_gaps(cfg: EffectiveConfig, workspace: Path) -> None:
    """What the user's Claude Code plugins hold that arnes does not run (extensions/plugins.py),
    or an enabled one it cannot find: one line on stderr, once a session."""
    from arnes.extensions.locations import one_warning
    from arnes.extensions.plugins import enabled_plugins

    if (warning := one_warning("plugins", enabled_plugins(None, workspace)[1])) is not None:
        cfg.said.append(say(warning))


@dataclass
class Prepared:
    """A session ready to run, with the conversation it continues (`--resume`) and its trace."""

    session: Session
    cfg: EffectiveConfig
    history: list[Message] | None
    trace_path: Path | None


def prompt_tool(cfg: EffectiveConfig, hub: McpHub | None) -> Approver | None:
    """`--permission-prompt-tool mcp__SERVER__TOOL`: that tool answers what would be asked (mcp/approver.py)."""
    given = cfg.permission_prompt_tool
    if not given:
        return None
    from arnes.mcp.approver import McpApprover, parse_tool

    servers = list(hub.servers) if hub is not None else []
    found = parse_tool(given, servers)
    if found is None or hub is None:
        known = ", ".join(servers) or "none"
        raise ConfigError(
            f"--permission-prompt-tool {given}: no MCP server of this run offers it (servers: {known}); "
            "name a tool as mcp__SERVER__TOOL of a server in --mcp-config or your settings"
        )
    return McpApprover(hub, *found)


def with_fallback(
    main: Provider, fallback: str, switch: Callable[[Provider, str], Provider], bus: EventBus
) -> Provider:
    """`--fallback-model`: the main model until it stays overloaded, then `fallback` (llm/fallback.py)."""
    from arnes.llm.fallback import FallbackProvider

    if fallback == main.model:
        raise ConfigError(f"--fallback-model {fallback}: that is the main model; name another one")

    def said(failed: str, chosen: str, why: str) -> None:
        bus.emit(
            Notice("warning", f"warning: {failed} is overloaded ({why}); going on with {chosen} (--fallback-model)")
        )

    return FallbackProvider(main, fallback=fallback, make=lambda name: switch(main, name), on_switch=said)


def prepare(
    args: argparse.Namespace,
    *,
    workspace: Path | None = None,
    approver: Approver | None = None,
    extra_hooks: HooksAround | None = None,
    mcp_relay: Relay | None = None,
    task: str | None = None,
) -> Prepared:
    from arnes.agent.resume import find_trace, read_history

    ws = workspace_of(args, workspace)
    cfg = resolve_config(args, ws)
    history = None
    session_id = chosen_session_id(args, ws / ".arnes" / "traces")
    trace_path = Path(args.trace) if args.trace else None
    history_from = written = None
    if getattr(args, "fork_session", False) and args.resume is None:
        raise ConfigError("--fork-session goes with --resume ID or --continue: it names the session to fork")
    cut_at, drops = getattr(args, "resume_session_at", None), getattr(args, "resume_drops_turn", None)
    if (cut_at is not None or drops is not None) and args.resume is None:
        flag = "--resume-session-at" if cut_at is not None else "--resume-drops-turn"
        raise ConfigError(f"{flag} goes with --resume ID or --continue: it cuts the session that resumes")
    if args.resume is not None:
        history_from = find_trace(HostFiles(ws), args.resume or None, lambda trace: refusal(ws, trace))
        if getattr(args, "fork_session", False):
            session_id = session_id or new_session_id()
            written = trace_path or trace_file(args, ws, session_id)
            copy_trace(HostFiles(ws), history_from, written)
        else:
            trace_path, session_id = history_from, history_from.stem
            written = trace_path
    session = build_session(
        args, ws, cfg, session_id, approver=approver, verify=args.verify, verify_rounds=args.verify_rounds,
        trace=trace_path, extra_hooks=extra_hooks, mcp_relay=mcp_relay, task=task,
    )  # fmt: skip
    if history_from is not None:
        history = read_history(session.host, history_from, cut_at, drops)
        if cut_at is not None and written is not None:  # a later resume of this trace starts from the cut too
            note_cut(written, ws, cut_at)
    return Prepared(session, cfg, history, trace_path)


def note_cut(trace: Path, workspace: Path, at: str) -> None:
    """`--resume-session-at`: the trace says where the conversation goes on from, before anything new."""
    log = JsonlTrace(trace, open_log(trace, workspace))
    try:
        log(ResumedAt(at))
    finally:
        log.close()


def run_task(args: argparse.Namespace, task: str, *, workspace: Path | None = None) -> int:
    ready = prepare(args, workspace=workspace, task=task)
    if task.startswith("/"):  # a custom command (DESIGN §13): its prompt, tools and model for this run
        from arnes.extensions.command_turn import one_shot

        task = one_shot(ready.session, ready.cfg, task)
    return execute(args, ready.session, ready.cfg, task or CONTINUE, history=ready.history)


def check_sandbox(workspace: Path, cfg: EffectiveConfig, what: str) -> Sandbox:
    """The sandbox for the project's own commands run by arnes (the ladder, handoff, team and
    feature verify commands): the agent's. Where it is not bubblewrap, only a trusted folder's
    commands run (they would reach the home folder, the network and the keys of the parent)."""
    from arnes.permissions.engine import RuleEngine
    from arnes.session import workspace_sandbox

    engine = RuleEngine(workspace, cfg.mode, list(cfg.rules))
    _, sandbox = workspace_sandbox(engine, cfg.sandbox, cfg.network, cfg.commands_see(), tuple(cfg.read_paths))
    if sandbox.name != "bubblewrap" and not cfg.trusted:
        raise ConfigError(
            f"{what} would run this project's own commands outside bubblewrap (sandbox: {sandbox.name}) in a "
            "folder you have not trusted; trust it (`arnes trust`, or --trust for one run) or install bubblewrap"
        )
    return sandbox


def make_verifier(
    workspace: Path, sandbox: Sandbox, command: str | None, rounds: int, cfg: EffectiveConfig
) -> Verifier | None:
    """The given command, else the configured one, else the detected one.

    `--verify auto` where nothing fits (a docs-only folder, a new project without tests) runs
    without verification and says so: failing the run over a missing test suite turned good
    work into an error (seen with a 1.5B model)."""
    found = None if command else cfg.test_command(workspace)
    chosen = command or (found.command if found else None)
    if not chosen:
        print(
            "arnes: --verify auto: no verify command fits this workspace (none of pytest, npm test, cargo test, "
            "go test, make test); running without verification. Pass one (--verify 'pytest -q') or set "
            "verify.command in settings.",
            file=sys.stderr,
        )
        return None
    if rounds < 0:
        raise ConfigError(f"--verify-rounds must be 0 or more, not {rounds}")
    return Verifier(chosen, workspace, sandbox, rounds)


def execute(
    args: argparse.Namespace,
    session: Session,
    cfg: EffectiveConfig,
    task: str,
    *,
    history: list[Message] | None = None,
) -> int:
    """Subscribe the output format's subscriber and the trace, run the loop, close the run (the
    subscriber prints the closing); return the exit code."""
    output = OUTPUTS[args.output_format]
    with subscribe(args, session, cfg, output.made(session, cfg, Stdout())) as trace_path:
        if history:
            session.bus.emit(Notice("info", f"resuming session {session.id} ({len(history)} messages)"))
        result = Agent(session, history).run(task)
    # Closed once the trace is closed and remembered: whoever reads the result may resume at once.
    close(session, cfg, task, result, trace_path, diffs=output.diffs)
    return exit_code(result)


@dataclass(frozen=True)
class Output:
    """How one output format shows a run: the subscriber that prints it, closing included, and
    whether that closing shows the diffs (worth reading the changed files for)."""

    made: Callable[[Session, EffectiveConfig, Stdout], Subscriber]
    diffs: bool = False


def _terminal(session: Session, cfg: EffectiveConfig, out: Stdout) -> Subscriber:
    """The terminal renderer, printing through `out`: a reader that goes away ends the run quietly."""
    renderer = TerminalRenderer(terminal_console(kind=PipedConsole))
    return lambda event: out.guard(lambda: renderer(event))


def _json(format: str) -> Callable[[Session, EffectiveConfig, Stdout], Subscriber]:
    def made(session: Session, cfg: EffectiveConfig, out: Stdout) -> Subscriber:
        from arnes.headless.output import Headless

        return Headless.made(format, session, cfg, out)

    return made


OUTPUTS = {
    "text": Output(_terminal, diffs=True),
    "json": Output(_json("json")),
    "stream-json": Output(_json("stream-json")),
}


@contextmanager
def subscribe(
    args: argparse.Namespace,
    session: Session,
    cfg: EffectiveConfig,
    output: Subscriber | None = None,
    root: Path | None = None,
) -> Iterator[Path]:
    """The run's output, the JSONL trace (at the session's `trace_path`) and, with hooks, the
    transcript they read, listening to the session for the block's length.

    `output` is subscribed first (default: a terminal renderer in the text format, else none), so
    it hears the warnings said here. A trace inside `root` (default: the session's workspace) is
    opened through no link there.
    """
    if output is None and args.output_format == "text":
        output = TerminalRenderer()
    if output is not None:
        session.bus.subscribe(output)
    path = session.trace_path or trace_file(args, session.workspace, session.id)
    if path == trace_file(argparse.Namespace(), session.workspace, session.id):
        from arnes.dotdir import ensure_arnes_dir

        ensure_arnes_dir(session.workspace)
    try:
        trace = JsonlTrace(path, open_log(path, root or session.workspace))
    except OSError as exc:
        raise ConfigError(f"cannot write the trace to {path}: {exc.strerror or exc}") from exc
    session.bus.subscribe(trace)
    transcript = open_transcript(session.workspace, session.id) if session.transcript_path is not None else None
    if transcript is not None:
        session.bus.subscribe(transcript)
    for warning in cfg.warnings:
        session.bus.emit(Notice("warning", f"warning: {warning}"))
    try:
        yield path
    finally:
        trace.close()
        if transcript is not None:
            transcript.close()
        remember(session.workspace, path)  # outside the workspace: `-c` continues only what arnes wrote


def exit_code(result: RunResult) -> int:
    if result.stop_reason == "end_turn" and result.verified is False:
        return EXIT_RED
    return {
        "end_turn": EXIT_OK,
        "max_turns": EXIT_LIMIT,
        "budget": EXIT_LIMIT,
        "stuck": EXIT_LIMIT,
        "interrupted": EXIT_INTERRUPTED,
        "max_tokens": EXIT_LIMIT,  # cut at the output cap again and again: a limit, like turns
    }.get(result.stop_reason, EXIT_FAIL)
