"""argv, environment and settings -> a Session -> a run -> an exit code.

With cliargs.py (the grammar), the only module that reads flags and the environment. Heavy
modules are imported inside the functions that need them so that `arnes --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from arnes.cliargs import NotASubcommand, global_parser, late_short_flag, split_argv
from arnes.errors import EXIT_INTERRUPTED, EXIT_USAGE, OutputClosed

# session ids: UUIDs (Claude Code's form, arnes's own since 2026-12), and the dated ids arnes gave before
SESSION_ID = re.compile(r"^(\d{8}-\d{6}-[0-9a-f]{6}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def main(argv: Sequence[str] | None = None) -> int:
    from arnes.ui.stdout import settle, silence

    if sys.stdout is None:  # started with stdout closed (`arnes ... >&-`): what it prints goes nowhere
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (open for the life of the process)
    try:
        return _main(argv)
    except OutputClosed:  # the reader of stdout went away: nothing more to say, to anyone
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the same, from a subcommand's plain print (`arnes rewind --list | head -1`)
        silence(sys.stdout)
        return EXIT_INTERRUPTED
    finally:
        settle()


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    global_args, command, rest = split_argv(args_list)
    parser = global_parser()
    if late := late_short_flag(global_args):
        parser.error(
            f"{late} after the task's first word: put options before the task; to write {late} in the task, "
            f"end the options with -- (arnes -p -- fix the {late} flag)"
        )
    args = parser.parse_args(global_args)
    from arnes.errors import ArnesError

    _loader_outside_workspace(args)

    try:
        if args.allowed_tools or args.disallowed_tools or args.add_dir:  # a prompt taken as their words: one line
            from arnes.config_flags import check_word_lists

            check_word_lists(args)
        if command is not None:
            try:
                return run_demo(args, rest) if command == "demo" else dispatch(command, args, rest)
            except NotASubcommand as words:
                task = " ".join([command, *words.args])
                print(
                    f'arnes: running "{task}" as a task (`arnes {command}` takes no such words; '
                    f"`arnes -- {task}` says so without this note)",
                    file=sys.stderr,
                )
                args.task = task.split(" ")
        from arnes.runner import run_task

        if args.continue_ and args.resume is None:
            args.resume = ""
        if args.resume is not None and args.resume and not SESSION_ID.match(args.resume):
            args.task, args.resume = [args.resume, *args.task], ""  # `--resume "do X"`: latest session, task X
        task = " ".join(args.task)
        if args.input_format == "stream-json":  # Claude Code's Agent SDKs: messages and control requests
            from arnes.headless.run import run_stream

            return run_stream(args, task)
        piped = read_piped_stdin() if (args.print or not task) else None
        if piped:
            task = f"{task}\n\n{piped}" if task else piped
        if not task and args.resume is None:
            if not args.print and sys.stdin.isatty() and sys.stdout.isatty():
                from arnes.commands.interactive import run_interactive

                return run_interactive(args)
            print(
                'arnes: give a TASK, e.g. arnes "add a test for pricing", or pipe it: echo TASK | arnes -p',
                file=sys.stderr,
            )
            return EXIT_USAGE
        return run_task(args, task)
    except ArnesError as exc:  # bad settings (2), a limit (3), a model that failed (1)
        from arnes.safe import visible

        print(f"arnes: {visible(str(exc))}", file=sys.stderr)  # names keys and paths a repository chose
        print_error_json(args.output_format, str(exc), exc.exit_code)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        if isinstance(exc, OutputClosed):
            raise
        print("arnes: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def read_piped_stdin() -> str | None:
    """The task (or text to add to it) from a pipe or a file on stdin; never waits on a terminal or /dev/null."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return sys.stdin.read().strip() or None


def print_error_json(output_format: str, message: str, code: int) -> None:
    """In the JSON formats, a run that could not start still answers on stdout, with Claude Code's
    result message (no session began: its id is empty)."""
    if output_format not in ("json", "stream-json"):
        return
    from arnes.ui.sdk_messages import result
    from arnes.ui.stdout import Stdout

    data = {**result(stop_reason="error", text="", session_id="", error=message), "error": message, "exit_code": code}
    if output_format == "json":
        Stdout().write(json.dumps(data, indent=2) + "\n")
    else:
        Stdout().line(data)


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
        "init": ("setup", "run_init"),
        "doctor": ("setup", "run_doctor"),
        "trust": ("trust", "run"),
        "mcp": ("mcp", "run"),
        "rewind": ("rewind", "run"),
    }[command]
    handler = getattr(import_module(f"arnes.commands.{module}"), function)
    code: int = handler(args, rest)
    return code


def run_demo(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.demo import run_demo as demo

    return demo(args, rest)


def _loader_outside_workspace(args: argparse.Namespace) -> None:
    """Before arnes starts any program: the loader's search variables name no folder of the
    workspace and no relative one (host/paths.py `loader_outside`), said once when they did; and
    arnes's own host programs are looked for away from the workspace (`note_host_path`)."""
    from arnes.host.paths import loader_outside, note_host_path

    workspace = Path(args.workspace or ".").expanduser()
    if not workspace.is_dir():
        return  # the run stops at its own check of the folder, before starting anything
    note_host_path(os.environ, workspace)  # arnes's own git and rg: never one from the workspace
    dropped = loader_outside(os.environ, workspace)
    if dropped:
        print(
            f"arnes: left out {'; '.join(dropped)} (a folder of the workspace, or relative: a sandboxed command "
            "could put a library there that arnes's own programs would load)",
            file=sys.stderr,
        )
