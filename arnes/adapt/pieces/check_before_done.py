"""Before an answer stands after a change: the project's tests, run by arnes (adapt/selfcheck.py)."""

from __future__ import annotations

from typing import ClassVar

from arnes.adapt.draws import Attempt, Draws
from arnes.adapt.phrasing import for_format
from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.pieces.focus import focused
from arnes.adapt.pieces.fresh_draws import NAME as DRAWS
from arnes.adapt.pieces.fresh_draws import redraw
from arnes.adapt.reading import changed_texts
from arnes.adapt.selfcheck import MOST_RUNS, NONE_RAN, SelfCheck, result_outcome
from arnes.adapt.shared import TurnState
from arnes.agent.steering import Accept, Act, Moment, Nudge, Reply, ReplyDecision, ResultDecision
from arnes.host.testcmd import passed
from arnes.messages import ToolCall, ToolResultBlock

WHOLE_FIX = "Send the whole corrected file again, in the same format."
KEPT = "the tests still fail after {n} fresh draws; {files} put back as the attempt that passed {passed} tests"
STILL_FAIL = "the tests still fail after {n} fresh draws"


class CheckBeforeDone(Piece):
    name: ClassVar[str] = "self-check"
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply", "result"})

    def __init__(self, env: Env, state: TurnState):
        self.env, self.state = env, state
        ctx = env.ctx
        self.check = SelfCheck(ctx.workspace, env.detect or (lambda _: None), ctx.changes.changed, ctx.display)
        if state.draws is not None:  # each draw is judged by a run of its own
            self.check.most_runs = MOST_RUNS + state.draws.most
        if state.focus is not None:  # and each focused ask
            self.check.most_runs += state.focus.most

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
        draws = self.state.draws
        if act.piece == DRAWS and draws is not None:  # the best attempt put back: the answer stands
            return Accept(_kept(draws, act, results))
        result = results[0] if results else None
        if result is None:  # would ask, is denied, or a hook blocked it: the answer stands
            self.check.runs = self.check.most_runs
            return ACCEPT
        seen = result_outcome(result)
        told = self.check.ran(seen, result.content)
        if seen == "no_tests":  # neither green nor red: the answer stands, and the user knows it is unchecked
            command = str(act.calls[0].input.get("command", ""))
            return Accept(NONE_RAN.format(command=command))
        if told is None:
            return ACCEPT
        self.state.red, self.state.said, self.state.failure = True, told, result.content
        if self.state.focus is not None and self.state.focus.made:  # asking one test at a time already
            ask = focused(self.env, self.state, reply.text)
            if ask is not None:
                return ask
        if self.env.edit_format == "whole":
            told += " " + WHOLE_FIX
        if draws is None:
            return Nudge(self.name, told)
        step = draws.after_red(Attempt(changed_texts(self.env.ctx), passed(result.content)))
        if step == "repair":
            return Nudge(self.name, told)
        if step == "draw":
            return redraw(draws, "the tests failed on the last attempt", told)
        best = draws.restore()
        if best is None:
            return Accept(STILL_FAIL.format(n=draws.most))
        now = draws.last.files if draws.last is not None else {}
        back = {path: text for path, text in best.files.items() if now.get(path) != text}
        calls = tuple(ToolCall(p, "Write", {"file_path": p, "content": t}) for p, t in back.items())
        return Act(DRAWS, calls, say=f"putting back the attempt that passed the most tests: {', '.join(back)}")

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        self.check.after_tools([call], [result])  # the model's own test runs count
        if call.name in ("Write", "Edit") and not result.is_error:
            self.state.red = False
        return ACCEPT


def _kept(draws: Draws, act: Act, results: list[ToolResultBlock | None]) -> str:
    """What the user is told once the best attempt's files were written back (those that were)."""
    made = [str(c.input["file_path"]) for c, r in zip(act.calls, results, strict=True) if r and not r.is_error]
    if not made or draws.best is None:
        return STILL_FAIL.format(n=draws.most)
    return KEPT.format(n=draws.most, files=", ".join(made), passed=draws.best.passed)
