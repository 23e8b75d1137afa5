"""Maker-checker: an implementer, then an independent read-only checker with a fresh context.

FAIL sends the checker's reasons back to the implementer, up to a few rounds; PASS counts only
when the verify command is green too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from arnes.agent.events import CheckerEvent
from arnes.agent.loop import Agent, raise_for
from arnes.session import Session
from arnes.workflow.verify import Verdict, Verifier

_VERDICT = re.compile(r"^\W*VERDICT\W*\s*(PASS|FAIL)\b", re.IGNORECASE | re.MULTILINE)

CHECKER_TASK = """You are an independent checker. Another agent was given this task:

{task}

Check the work as it is now in the workspace: read the changed files, run read-only commands. Do not
trust claims; look. List each problem as file, line and reason. End with one line, exactly
`VERDICT: PASS` or `VERDICT: FAIL`."""

FIX_TASK = """An independent checker reviewed your work and did not pass it (round {round} of {rounds}).
{reasons}
Fix what it found, then say what you changed."""


def verdict_of(text: str) -> bool | None:
    """True for PASS, False for FAIL, None when no verdict line was given (the last one counts)."""
    found = _VERDICT.findall(text)
    return found[-1].upper() == "PASS" if found else None


@dataclass
class CheckerRun:
    passed: bool = False
    rounds: int = 0
    history: list[tuple[bool, str, Verdict | None]] = field(default_factory=list)


def maker_checker(session: Session, task: str, verifier: Verifier | None, rounds: int = 3) -> CheckerRun:
    """The maker works in `session`, a read-only checker reviews each round. With a `verifier`,
    build the session with its self-check off (runner.build_session `self_check`): the verifier
    runs the tests after each round."""
    outcome = CheckerRun()
    maker = Agent(session)
    maker.start()
    try:
        message = task
        for round_no in range(1, rounds + 1):
            outcome.rounds = round_no
            result = maker.turn(message)
            raise_for(result)
            verdict = verifier.check() if verifier else None
            checker = session.child(read_only=True, parent_call=f"checker-{round_no}")
            review = Agent(checker).run(CHECKER_TASK.format(task=task))
            raise_for(review)
            said = verdict_of(review.text)
            passed = bool(said) and (verdict is None or verdict.passed)
            reasons = review.text.strip() or "(the checker said nothing)"
            if said is None:
                reasons += "\n(The checker gave no VERDICT line, which counts as FAIL.)"
            if verdict is not None and not verdict.passed:
                reasons += f"\nThe verify command `{verdict.command}` is red:\n{verdict.output}"
            session.bus.emit(CheckerEvent(round_no, "PASS" if passed else "FAIL", reasons))
            outcome.history.append((passed, reasons, verdict))
            if passed:
                outcome.passed = True
                break
            message = FIX_TASK.format(round=round_no, rounds=rounds, reasons=reasons)
    finally:
        maker.finish()
    return outcome
