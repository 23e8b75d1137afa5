"""The end of a run, and of each turn of a session driven over stdin: PROGRESS.md, then one
`RunClosed` event on the session's bus. What the user sees of it (the text format's lines on the
changes, the JSON result object) is printed by the subscriber of the output format, so the
runner and the stream-json driver close a run the same way and print nothing themselves."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from arnes.agent.events import RunClosed, ShellChanges
from arnes.agent.loop import RunResult
from arnes.config import EffectiveConfig
from arnes.host.files import Refused
from arnes.llm.base import PROFILES
from arnes.session import Session
from arnes.tools.files import session_diffs


def close(
    session: Session,
    cfg: EffectiveConfig,
    task: str,
    result: RunResult,
    trace: Path,
    *,
    diffs: bool = False,
    user_message: str | None = None,
) -> RunClosed:
    """Record the run's progress, then tell every subscriber how it closed. `diffs`: the output
    shows them (the text format), so they are worth computing; `user_message`: the uuid the SDK
    sent the turn's message with."""
    changed = record_progress(session, cfg, task, result)
    event = dataclasses.replace(closing(session, cfg, result, changed, trace, diffs=diffs), user_message=user_message)
    session.bus.emit(event)
    return event


def closing(
    session: Session, cfg: EffectiveConfig, result: RunResult, changed: list[Path], trace: Path, *, diffs: bool = False
) -> RunClosed:
    """The run's closing, from its result and the session's state at the end."""
    shell = session.ctx.changes.shell_report()
    return RunClosed(
        session=session.id,
        result=result.text,
        stop_reason=result.stop_reason,
        limit=result.limit,
        turns=result.turns,
        tool_calls=result.tool_calls,
        arnes_calls=result.arnes_calls,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost=session.budget.cost,
        compactions=result.compactions,
        clearings=result.clearings,
        verified=result.verified,
        verify_rounds=result.verify_rounds,
        files_changed=[session.ctx.display(p) for p in changed],
        shell_changes=ShellChanges(
            runs_code=list(shell.runs_code),
            ignored=dict(shell.ignored),
            setid_removed=list(shell.stripped),
            tracked=not shell.unwatched,
        ),
        denials=list(result.denials),
        structured_output=result.structured_output,
        error=result.error,
        trace=str(trace),
        diffs=[diff for _, diff in session_diffs(session.ctx)] if diffs and changed else None,
        no_model=provider_help(session, cfg, result.error)
        if result.stop_reason == "error" and result.error and result.unreachable
        else None,
    )


def record_progress(session: Session, cfg: EffectiveConfig, task: str, result: RunResult) -> list[Path]:
    """PROGRESS.md, when kept; the files the session changed, for the closing."""
    from arnes.agent import progress

    changed = session.ctx.changes.changed()
    # Plan mode changes nothing in the workspace, the harness's own notes included.
    if session.mode != "plan" and (cfg.progress or session.host.is_file(progress.FILE)):
        names = [session.ctx.display(p) for p in changed]
        try:
            progress.record(
                session.host, task, result.stop_reason, result.limit or result.error or "", names, session.id
            )
        except Refused as exc:
            print(f"arnes: {progress.FILE} not updated: {exc.strerror}", file=sys.stderr)
    return changed


def provider_help(session: Session, cfg: EffectiveConfig, error: str) -> str:
    """What was tried and how to configure a model, for a run that no model answered."""
    from arnes.ui.hints import no_model_hint

    where = cfg.base_url or PROFILES[cfg.provider].default_base_url or "the provider's default endpoint"
    return no_model_hint(cfg.provider, session.provider.model, where, error)
