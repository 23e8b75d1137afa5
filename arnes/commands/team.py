"""`arnes team list | show NAME | run NAME "TASK"`."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from rich.console import Console

from arnes.cliargs import parse_subcommand
from arnes.errors import ConfigError
from arnes.safe import visible
from arnes.sandbox.base import Sandbox
from arnes.workflow.teams.clis import PROFILES, enforcement
from arnes.workflow.teams.config import Team, builtin_names, load_team, missing_definitions, project_names, team_grants
from arnes.workflow.teams.timeline import Timeline


def run(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of

    parser = argparse.ArgumentParser(prog="arnes team", description="Teams of agents with read-only roles.")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="the teams of this project and the built-in templates")
    show = sub.add_parser("show", help="an outline of a team's graph")
    show.add_argument("name")
    go = sub.add_parser("run", help="run a team on a task")
    go.add_argument("name")
    go.add_argument("task", nargs="+")
    opts = parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    console = Console(highlight=False, soft_wrap=True)
    if opts.action == "list":
        for name in project_names(ws):
            console.print(visible(f"{name}  (.arnes/teams/{name}.toml)"), markup=False)
        for name in builtin_names():
            console.print(f"{name}  (built in)", markup=False)
        return 0
    team = load_team(ws, opts.name)
    if opts.action == "show":
        console.print(visible(outline(team)), markup=False)
        return 0
    return run_team(args, ws, team, " ".join(opts.task), console)


def outline(team: Team) -> str:
    lines = [f"team {team.name}"]
    for node in team.nodes:
        role = "read-only" if node.read_only else "may write"
        follows = f", follows agent definition {node.agent_def}" if node.agent_def else ""
        lines.append(f"  {node.id}: {node.agent}, {role}{follows}")
        if node.read_only:
            lines.append(f"    read-only is {enforcement(node.agent)}")
        if node.agent != "arnes":
            lines.append(f"    source of its flags: {PROFILES[node.agent].source}")
        lines.append(f"    role: {node.prompt}")
    starts = team.starts()
    lines.append(f"  starts with: {', '.join(starts)}{' (in parallel)' if len(starts) > 1 else ''}")
    for node in team.nodes:
        out = team.outgoing(node.id)
        always = [e.to for _, e in out if e.when == "always"]
        if len(always) > 1:
            lines.append(f"  after {node.id}: {', '.join(always)} in parallel")
        for _, edge in out:
            when = "" if edge.when == "always" else f" when it {'passes' if edge.when == 'pass' else 'fails'}"
            lines.append(f"  {edge.source} -> {edge.to}{when} (at most {edge.max_rounds} times)")
    return "\n".join(lines)


def run_team(args: argparse.Namespace, ws: Path, team: Team, task: str, console: Console) -> int:
    from arnes.dotdir import ensure_arnes_dir
    from arnes.errors import EXIT_OK, EXIT_RED
    from arnes.permissions.approvers import NoTerminalApprover
    from arnes.runner import build_session, resolve_config, subscribe
    from arnes.session import Session, new_session_id
    from arnes.workflow.teams.run import TeamRunner

    cfg = resolve_config(args, ws)
    path = ws / ".arnes" / "teams" / f"{team.name}.toml"
    grants = team_grants(team) if path.is_file() and not cfg.trusted else []
    if grants:
        raise ConfigError(
            f"{path}: not run until you trust this folder: {', '.join(grants)} choose what runs on the host; "
            "trust it with `arnes trust` (or --trust for one run), or use a built-in team"
        )
    if any(node.agent_def for node in team.nodes):
        from arnes.extensions.agents import load_catalog
        from arnes.host.files import HostFiles

        missing = missing_definitions(team, list(load_catalog(HostFiles(ws), trusted=cfg.trusted).agents))
        if missing:
            raise ConfigError(f"team {team.name}: {missing}")
    ensure_arnes_dir(ws)  # before the first snapshot: arnes's own .gitignore is no node's write
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S-") + team.name
    try:
        timeline = Timeline(ws, run_id, console)
    except OSError as exc:  # .arnes/teams/runs is a link, or cannot be written
        raise ConfigError(f"cannot write the team timeline: {exc.strerror or exc}") from exc
    opened = []
    first: list[Session] = []

    def make_session(workspace: Path, interactive: bool) -> Session:
        session_id = new_session_id()
        session = build_session(
            args, workspace, cfg, session_id,
            # One model plays every arnes node (and a scripted one keeps its place).
            models=(first[0].provider, first[0].roles) if first else None,
            # Parallel branches: nobody can answer two prompts at once.
            approver=None if interactive else NoTerminalApprover(),
            trace=ws / ".arnes" / "teams" / "runs" / f"{run_id}-{session_id}.jsonl",
        )  # fmt: skip
        if not first:
            first.append(session)
        context = subscribe(args, session, cfg, root=ws)
        context.__enter__()
        opened.append(context)
        return session

    try:
        found = cfg.test_command(ws)
        verify = found.command if found else None
        from arnes.runner import check_sandbox

        check_sandbox(ws, cfg, f"team {team.name}")  # refused here, before any node, when it cannot hold

        def check_box(copy: Path) -> Sandbox:
            return check_sandbox(copy, cfg, f"team {team.name}")

        runner = TeamRunner(team, ws, make_session, timeline, verify_command=verify, check_box=check_box)
        result = runner.run(task)
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, KeyboardInterrupt) else type(exc).__name__
        timeline.record("team_end", f"team stopped: {status} {exc}".rstrip(), "red", status=status)
        write_timeline_page(timeline)
        raise
    finally:
        for context in opened:
            context.__exit__(None, None, None)
    page = write_timeline_page(timeline)
    console.print(f"timeline: {timeline.jsonl} (readable: {timeline.readable}; page: {page})", markup=False)
    return EXIT_OK if result.passed else EXIT_RED


def write_timeline_page(timeline: Timeline) -> Path:
    """The run as a page (bars on a time axis) beside its JSONL and Markdown views."""
    from arnes.host.atomic import atomic_write
    from arnes.ui.html.team_timeline import render

    page = timeline.jsonl.with_suffix(".html")
    # On the name itself (a link planted there is replaced), through real folders only.
    atomic_write(page, render(timeline.jsonl.stem, list(timeline.events)).encode("utf-8"), real=page)
    return page
