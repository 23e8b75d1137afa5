"""Notice a model that is not getting anywhere, and say so to it before giving up.

Small local models fall into two traps a scripted model never shows: they repeat the same call
and get the same answer back (the same Write four times, Read-Edit-fail-Read-Edit-fail), and
they end a turn by announcing a step ("I will read the file first.") without calling a tool,
which would end the run with nothing done. Both are judged by cheap rules on what the loop
already has; each gets a nudge first, and only a repeat that goes on after its nudge stops the run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from arnes.agent.unfinished import Seen, unfinished
from arnes.errors import ArnesError
from arnes.messages import ToolCall, ToolResultBlock

NUDGE_AFTER = 2  # turns in a row made only of calls already answered the same way: nudge
STOP_AFTER = 3  # ...and still repeating right after the nudge: stop
ANNOUNCE_NUDGES = 2  # at most this many "you only announced it" nudges per task
UNFINISHED_NUDGES = 2  # at most this many "that reply is not an answer" nudges per task (agent/unfinished.py)
ANNOUNCE_MAX_CHARS = 400  # a longer answer is a real answer, whatever its last sentence
POLLING = frozenset({"BashOutput"})  # asking again is the point of these: neither progress nor a repeat

REPEAT_NUDGE = (
    "[arnes] Your last turns repeated calls you had already made ({names}) and got the same results "
    "as before. Repeating them will not change anything. Try something different: read the error above, "
    "Read the file again if you need its current content, or change your arguments. If the task "
    "is done, stop calling tools and say so."
)
ANNOUNCE_NUDGE = (
    "[arnes] You said what you will do next but did not call a tool, so nothing happened. "
    "Call the tool now. If the task is already done, say so in one sentence."
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
    announce_nudges: int = 0
    unfinished_nudges: int = 0
    stuck: str | None = None

    def reset(self) -> None:
        """A new task from the user: what came before is no evidence of a loop."""
        self.forget()
        self.announce_nudges, self.unfinished_nudges, self.stuck = 0, 0, None

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

    def after_text(
        self,
        text: str,
        *,
        last_error: str | None = None,
        wrote: bool = True,
        can_write: bool = False,
        seen: Seen | None = None,
    ) -> str | None:
        """The nudge for a turn that ended with no tool call: it only announced a step, or it is
        not an answer at all (empty, the last error repeated, a made-up tool result, code in chat)."""
        if self.announce_nudges < ANNOUNCE_NUDGES and announces(text):
            self.announce_nudges += 1
            return ANNOUNCE_NUDGE
        if self.unfinished_nudges >= UNFINISHED_NUDGES:
            return None
        nudge = unfinished(text, last_error, wrote, can_write, seen)
        if nudge is not None:
            self.unfinished_nudges += 1
        return nudge


def _key(call: ToolCall, result: ToolResultBlock) -> str:
    return json.dumps([call.name, call.input, result.content, result.is_error], sort_keys=True, default=str)


_FUTURE = re.compile(
    # An optional leading clause ("To fix this, ..."), but not a condition ("If you want, I will ...").
    r"^(?!(?:if|when|unless|should|once|whenever)\b)(?:[^,]{1,60},\s+)?"
    r"(?:(?:ok(?:ay)?|now|next|first|then|so|great|sure|alright)[,!]?\s+)*"
    r"(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+need\s+to|i\s+should|i\s+must|"
    r"i\s+have\s+to|let\s+me|let's|let\s+us|we\s+will|we'll|we\s+need\s+to|i\s+can\s+now|i'm\s+now\s+going\s+to)"
    r"\s+(?:(?:now|first|then|next|also|quickly)\s+)?(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_ACTIONS = frozenset(
    "read open look check inspect examine view see create write edit modify update change fix add "
    "implement run execute search find list grep glob start make replace rename remove delete test "
    "correct adjust apply insert append refactor begin proceed go call use verify write".split()
)
_SENTENCE_END = re.compile(r"(?<=[.!:;])\s+|\n+")


def announces(text: str) -> bool:
    """Whether a tool-less answer ends by announcing an action instead of reporting one.

    Cheap on purpose: the last sentence must start like "I will <action>" / "Let me <action>"
    and the answer must be short and free of code. A question, a report of what was done, or
    "let me know ..." ends the run as before.
    """
    stripped = text.strip()
    if not stripped or len(stripped) > ANNOUNCE_MAX_CHARS or "```" in stripped or stripped.endswith("?"):
        return False
    sentences = [s.strip() for s in _SENTENCE_END.split(stripped) if s.strip()]
    last = sentences[-1] if sentences else ""
    match = _FUTURE.match(last)
    if match is None:
        return False
    verb = match.group("verb").lower()
    return verb in _ACTIONS
