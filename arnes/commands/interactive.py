"""`arnes` with no task at a terminal: the interactive prompt, wired.

The prompt (ui/repl.py) reaches the runner and the subcommands only through the `ReplActions`
built here, so the UI imports nothing from the layers above it.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from arnes.agent.loop import Agent
from arnes.cliargs import workspace_of
from arnes.closing import provider_help
from arnes.commands import features, rewind, workflow
from arnes.commands.permissions import show_rules, show_trust
from arnes.config import EffectiveConfig, ModelSettings
from arnes.llm.base import Provider
from arnes.llm.retry import RetryingProvider
from arnes.runner import _provider, build_session, resolve_config, subscribe
from arnes.session import Session
from arnes.ui.repl import Repl, ReplActions


def run_interactive(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    cfg = resolve_config(args, ws)
    session = build_session(args, ws, cfg, interactive=True, verify=args.verify, verify_rounds=args.verify_rounds)
    with subscribe(args, session, cfg):
        return Repl(args, session, cfg, Agent(session), repl_actions(session, cfg)).run()


def repl_actions(session: Session, cfg: EffectiveConfig) -> ReplActions:
    def switch_model(name: str) -> Provider:
        provider, _, _ = _provider(ModelSettings(name=name), cfg, cfg.stream, session.context_window)
        return RetryingProvider(provider)

    def handoff() -> None:
        workflow.print_handoff(session.workspace, None, None, quiet_skips=True)

    def permissions(console: Console) -> None:
        show_rules(console, session.engine)
        show_trust(console, cfg, session.workspace)

    return ReplActions(
        provider_help=lambda error: provider_help(session, cfg, error),
        switch_model=switch_model,
        handoff=handoff,
        permissions=permissions,
        rewind=lambda agent, say, ask, rest: rewind.at_the_prompt(session, agent, say, ask, rest),
        undo=lambda agent, say, ask: rewind.undo_at_the_prompt(session, agent, say, ask),
        workflows={
            "/features": features.list_features,
            "/next": features.run_next,
            "/check": workflow.run_check_ladder,
            "/checker": workflow.run_checker,
        },
    )
