"""The command line's grammar: the global options, where a subcommand starts, a subcommand's own
arguments, and the workspace they name. Below cli.py, so subcommands (arnes/commands/), the demo
and the runner read arguments without importing the entry point that dispatches to them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arnes import __version__
from arnes.cliclaude import MODES, add_options
from arnes.errors import ConfigError
from arnes.llm.profiles import pieces_of

SUBCOMMANDS = (
    "demo", "permissions", "features", "next", "check", "handoff", "checker", "eval", "team", "init", "doctor",
    "trust", "mcp", "rewind",
)  # fmt: skip


SHORT_ALIASES = ("-v", "-m", "-C", "-s", "-a")  # Claude Code's -v, Codex's -m, -C, -s, -a


class _Parser(argparse.ArgumentParser):
    """A word that starts with a dash and holds a space before any `=` is a task ("-m is broken"),
    never an option with its value attached (`-m` with " is broken")."""

    def _parse_optional(self, arg_string: str) -> Any:
        if arg_string.startswith("-") and any(c.isspace() for c in arg_string.split("=", 1)[0]):
            return None
        return super()._parse_optional(arg_string)


class NotASubcommand(Exception):
    """`arnes check the failing tests`: a subcommand's word that starts a task."""


def global_parser(after_subcommand: bool = False) -> argparse.ArgumentParser:
    """The global options; `after_subcommand` gives only the options, as they may follow a subcommand."""
    p = _Parser(
        prog="arnes",
        description="A local coding agent for the terminal.",
        epilog="Subcommands: demo (a scripted run on a bundled example, no model needed); "
        "permissions [check TOOL PATH_OR_COMMAND] (the effective rules, or one decision explained); "
        "features; next (work on the next feature, WIP=1); check (the verification ladder); "
        "handoff (is the workspace clean to hand over?); checker TASK (maker-checker); "
        "eval [DIR] (evals; eval compare A.json B.json); team list|show NAME|run NAME TASK; "
        "init (write AGENTS.md and .arnes/); doctor (what arnes found here, and the fixes). "
        "trust [DIR] (apply the folder's project settings; --list, --revoke). "
        "mcp list|add|add-json|remove (the MCP servers, their state and tools; add one as claude mcp add does). "
        "Use `arnes -- TEXT` for a task that starts like a subcommand. Global options may come "
        "before or after a subcommand.",
        add_help=not after_subcommand,
        # No prefixes: `--json` must not quietly mean `--json-schema` (Claude Code and Codex take none).
        allow_abbrev=False,
    )
    if not after_subcommand:
        p.add_argument("task", nargs="*", help="what the agent should do")
        p.add_argument("-v", "--version", action="version", version=f"arnes {__version__}")  # -v: Claude Code's
    p.add_argument(
        "-p", "--print", action="store_true",
        help="run one task and exit, never the interactive prompt; with no TASK, the task is read from stdin "
        "(piped text after a TASK is added to it)",
    )  # fmt: skip
    p.add_argument("-w", "-C", "--workspace", default=".", help="folder the agent works in (default: .; -C: Codex's)")
    p.add_argument("--provider", choices=["ollama", "openai", "anthropic", "script"])
    p.add_argument("-m", "--model", help="model name (default per provider)")
    p.add_argument("--base-url", help="endpoint of an OpenAI-compatible or Anthropic server")
    p.add_argument("--script", help="JSON script for --provider script")
    p.add_argument("--max-output-tokens", type=int, metavar="N", help="cap on one reply's tokens (default per model)")
    p.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (per model: 0.2, Qwen2.5 0)")
    p.add_argument(
        "--steering",
        type=_steering,
        metavar="SET[,-PIECE|,+PIECE...]",
        help="model-adaptation pieces: off, small or tests, less or plus pieces (default per model profile)",
    )
    p.add_argument(
        "--edit-format",
        choices=["tools", "whole", "search-replace", "auto"],
        help="how the model hands over file changes (auto: whole when the task names files, else tool calls)",
    )
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="wait for a reply's first byte (default 600)")
    p.add_argument(
        "--permission-mode", choices=MODES, help="bypassPermissions is bypass; dontAsk denies what would be asked"
    )
    p.add_argument("--allow", action="append", default=[], metavar="RULE")
    p.add_argument("--ask", action="append", default=[], metavar="RULE")
    p.add_argument("--deny", action="append", default=[], metavar="RULE")
    p.add_argument("--context-window", type=int, metavar="N")
    p.add_argument("--max-turns", type=int, metavar="N", help="stop after N model turns (exit 3; one-shot default 50)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="stop after N input+output tokens (exit 3)")
    p.add_argument(
        "--max-cost", "--max-budget-usd", type=float, metavar="USD",
        help="stop after this cost, by the price table (exit 3)",
    )  # fmt: skip
    p.add_argument("-r", "--resume", nargs="?", const="", metavar="ID", help="continue a session (default: the latest)")
    p.add_argument("-c", "--continue", dest="continue_", action="store_true", help="continue the latest session here")
    p.add_argument("--progress", action="store_true", help="record each task's outcome in PROGRESS.md")
    p.add_argument(
        "--verify", metavar="CMD",
        help="run CMD when the model ends its turn; red output goes back to it. "
        "`--verify auto`: verify.command from settings, else detected (pytest, npm test, cargo test, ...)",
    )  # fmt: skip
    p.add_argument(
        "--no-self-check", action="store_true", help="do not run the project's tests before an answer stands"
    )
    p.add_argument("--verify-rounds", type=int, default=3, metavar="N", help="red results sent back at most (3)")
    p.add_argument("--sandbox", choices=["auto", "bubblewrap", "landlock", "off"])
    p.add_argument(
        "--trust", action="store_true",
        help="trust this folder for this run: its project settings may grant (allow rules, mode, model, sandbox)",
    )  # fmt: skip
    p.add_argument("--trace", metavar="FILE", help="JSONL trace (default .arnes/traces/<session>.jsonl)")
    p.add_argument(
        "--output-format", choices=["text", "json", "stream-json"], default="text",
        help="json: one object at the end; stream-json: one object per line as the run goes (Claude Code's shape)",
    )  # fmt: skip
    p.add_argument("--no-stream", action="store_true", help="ask for whole answers (servers that cannot stream)")
    add_options(p)
    return p


def split_argv(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """(global args, subcommand, its args); a `--` makes everything after it the task."""
    i = first_word(argv)
    if i is not None and argv[i] in SUBCOMMANDS:
        return argv[:i], argv[i], argv[i + 1 :]
    return argv, None, []


def late_short_flag(argv: list[str]) -> str | None:
    """The first of the short aliases (SHORT_ALIASES) that comes after the task's first word: there it
    is a word of the task as often as an option (`arnes fix the -v flag`), so it is refused, never
    read as either; long options and -p, -w, -r, -c keep their place anywhere."""
    takes = {
        opt: action.nargs
        for action in global_parser()._actions
        for opt in action.option_strings
    }  # fmt: skip
    task, i = False, 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok == "--":
            return None
        if not tok.startswith("-") or len(tok) == 1 or any(c.isspace() for c in tok.split("=", 1)[0]):
            task = True
            continue
        if task and tok[:2] in SHORT_ALIASES:
            return tok
        nargs = takes.get(tok, 0)  # `--x=v` and `-mVALUE` carry their value
        if nargs in ("+", "*"):
            while i < len(argv) and not argv[i].startswith("-"):
                i += 1
        elif nargs == "?":
            i += 1 if i < len(argv) and not argv[i].startswith("-") else 0
        elif nargs != 0:
            i += 1 if nargs is None else int(nargs)
    return None


def first_word(argv: list[str]) -> int | None:
    """Where the first word that is no global option (nor an option's value) is; None at a `--`."""
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
            return None
        if tok.startswith("-"):
            i += 1 if ("=" in tok or tok not in takes_value) else 2
            continue
        return i
    return None


def parse_subcommand(parser: argparse.ArgumentParser, rest: list[str], args: argparse.Namespace) -> argparse.Namespace:
    """A subcommand's own arguments; global options may follow it too (`arnes next --provider script`).

    The subcommand's own options win over a global one of the same name. Plain words that the
    subcommand does not take raise NotASubcommand: they were a task (`arnes check the failing tests`).
    """
    own = set(parser._option_string_actions)
    options = global_parser(after_subcommand=True)
    for action in list(options._actions):
        if own & set(action.option_strings):
            options._remove_action(action)
            for name in action.option_strings:
                options._option_string_actions.pop(name, None)
    given, remaining = options.parse_known_args(rest)
    for key, value in vars(given).items():
        if value != options.get_default(key):
            current = getattr(args, key, None)
            setattr(args, key, [*current, *value] if isinstance(value, list) and current else value)
    words = remaining and all(not word.startswith("-") for word in remaining)
    choices = _subcommand_choices(parser)
    if words and choices and remaining[0] not in choices:
        raise NotASubcommand(*remaining)
    opts, extras = parser.parse_known_args(remaining)
    if extras:
        if words:
            raise NotASubcommand(*remaining)
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return opts


def _subcommand_choices(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def workspace_of(args: argparse.Namespace, workspace: Path | None = None) -> Path:
    ws = Path(workspace or args.workspace).expanduser()
    if not ws.is_dir():
        raise ConfigError(f"workspace {ws} is not a folder")
    return ws.resolve()


def _steering(value: str) -> str:
    """A steering value the profiles know (argparse prints the error on one line)."""
    try:
        pieces_of(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
