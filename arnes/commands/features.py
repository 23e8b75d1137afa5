"""`arnes features` lists the feature list; `arnes next` works on the next one and verifies it."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from arnes.cliargs import parse_subcommand
from arnes.errors import ConfigError
from arnes.safe import terminal_console, visible
from arnes.workflow import features as fl

STYLE = {"passing": "green", "active": "yellow", "blocked": "red", "not_started": "dim"}


def list_features(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of

    parse_subcommand(argparse.ArgumentParser(prog="arnes features", description="List features.json."), rest, args)
    features = fl.load(workspace_of(args))
    table = Table(box=None, header_style="bold")
    for column in ("id", "state", "description", "verify"):
        table.add_column(column)
    for f in features.features:
        table.add_row(*(Text(visible(cell)) for cell in (f.id, f.state, f.description, f.verify)), style=STYLE[f.state])
    terminal_console(soft_wrap=False).print(table)  # cells from features.json: text, never markup
    done = sum(f.state == "passing" for f in features.features)
    print(f"{done}/{len(features.features)} passing")
    return 0


def run_next(args: argparse.Namespace, rest: list[str]) -> int:
    """Start (or continue) one feature; only a green verify command promotes it to passing."""
    from arnes.cliargs import workspace_of
    from arnes.errors import EXIT_OK, EXIT_RED
    from arnes.runner import build_session, execute, resolve_config
    from arnes.workflow.verify import Verifier

    parse_subcommand(argparse.ArgumentParser(prog="arnes next", description="Work on the next feature."), rest, args)
    ws = workspace_of(args)
    features = fl.load(ws)
    feature = features.next_up()
    if feature is None:
        print("nothing to do: every feature is passing or blocked")
        return EXIT_OK
    cfg = resolve_config(args, ws)
    session = build_session(args, ws, cfg, verify=feature.verify, verify_rounds=args.verify_rounds)
    if not cfg.trusted and session.sandbox.name != "bubblewrap":
        raise ConfigError(
            f"{ws / fl.FILE}: its verify commands would run without asking and outside bubblewrap (sandbox: "
            f"{session.sandbox.name}) in a folder you have not trusted; trust it (`arnes trust`, or --trust for "
            "one run) or install bubblewrap"
        )
    resumed = feature.state == "active"
    feature.state = "active"
    fl.save(ws, features)
    print(visible(f"{'continuing' if resumed else 'starting'} {feature.id}: {feature.description}"))
    code = execute(args, session, cfg, fl.task_for(feature))
    features = fl.load(ws)
    current = features.get(feature.id)
    verdict = Verifier(feature.verify, ws, session.sandbox).check()  # the harness's own check, last word
    if verdict.passed:
        current.state = "passing"
        fl.save(ws, features)
        print(visible(f"{feature.id} is passing: `{feature.verify}` is green"))
        return EXIT_OK
    fl.save(ws, features)
    print(visible(f"{feature.id} stays active: `{feature.verify}` is red (run `arnes next` again to continue)"))
    return code if code not in (EXIT_OK,) else EXIT_RED
