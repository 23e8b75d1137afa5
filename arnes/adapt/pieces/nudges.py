"""A reply with no call that is not an answer gets one pointed message instead of ending the run.

An empty reply, one that only repeats the last error, a tool result the model wrote itself, code
printed in the chat instead of written, a step announced and not taken, a change claimed that no
file shows: each would end a run with exit 0 and nothing done. With `same-reply`, a reply that
repeats the code after arnes spelled out the call that makes it gets that call made.
"""

from __future__ import annotations

import json
from typing import ClassVar

from arnes.adapt.announce import ANNOUNCE_NUDGE, announces
from arnes.adapt.phrasing import for_format
from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.shared import TurnState
from arnes.adapt.unfinished import AS_IS, CLAIM, CODE, CODE_CALL, SPELLED, Seen, spelled_call, unfinished
from arnes.agent.steering import Act, Moment, Nudge, Reply, ReplyDecision
from arnes.messages import ToolCall, ToolResultBlock

MOST_ANNOUNCE = 2  # "you only announced it", per user message
MOST_UNFINISHED = 2  # "that reply is not an answer", per user message
MADE = "[arnes] You sent the same reply again, so arnes sent the call for you; it {how}:\n{result}"


class Nudges(Piece):
    name: ClassVar[str] = "nudge"
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply"})

    def __init__(self, env: Env, state: TurnState, make_offered: bool = False):
        self.env, self.state, self.make_offered = env, state, make_offered
        self.announced = self.unfinished = 0
        self.offered: str | None = None

    def new_turn(self, task: str) -> None:
        self.announced = self.unfinished = 0
        self.offered, self.state.said = None, None  # an echo is of this message's nudges

    def on_reply(self, reply: Reply) -> ReplyDecision:
        if reply.applied:
            return ACCEPT
        seen = Seen(self.env.ctx)
        offered, self.offered = self.offered, None
        if self.make_offered and offered is not None and spelled_call(reply.text, seen) == offered:
            data = json.loads(offered)
            call = ToolCall("same-reply", data["name"], data["arguments"])
            return Act(
                "same-reply",
                (call,),
                sent=reply.text,
                say=f"the model sent the same code again; making its {call.name}",
            )
        if self.announced < MOST_ANNOUNCE and announces(reply.text):
            self.announced += 1
            return Nudge(self.name, for_format(ANNOUNCE_NUDGE, self.env.edit_format), reply.text)
        if self.unfinished >= MOST_UNFINISHED:
            return ACCEPT
        wrote = reply.wrote and not self.state.red
        last = reply.last_error or self.state.said
        nudge = unfinished(reply.text, last, wrote, reply.can_write, seen)
        if nudge is None:
            return ACCEPT
        self.unfinished += 1
        if nudge.startswith((CODE, CODE_CALL, CLAIM, AS_IS.partition("{")[0])):
            self.state.said = nudge  # parroting it back is an echo too
        if nudge.startswith(SPELLED):
            self.offered = nudge.split("\n", 1)[1]
        return Nudge(self.name, for_format(nudge, self.env.edit_format), reply.text)

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        result = results[0] if results else None
        if result is None:
            return ACCEPT
        self.state.red = self.state.red and result.is_error  # a change made: code shown next is no fix
        how = "was not made" if result.is_error else "was made"
        return Nudge("same-reply", MADE.format(how=how, result=result.content))


class SameReply(Piece):
    """Named in a profile to turn on the `make_offered` half of `Nudges` (it owns the state)."""

    name: ClassVar[str] = "same-reply"
