"""The verification ladder: unit -> integration -> e2e, stopping at the first red rung."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arnes.sandbox.base import Sandbox
from arnes.workflow.verify import Verdict, run_check

RUNGS = ("unit", "integration", "e2e")


@dataclass(frozen=True)
class LadderResult:
    passed: bool
    ran: list[tuple[str, Verdict]]
    failed_at: str | None


def climb(
    rungs: dict[str, str],
    workspace: Path,
    sandbox: Sandbox | None = None,
    on_rung: Callable[[str, Verdict], None] | None = None,
) -> LadderResult:
    ran: list[tuple[str, Verdict]] = []
    for name in RUNGS:
        command = rungs.get(name)
        if not command:
            continue
        verdict = run_check(command, workspace, sandbox)
        ran.append((name, verdict))
        if on_rung:
            on_rung(name, verdict)
        if not verdict.passed:
            return LadderResult(False, ran, name)
    return LadderResult(True, ran, None)
