"""argv, environment and settings -> a Session -> a run -> an exit code.

The only module that reads flags and the environment. Heavy modules are imported inside the
functions that need them so that `arnes --help` stays fast.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from arnes import __version__

SUBCOMMANDS = ("demo", "permissions", "features", "next", "check", "handoff", "checker", "eval", "team")
SESSION_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_LIMIT, EXIT_RED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


def global_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arnes",
        description="A local coding agent for the terminal.",
        epilog="Subcommands: demo (a scripted run on a bundled example, no model needed); "
        "permissions [check TOOL PATH_OR_COMMAND] (the effective rules, or one decision explained); "
        "features; next (work on the next feature, WIP=1); check (the verification ladder); "
        "handoff (is the workspace clean to hand over?); checker TASK (maker-checker); "
        "eval [DIR] (evals; eval compare A.json B.json); team list|show NAME|run NAME TASK. "
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
    p.add_argument("--max-turns", type=int, metavar="N", help="stop after N model turns (exit 3)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="stop after N input+output tokens (exit 3)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="stop after this cost, by the price table (exit 3)")
    p.add_argument("--resume", nargs="?", const="", metavar="ID", help="continue a session (default: the latest here)")
    p.add_argument("--progress", action="store_true", help="record each task's outcome in PROGRESS.md")
    p.add_argument(
        "--verify", metavar="CMD",
        help="run CMD when the model ends its turn; red output goes back to it. "
        "`--verify auto`: verify.command from settings, else detected (pytest, npm test, cargo test, ...)",
    )  # fmt: skip
    p.add_argument("--verify-rounds", type=int, default=3, metavar="N", help="red results sent back at most (3)")
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
    from arnes.errors import ArnesError

    try:
        if command == "demo":
            return run_demo(args, rest)
        if command is not None and command != "demo":
            return dispatch(command, args, rest)
        from arnes.runner import run_task

        if args.resume is not None and args.resume and not SESSION_ID.match(args.resume):
            args.task, args.resume = [args.resume, *args.task], ""  # `--resume "do X"`: latest session, task X
        if not args.task and args.resume is None:
            if sys.stdin.isatty() and sys.stdout.isatty():
                from arnes.runner import run_interactive

                return run_interactive(args)
            print('arnes: give a TASK, e.g. arnes "add a test for pricing" (see arnes --help)', file=sys.stderr)
            return EXIT_USAGE
        return run_task(args, " ".join(args.task))
    except ArnesError as exc:  # bad settings (2), a limit (3), a model that failed (1)
        print(f"arnes: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("arnes: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def workspace_of(args: argparse.Namespace, workspace: Path | None = None) -> Path:
    from arnes.errors import ConfigError

    ws = Path(workspace or args.workspace).expanduser()
    if not ws.is_dir():
        raise ConfigError(f"workspace {ws} is not a folder")
    return ws.resolve()


def dispatch(command: str, args: argparse.Namespace, rest: list[str]) -> int:
    """Subcommands live in arnes/commands/, imported only when used."""
    from importlib import import_module

    module, function = {
        "permissions": ("permissions", "run"),
        "features": ("features", "list_features"),
        "next": ("features", "run_next"),
        "check": ("workflow", "run_check_ladder"),
        "handoff": ("workflow", "run_handoff"),
        "checker": ("workflow", "run_checker"),
        "eval": ("evals", "run"),
        "team": ("team", "run"),
    }[command]
    handler = getattr(import_module(f"arnes.commands.{module}"), function)
    code: int = handler(args, rest)
    return code


def run_demo(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.demo import run_demo as demo

    return demo(args, rest)
