"""A reply that changes nothing while the tests are red: asked again about one failing test, in
the conversation as it was before the turn's first attempt (adapt/focus.py says why).

Placed after the edit format's piece, so it sees only replies from which no file was applied.
The self-check (check_before_done.py) asks the same way after a red run once this piece has
asked in the turn.
"""

from __future__ import annotations

from typing import ClassVar

from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.reading import changed_texts, readable_text
from arnes.adapt.shared import TurnState
from arnes.agent.steering import Moment, Redraw, Reply, ReplyDecision

NAME = "focus"


def focused(env: Env, state: TurnState, sent: str) -> Redraw | None:
    """The next focused ask after the last red run, or None (none left, or nothing new to ask)."""
    if state.focus is None or not state.failure:
        return None

    def read(name: str) -> str | None:
        found = readable_text(env.ctx, name)
        return found[1] if found is not None else None

    asked = state.focus.ask(state.failure, changed_texts(env.ctx), read, env.edit_format, str(env.ctx.workspace))
    if asked is None:
        return None
    text, why = asked
    return Redraw(NAME, why, fallback=text, sent=sent, then=text, sample=False)


class Focus(Piece):
    name: ClassVar[str] = NAME
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply"})

    def __init__(self, env: Env, state: TurnState):
        self.env, self.state = env, state

    def new_turn(self, task: str) -> None:
        if self.state.focus is not None:
            self.state.focus.new_turn()

    def on_reply(self, reply: Reply) -> ReplyDecision:
        if reply.applied or not self.state.red:
            return ACCEPT
        return focused(self.env, self.state, reply.text) or ACCEPT
