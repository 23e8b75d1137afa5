"""Before an answer stands after a change: the project's tests, run by arnes (adapt/selfcheck.py)."""

from __future__ import annotations

from typing import ClassVar

from arnes.adapt.phrasing import for_format
from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.selfcheck import MOST_RUNS, NONE_RAN, SelfCheck, result_outcome
from arnes.adapt.shared import TurnState
from arnes.agent.steering import Accept, Act, Moment, Nudge, Reply, ReplyDecision, ResultDecision
from arnes.messages import ToolCall, ToolResultBlock

WHOLE_FIX = "Send the whole corrected file again, in the same format."


class CheckBeforeDone(Piece):
    name: ClassVar[str] = "self-check"
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply", "result"})

    def __init__(self, env: Env, state: TurnState):
        self.env, self.state = env, state
        ctx = env.ctx
        self.check = SelfCheck(ctx.workspace, env.detect or (lambda _: None), ctx.changes.changed, ctx.display)

    def new_turn(self, task: str) -> None:
        self.check.reset()
        self.state.red = False

    def on_reply(self, reply: Reply) -> ReplyDecision:
        if not (self.env.may_test() and reply.can_write and reply.can_run) or reply.verified_later:
            return ACCEPT
        said = self.check.still_red()
        if said is not None:
            return Nudge(self.name, for_format(said, self.env.edit_format), reply.text)
        command = self.check.due()
        if command is None:
            return ACCEPT
        timeout = int(self.env.test_timeout * 1000)  # verify.timeout, not the Bash tool's default for the model
        call = ToolCall("check", "Bash", {"command": command, "timeout": timeout})
        return Act(self.name, (call,), quiet=True, say=f"running the tests before the answer stands: {command}")

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        result = results[0] if results else None
        if result is None:  # would ask, is denied, or a hook blocked it: the answer stands
            self.check.runs = MOST_RUNS
            return ACCEPT
        seen = result_outcome(result)
        told = self.check.ran(seen, result.content)
        if seen == "no_tests":  # neither green nor red: the answer stands, and the user knows it is unchecked
            command = str(act.calls[0].input.get("command", ""))
            return Accept(NONE_RAN.format(command=command))
        if told is None:
            return ACCEPT
        self.state.red, self.state.said = True, told
        if self.env.edit_format == "whole":
            told += " " + WHOLE_FIX
        return Nudge(self.name, told)

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        self.check.after_tools([call], [result])  # the model's own test runs count
        if call.name in ("Write", "Edit") and not result.is_error:
            self.state.red = False
        return ACCEPT
