"""argv, environment and settings -> a Session -> a run -> an exit code.

The only module that reads flags and the environment. Heavy modules are imported inside the
functions that need them so that `arnes --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arnes import __version__

if TYPE_CHECKING:
    from arnes.agent.loop import RunResult
    from arnes.config import EffectiveConfig
    from arnes.session import Session

SUBCOMMANDS = ("demo", "permissions")
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_LIMIT, EXIT_RED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


def global_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arnes",
        description="A local coding agent for the terminal.",
        epilog="Subcommands: demo (a scripted run on a bundled example, no model needed); "
        "permissions [check TOOL PATH_OR_COMMAND] (the effective rules, or one decision explained). "
        "Use `arnes -- TEXT` for a task that starts like a subcommand.",
    )
    p.add_argument("task", nargs="*", help="what the agent should do")
    p.add_argument("--version", action="version", version=f"arnes {__version__}")
    p.add_argument("-w", "--workspace", default=".", help="folder the agent works in (default: .)")
    p.add_argument("--provider", choices=["ollama", "openai", "anthropic", "script"])
    p.add_argument("--model", help="model name (default per provider)")
    p.add_argument("--base-url", help="endpoint of an OpenAI-compatible or Anthropic server")
    p.add_argument("--script", help="JSON script for --provider script")
    p.add_argument("--permission-mode", choices=["default", "acceptEdits", "plan", "bypass"])
    p.add_argument("--allow", action="append", default=[], metavar="RULE")
    p.add_argument("--ask", action="append", default=[], metavar="RULE")
    p.add_argument("--deny", action="append", default=[], metavar="RULE")
    p.add_argument("--context-window", type=int, metavar="N")
    p.add_argument("--max-turns", type=int, metavar="N")
    p.add_argument("--sandbox", choices=["auto", "bubblewrap", "landlock", "off"])
    p.add_argument("--trace", metavar="FILE", help="JSONL trace (default .arnes/traces/<session>.jsonl)")
    p.add_argument("--output-format", choices=["text", "json"], default="text")
    p.add_argument("--no-stream", action="store_true", help="ask for whole answers (servers that cannot stream)")
    return p


def split_argv(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """(global args, subcommand, its args); a `--` makes everything after it the task."""
    parser = global_parser()
    takes_value = {
        opt
        for action in parser._actions
        if action.nargs != 0 and action.option_strings
        for opt in action.option_strings
    }
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            return argv, None, []
        if tok.startswith("-"):
            i += 1 if ("=" in tok or tok not in takes_value) else 2
            continue
        if tok in SUBCOMMANDS:
            return argv[:i], tok, argv[i + 1 :]
        return argv, None, []
    return argv, None, []


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    global_args, command, rest = split_argv(args_list)
    args = global_parser().parse_args(global_args)
    from arnes.errors import ConfigError

    try:
        if command == "demo":
            return run_demo(args, rest)
        if command == "permissions":
            from arnes.commands import permissions

            return permissions.run(args, rest)
        if not args.task:
            print(
                'arnes: give a TASK, e.g. arnes "add a test for pricing" (see arnes --help)',
                file=sys.stderr,
            )
            return EXIT_USAGE
        return run_task(args, " ".join(args.task))
    except ConfigError as exc:
        print(f"arnes: {exc}", file=sys.stderr)
        return EXIT_USAGE


def resolve_config(args: argparse.Namespace, workspace: Path) -> EffectiveConfig:
    """Settings files first, flags last; bad flags are reported like bad settings."""
    from arnes.config import load_config
    from arnes.errors import ConfigError
    from arnes.permissions.rules import RuleError, SourcedRule, parse_rule

    cfg = load_config(workspace)
    for kind in ("allow", "ask", "deny"):
        for raw in getattr(args, kind):
            try:
                parse_rule(raw)
            except RuleError as exc:
                raise ConfigError(f"--{kind}: {exc}") from exc
            cfg.rules.append(SourcedRule(kind, raw, "flag"))
    cfg.provider = args.provider or cfg.provider
    cfg.model = args.model or cfg.model
    cfg.base_url = args.base_url or cfg.base_url
    cfg.context_window = args.context_window or cfg.context_window
    cfg.mode = args.permission_mode or cfg.mode
    cfg.sandbox = args.sandbox or cfg.sandbox
    for name in ("context_window", "max_turns"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise ConfigError(f"--{name.replace('_', '-')} must be a positive number, not {value}")
    return cfg


def build_session(args: argparse.Namespace, workspace: Path, cfg: EffectiveConfig) -> Session:
    from arnes.agent.events import Retry
    from arnes.llm.base import PROFILES, ProviderSettings, make_provider
    from arnes.llm.retry import RetryingProvider
    from arnes.permissions.approvers import choose_approver
    from arnes.session import Limits, Session

    profile = PROFILES[cfg.provider]
    provider = make_provider(
        ProviderSettings(
            provider=cfg.provider,
            model=cfg.model or profile.default_model,
            base_url=cfg.base_url,
            script=args.script,
            stream=cfg.stream and not args.no_stream,
        )
    )
    session = Session(
        workspace=workspace,
        provider=provider,
        mode=cfg.mode,
        rules=cfg.rules,
        sandbox_mode=cfg.sandbox,
        network=cfg.network,
        approver=choose_approver(sys.stdin, sys.stderr),
        limits=Limits(max_turns=args.max_turns),
        context_window=cfg.context_window or profile.default_context_window,
    )
    session.provider = RetryingProvider(provider, on_retry=lambda n, delay, err: session.bus.emit(Retry(n, delay, err)))
    return session


def workspace_of(args: argparse.Namespace, workspace: Path | None = None) -> Path:
    from arnes.errors import ConfigError

    ws = Path(workspace or args.workspace).expanduser()
    if not ws.is_dir():
        raise ConfigError(f"workspace {ws} is not a folder")
    return ws.resolve()


def run_task(args: argparse.Namespace, task: str, *, workspace: Path | None = None) -> int:
    ws = workspace_of(args, workspace)
    cfg = resolve_config(args, ws)
    session = build_session(args, ws, cfg)
    return execute(args, session, cfg, task)


def execute(args: argparse.Namespace, session: Session, cfg: EffectiveConfig, task: str) -> int:
    """Wire the subscribers, run the loop, print the summary; return the exit code."""
    from arnes.agent.events import Notice
    from arnes.agent.loop import Agent
    from arnes.agent.trace import JsonlTrace
    from arnes.ui.render import TerminalRenderer

    renderer = TerminalRenderer() if args.output_format == "text" else None
    if renderer:
        session.bus.subscribe(renderer)
    trace_path = Path(args.trace) if args.trace else session.workspace / ".arnes" / "traces" / f"{session.id}.jsonl"
    trace = JsonlTrace(trace_path)
    session.bus.subscribe(trace)
    for warning in cfg.warnings:
        session.bus.emit(Notice("warning", f"warning: {warning}"))
    try:
        result = Agent(session).run(task)
    finally:
        trace.close()
    changed = session.ctx.changes.changed()
    if renderer:
        _print_changes(renderer, session, changed)
        if result.stop_reason == "error" and result.error:
            print(_provider_help(session, cfg, result.error), file=sys.stderr)
    else:
        _print_json(session, result, changed, trace_path)
    return _exit_code(result)


def _exit_code(result: RunResult) -> int:
    return {
        "end_turn": EXIT_OK,
        "max_turns": EXIT_LIMIT,
        "budget": EXIT_LIMIT,
        "interrupted": EXIT_INTERRUPTED,
    }.get(result.stop_reason, EXIT_FAIL)


def _print_changes(renderer: object, session: Session, changed: list[Path]) -> None:
    from arnes.tools.files import unified_diff
    from arnes.ui.render import TerminalRenderer

    assert isinstance(renderer, TerminalRenderer)
    if not changed:
        return
    names = ", ".join(session.ctx.display(p) for p in changed)
    renderer.console.print(f"files changed: {names}", markup=False)
    for path in changed:
        before_bytes = session.ctx.changes.originals[path]
        before = before_bytes.decode("utf-8", "replace") if before_bytes is not None else ""
        after = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        renderer.show_diff("", unified_diff(before, after, session.ctx.display(path)))


def _print_json(session: Session, result: RunResult, changed: list[Path], trace: Path) -> None:
    import json

    print(
        json.dumps(
            {
                "session": session.id,
                "result": result.text,
                "stop_reason": result.stop_reason,
                "turns": result.turns,
                "tool_calls": result.tool_calls,
                "input_tokens": result.input_tokens,
                "output_tokens": result.output_tokens,
                "files_changed": [session.ctx.display(p) for p in changed],
                "denials": result.denials,
                "error": result.error,
                "trace": str(trace),
            },
            indent=2,
        )
    )


def _provider_help(session: Session, cfg: EffectiveConfig, error: str) -> str:
    from arnes.llm.base import PROFILES

    where = cfg.base_url or PROFILES[cfg.provider].default_base_url or "the provider's default endpoint"
    return (
        f"arnes: no answer from the model. Tried provider {cfg.provider!r}, model {session.provider.model!r} "
        f"at {where}: {error}\n"
        "To configure a model:\n"
        "  - Ollama (default): run `ollama serve` and `ollama pull qwen2.5-coder:7b`\n"
        "  - Anthropic: export ANTHROPIC_API_KEY=... and use --provider anthropic\n"
        "  - any OpenAI-compatible server (vLLM, llama.cpp, OpenRouter, OpenAI): "
        "--provider openai --base-url URL --model NAME (key in OPENAI_API_KEY)\n"
        '  - or put them in .arnes/settings.json under "model"; `arnes demo` runs with no model at all.'
    )


def run_demo(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.demo import run_demo as demo

    return demo(args, rest)
