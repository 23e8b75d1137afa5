"""What every adaptation piece is: a name, the moments it acts at, and decisions as data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from arnes.agent.steering import Accept, Act, CallDecision, Moment, Reply, ReplyDecision, ResultDecision
from arnes.messages import ToolCall, ToolResultBlock
from arnes.tools.base import ToolContext

ACCEPT = Accept()


@dataclass(frozen=True)
class Env:
    """What pieces may look at: the session's files as its tools see them, and a few settings."""

    ctx: ToolContext
    edit_format: str = "tools"  # tools | whole | search-replace
    may_test: Callable[[], bool] = lambda: False  # the tests may run unasked (bubblewrap or trusted)
    detect: Callable[[Path], str | None] | None = None  # the project's test command
    task_files: Callable[[str, bool], str] | None = None  # the files a task names, shown with it (spare_kept)
    test_timeout: float = 300.0  # seconds the self-check's run may take (verify.timeout)
    draws: int = 0  # fresh draws per user message after the repair try (the profile's; 0: none)


class Piece:
    """One behaviour that adapts arnes to a weak model. Subclasses override the moments they name."""

    name: ClassVar[str] = "piece"
    moments: ClassVar[frozenset[Moment]] = frozenset()

    def new_turn(self, task: str) -> None:
        return None

    def on_reply(self, reply: Reply) -> ReplyDecision:
        return ACCEPT

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        return ACCEPT

    def before_call(self, call: ToolCall) -> CallDecision:
        return ACCEPT

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        return ACCEPT

    def task_note(self, task: str) -> str:
        return ""
