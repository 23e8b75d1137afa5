"""The seam between the loop and the model-adaptation layer (arnes/adapt/), as data.

A weak model needs help a strong one must never get: a nudge when a reply is not an answer, its
files taken from a reply in an edit format, the tests run before it says done. The loop knows
that help only through `Steering`: at three moments it asks for a decision and carries it out
the one way it carries out everything, through the permission gate. It imports nothing from the
layer, and `NoSteering` (profile `off`) changes and makes no call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from arnes.messages import ToolCall, ToolResultBlock

Moment = Literal["task", "reply", "call", "result"]


@dataclass(frozen=True)
class Reply:
    """What a piece sees of a reply that holds no tool call."""

    text: str
    wrote: bool  # a file changed since the user's message
    can_write: bool  # Write or Edit offered, and not plan mode
    can_run: bool  # Bash offered
    last_error: str | None  # the last tool error of the last tool turn
    verified_later: bool = False  # someone runs the tests after the agent (--verify, a checker)
    applied: bool = False  # files were applied from this very reply (an edit format)


@dataclass(frozen=True)
class Accept:
    """The reply, call or result stands as it is; `note` is said to the user (never to the model)."""

    note: str = ""


@dataclass(frozen=True)
class Nudge:
    """A message to the model instead of ending (or beside a result)."""

    piece: str
    text: str
    sent: str = ""  # what the model sent that this answers, for the trace


@dataclass(frozen=True)
class Act:
    """Calls arnes makes for the model, each through the gate like the model's own.

    `quiet`: made only when the rules allow it without asking, else dropped unseen (the model
    did not ask for it, so nobody is asked about it).
    """

    piece: str
    calls: tuple[ToolCall, ...]
    sent: str = ""
    say: str = ""  # one line for the terminal
    quiet: bool = False


@dataclass(frozen=True)
class Rewrite:
    """The model's call, changed before the gate judges it."""

    piece: str
    call: ToolCall
    why: str


@dataclass(frozen=True)
class Refuse:
    """The model's call is not run; `text` is its result, as an error."""

    piece: str
    text: str


@dataclass(frozen=True)
class Redraw:
    """The conversation goes back to before this turn's first attempt, and the next reply is a
    fresh draw.

    A small greedy model that sees its failed attempt in the conversation sends it again, word
    for word; a new reply sampled from what it had before its first attempt (the user's message,
    what it read) is another attempt, which the tests judge like the first. The loop drops the
    replies and results since then and asks the session's `draw` provider (sampled) until the
    user's next message.
    `fallback` is said to the model instead when the conversation cannot go back (it was
    compacted during this turn). With `then`, that message follows in place of the attempts;
    with `sample` False the replies stay decoded as before (a new question, not a new draw).
    """

    piece: str
    why: str
    fallback: str
    sent: str = ""
    then: str = ""
    sample: bool = True


ReplyDecision = Accept | Nudge | Act | Redraw
CallDecision = Accept | Rewrite | Refuse
ResultDecision = Accept | Nudge
Decision = Accept | Nudge | Act | Rewrite | Refuse | Redraw


class Steering(Protocol):
    """The model-adaptation layer as the loop sees it."""

    def new_turn(self, task: str) -> None:
        """A user message: counters start again; the task says which files to leave alone."""

    def on_reply(self, reply: Reply) -> ReplyDecision:
        """A reply with no tool call: does it stand?"""

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        """What the calls of an `Act` returned (None: a quiet call not made): the next decision."""

    def before_call(self, call: ToolCall) -> CallDecision:
        """A call of the model's, before the gate."""

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        """A call's result, before the model sees it."""

    def task_note(self, task: str) -> str:
        """Text shown with the user's message (empty: nothing)."""

    def system_note(self) -> str:
        """Text after the system prompt: an edit format's rules (empty: nothing)."""


class NoSteering:
    """Profile `off`: every reply, call and result stands; nothing is made for the model."""

    def new_turn(self, task: str) -> None:
        return None

    def on_reply(self, reply: Reply) -> ReplyDecision:
        return Accept()

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        return Accept()

    def before_call(self, call: ToolCall) -> CallDecision:
        return Accept()

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        return Accept()

    def task_note(self, task: str) -> str:
        return ""

    def system_note(self) -> str:
        return ""
