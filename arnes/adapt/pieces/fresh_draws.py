"""A reply that changes nothing while the tests are red: the turn starts again as a fresh draw.

Placed after the edit format's piece, so it sees only replies from which no file was applied
(adapt/draws.py says why drawing again beats asking again). The red test runs themselves are
the self-check's (check_before_done.py), which asks for the repair try and then the draws.
"""

from __future__ import annotations

from typing import ClassVar

from arnes.adapt.draws import Draws
from arnes.adapt.piece import ACCEPT, Piece
from arnes.adapt.shared import TurnState
from arnes.agent.steering import Moment, Redraw, Reply, ReplyDecision

NAME = "fresh-draws"
UNCHANGED = (
    "[arnes] The tests still fail and your reply changed no file. Read the failure above and fix the "
    "code (not the tests)."
)


def redraw(draws: Draws, why: str, fallback: str, sent: str = "") -> Redraw:
    """The next draw, numbered, with what the user sees of it."""
    n = draws.draw()
    said = f"draw {n} of {draws.most}: {why}; the conversation goes back to before the first attempt"
    return Redraw(NAME, said, fallback, sent)


class FreshDraws(Piece):
    name: ClassVar[str] = NAME
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply"})

    def __init__(self, state: TurnState):
        self.state = state

    def new_turn(self, task: str) -> None:
        if self.state.draws is not None:
            self.state.draws.new_turn()

    def on_reply(self, reply: Reply) -> ReplyDecision:
        draws = self.state.draws
        if reply.applied or not self.state.red or draws is None or not draws.can_draw():
            return ACCEPT
        return redraw(draws, "the reply changed no file while the tests fail", UNCHANGED, reply.text)
