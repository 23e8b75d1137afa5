"""The pieces of a profile, run in order at each moment: the first that decides something wins."""

from __future__ import annotations

import dataclasses

from arnes.adapt.piece import ACCEPT, Piece
from arnes.agent.steering import Accept, Act, CallDecision, Reply, ReplyDecision, ResultDecision
from arnes.messages import ToolCall, ToolResultBlock


class Pipeline:
    """`Steering` over a list of pieces.

    A reply goes through the reply pieces in order. When one acts (its calls made by the loop),
    that piece reads the results; if it then lets the reply stand, the pieces after it still get
    their say, told that files were applied from it (so the tests can run after an edit format
    applied the files, and nobody nudges a reply whose code was applied).
    """

    def __init__(self, pieces: list[Piece], system_note: str = ""):
        self.pieces = pieces
        self.note = system_note
        self._actor: int | None = None  # the piece whose Act the loop is carrying out

    def system_note(self) -> str:
        return self.note

    def new_turn(self, task: str) -> None:
        for piece in self.pieces:
            piece.new_turn(task)

    def on_reply(self, reply: Reply) -> ReplyDecision:
        return self._from(0, reply)

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        owner, self._actor = self._actor, None
        if owner is None:
            return ACCEPT
        decision = self.pieces[owner].on_acted(act, results, reply)
        if isinstance(decision, Act):  # more calls of the same piece: it reads their results too
            self._actor = owner
        if not isinstance(decision, Accept):
            return decision
        applied = any(r is not None and not r.is_error for r in results) and act.piece in FORMATS
        if applied:
            reply = dataclasses.replace(reply, wrote=True, applied=True)
        after = self._from(owner + 1, reply)
        if decision.note and isinstance(after, Accept):  # what the user is told is not lost
            return Accept("\n".join(n for n in (decision.note, after.note) if n))
        return after

    def _from(self, start: int, reply: Reply) -> ReplyDecision:
        for at in range(start, len(self.pieces)):
            piece = self.pieces[at]
            if "reply" not in piece.moments:
                continue
            decision = piece.on_reply(reply)
            if isinstance(decision, Act):
                self._actor = at
            if not isinstance(decision, Accept):
                return decision
        return ACCEPT

    def before_call(self, call: ToolCall) -> CallDecision:
        for piece in self.pieces:
            if "call" in piece.moments:
                decision = piece.before_call(call)
                if not isinstance(decision, Accept):
                    return decision
        return ACCEPT

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        for piece in self.pieces:
            if "result" in piece.moments:
                decision = piece.after_result(call, result)
                if not isinstance(decision, Accept):
                    return decision
        return ACCEPT

    def task_note(self, task: str) -> str:
        return "\n\n".join(note for piece in self.pieces if "task" in piece.moments and (note := piece.task_note(task)))


FORMATS = frozenset({"whole", "search-replace"})  # the pieces that apply files from a reply
