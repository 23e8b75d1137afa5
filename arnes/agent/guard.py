"""Notice a model that is not getting anywhere, and say so to it before giving up.

A model that repeats the same call and gets the same answer back (the same Write four times,
Read-Edit-fail-Read-Edit-fail) is told once; only a repeat that goes on after that stops the run.
This holds for every model: it bounds a run's cost, it does not adapt arnes to one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from arnes.errors import ArnesError
from arnes.messages import ToolCall, ToolResultBlock

NUDGE_AFTER = 2  # turns in a row made only of calls already answered the same way: nudge
STOP_AFTER = 3  # ...and still repeating right after the nudge: stop
POLLING = frozenset({"BashOutput"})  # asking again is the point of these: neither progress nor a repeat

REPEAT_NUDGE = (
    "[arnes] Your last turns repeated calls you had already made ({names}) and got the same results "
    "as before. Repeating them will not change anything. Try something different: read the error above, "
    "Read the file again if you need its current content, or change your arguments. If the task "
    "is done, stop calling tools and say so."
)


class Stuck(ArnesError):
    """The model repeated the same calls with the same results after being told: the run stops."""

    exit_code = 3  # like a limit: the run was stopped, not broken


@dataclass
class LoopGuard:
    """Counts turns in a row whose every (call, result) pair was seen before in this task."""

    seen: set[str] = field(default_factory=set)
    streak: int = 0
    nudged: bool = False
    stuck: str | None = None

    def reset(self) -> None:
        """A new task from the user: what came before is no evidence of a loop."""
        self.forget()
        self.stuck = None

    def forget(self) -> None:
        """After a compaction the model no longer sees its earlier results: reading again is fair."""
        self.seen.clear()
        self.streak, self.nudged = 0, False

    def after_tools(self, calls: list[ToolCall], results: list[ToolResultBlock]) -> str | None:
        """The nudge to send with these results, if any; notes `stuck` when nudging did not help."""
        keys = [_key(c, r) for c, r in zip(calls, results, strict=False) if c.name not in POLLING]
        if not keys:
            return None
        repeated = all(k in self.seen for k in keys)
        self.seen.update(keys)
        if not repeated:
            self.streak, self.nudged = 0, False
            return None
        self.streak += 1
        names = ", ".join(sorted({c.name for c in calls}))
        if self.streak >= STOP_AFTER and self.nudged:
            self.stuck = (
                f"stuck: the model kept repeating calls it had already made ({names}) with the same "
                f"results, {self.streak} turns in a row, also after being told"
            )
            return None
        if self.streak >= NUDGE_AFTER and not self.nudged:
            self.nudged = True
            return REPEAT_NUDGE.format(names=names)
        return None

    def raise_if_stuck(self) -> None:
        """After the results are in the conversation: a stuck run ends here, its calls answered."""
        if self.stuck:
            raise Stuck(self.stuck)


def _key(call: ToolCall, result: ToolResultBlock) -> str:
    return json.dumps([call.name, call.input, result.content, result.is_error], sort_keys=True, default=str)
