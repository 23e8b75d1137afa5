"""`arnes check` (the ladder), `arnes handoff` (clean to hand over?), `arnes checker TASK`."""

from __future__ import annotations

import argparse
from pathlib import Path

from arnes.cliargs import parse_subcommand
from arnes.errors import ConfigError
from arnes.safe import terminal_console, visible
from arnes.sandbox.base import Sandbox
from arnes.workflow.verify import Verdict


def run_check_ladder(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.errors import EXIT_OK, EXIT_RED
    from arnes.runner import check_sandbox, resolve_config
    from arnes.workflow.ladder import climb

    parse_subcommand(
        argparse.ArgumentParser(prog="arnes check", description="Run unit -> integration -> e2e."), rest, args
    )
    ws = workspace_of(args)
    cfg = resolve_config(args, ws)
    rungs = dict(cfg.ladder)
    if not rungs:
        found = cfg.test_command(ws)
        command = found.command if found else None
        if not command:
            raise ConfigError("no ladder: set verify.ladder.unit/integration/e2e (or verify.command) in settings")
        rungs = {"unit": command}
    console = terminal_console()

    def show(name: str, verdict: Verdict) -> None:
        state = "green" if verdict.passed else f"red (exit {verdict.exit_code})"
        shown = f"{name}: {visible(verdict.command)} -> {state}"
        console.print(shown, style="green" if verdict.passed else "red", markup=False)
        if not verdict.passed:
            console.print(visible(verdict.output[-2000:]), style="dim", markup=False)

    result = climb(rungs, ws, check_sandbox(ws, cfg, "arnes check"), show)
    if result.passed:
        console.print(f"ladder green: {', '.join(n for n, _ in result.ran)}", markup=False)
        return EXIT_OK
    console.print(f"ladder stopped at {result.failed_at}: fix it before the next rung", style="red", markup=False)
    return EXIT_RED


def run_handoff(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.errors import EXIT_OK, EXIT_RED
    from arnes.runner import check_sandbox, resolve_config

    parse_subcommand(
        argparse.ArgumentParser(prog="arnes handoff", description="Is the workspace clean to hand over?"), rest, args
    )
    ws = workspace_of(args)
    cfg = resolve_config(args, ws)
    found = cfg.test_command(ws)
    tests = found.command if found else None
    sandbox = check_sandbox(ws, cfg, "arnes handoff") if (tests or cfg.verify_build) else None
    return EXIT_OK if print_handoff(ws, cfg.verify_build, tests, sandbox=sandbox) else EXIT_RED


def print_handoff(
    ws: Path, build: str | None, tests: str | None, quiet_skips: bool = False, sandbox: Sandbox | None = None
) -> bool:
    from arnes.workflow.handoff import SKIPPED, inspect

    report = inspect(ws, build, tests, sandbox)
    console = terminal_console()
    for what, result in report.checks:
        if not (quiet_skips and result == SKIPPED):
            console.print(f"  {what}: {visible(result)}", markup=False)
    if report.clean:
        console.print("handoff: clean", style="green", markup=False)
    else:
        console.print("handoff: not clean", style="red", markup=False)
        for reason in report.reasons:
            console.print(f"  - {visible(reason)}", markup=False)
    return report.clean


def run_checker(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.errors import EXIT_OK, EXIT_RED
    from arnes.runner import build_session, resolve_config, subscribe
    from arnes.workflow.checker import maker_checker
    from arnes.workflow.verify import Verifier

    parser = argparse.ArgumentParser(prog="arnes checker", description="An implementer, then a read-only checker.")
    parser.add_argument("task", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    opts = parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    cfg = resolve_config(args, ws)
    found = cfg.test_command(ws)
    session = build_session(args, ws, cfg, self_check=found is None)  # the verifier runs the tests after each round
    verifier = Verifier(found.command, ws, session.sandbox) if found else None
    with subscribe(args, session, cfg) as trace_path:
        outcome = maker_checker(session, " ".join(opts.task), verifier, opts.rounds)
    state = "PASS" if outcome.passed else "FAIL"
    print(f"checker: {state} after {outcome.rounds} round(s); trace {trace_path}")
    return EXIT_OK if outcome.passed else EXIT_RED
