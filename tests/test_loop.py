"""The loop in-process: concurrency of reads, ordering of writes, errors as feedback."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from arnes.agent.events import Event, ToolResultEvent
from arnes.agent.loop import Agent
from arnes.agent.run_context import Limits
from arnes.llm.base import TextSink
from arnes.llm.script import ScriptProvider
from arnes.messages import Message, ModelResponse, ToolResultBlock, ToolSpec
from arnes.permissions.approvers import ScriptedApprover
from arnes.session import Session, default_tools
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolRegistry


@dataclass
class Recording:
    """Wraps the scripted provider and keeps every conversation it was sent."""

    inner: ScriptProvider
    seen: list[list[Message]] = field(default_factory=list)
    name: str = "script"
    model: str = "script"

    def complete(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], on_text: TextSink | None = None
    ) -> ModelResponse:
        self.seen.append(list(messages))
        return self.inner.complete(system, messages, tools, on_text)


class BarrierArgs(ToolArgs):
    tag: str = Field(description="label")


class BarrierTool(BaseTool[BarrierArgs]):
    """Read-only tool that only returns once three calls are inside it at the same time."""

    name: ClassVar[str] = "Barrier"
    description: ClassVar[str] = "waits for its siblings"
    args_model = BarrierArgs
    read_only = True

    def __init__(self, parties: int, log: list[str]):
        self.barrier = threading.Barrier(parties, timeout=10)
        self.log = log

    def run(self, args: BarrierArgs, ctx: ToolContext) -> str:
        self.barrier.wait()
        self.log.append(f"read {args.tag}")
        return f"passed {args.tag}"


class Boom(BaseTool[BarrierArgs]):
    name: ClassVar[str] = "Boom"
    description: ClassVar[str] = "always raises"
    args_model = BarrierArgs

    def run(self, args: BarrierArgs, ctx: ToolContext) -> str:
        raise RuntimeError("kaput")


def make(tmp_path: Path, turns: list[dict[str, Any]], *extra: Any, **kw: Any) -> tuple[Session, Recording]:
    provider = Recording(ScriptProvider.from_turns(turns))
    tools = ToolRegistry([*default_tools(), *extra])
    return Session(workspace=tmp_path, provider=provider, tools=tools, **kw), provider


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"name": name, "input": inp}


def test_read_only_calls_of_a_turn_run_concurrently(tmp_path: Path) -> None:
    log: list[str] = []
    turns = [{"tool_calls": [call("Barrier", tag=t) for t in "abc"]}]
    session, provider = make(tmp_path, turns, BarrierTool(3, log))
    result = Agent(session).run("go")
    assert result.stop_reason == "end_turn"
    results = provider.seen[1][-1].content
    assert [b.content for b in results if isinstance(b, ToolResultBlock)] == ["passed a", "passed b", "passed c"]


def test_all_results_of_a_turn_come_back_in_one_message_in_call_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    turns = [{"tool_calls": [call("Read", file_path="a.txt"), call("Nope"), call("Read", file_path="zz.txt")]}]
    session, provider = make(tmp_path, turns)
    Agent(session).run("go")
    second = provider.seen[1]
    assert len(second) == 3  # task, assistant turn, one user message with every result
    blocks = second[2].content
    assert all(isinstance(b, ToolResultBlock) for b in blocks)
    ids = [b.tool_call_id for b in blocks if isinstance(b, ToolResultBlock)]
    assert ids == [c.id for c in second[1].tool_calls]
    contents = [b for b in blocks if isinstance(b, ToolResultBlock)]
    assert "alpha" in contents[0].content and not contents[0].is_error
    assert contents[1].is_error and "Unknown tool" in contents[1].content
    assert contents[2].is_error and "does not exist" in contents[2].content


def test_a_write_waits_for_the_reads_before_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    turns = [
        {
            "tool_calls": [
                call("Read", file_path="a.txt"),
                call("Edit", file_path="a.txt", old_string="one", new_string="two"),
                call("Read", file_path="a.txt"),
            ]
        }
    ]
    session, provider = make(tmp_path, turns, mode="acceptEdits")
    Agent(session).run("go")
    results = [b for b in provider.seen[1][-1].content if isinstance(b, ToolResultBlock)]
    assert not any(r.is_error for r in results), results
    assert "one" in results[0].content and "two" in results[2].content
    assert (tmp_path / "a.txt").read_text() == "two\n"


def test_bad_arguments_and_crashing_tools_are_feedback_not_crashes(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [call("Read"), call("Read", file_path=3), call("Boom", tag="x")]},
        {"tool_calls": [{"name": "Read", "input": {"__invalid_json__": "{oops"}}]},
        {"text": "ok"},
    ]
    session, provider = make(tmp_path, turns, Boom())
    result = Agent(session).run("go")
    assert result.stop_reason == "end_turn" and result.text == "ok"
    first = [b for b in provider.seen[1][-1].content if isinstance(b, ToolResultBlock)]
    assert all(b.is_error for b in first)
    assert "file_path: Field required" in first[0].content
    assert "Invalid arguments for Read" in first[1].content
    assert "Boom failed unexpectedly: RuntimeError: kaput" in first[2].content
    second = [b for b in provider.seen[2][-1].content if isinstance(b, ToolResultBlock)]
    assert "not valid JSON" in second[0].content


def test_events_reach_every_subscriber(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    seen: list[Event] = []
    session, _ = make(tmp_path, [{"tool_calls": [call("Read", file_path="a.txt")]}])
    session.bus.subscribe(seen.append)
    Agent(session).run("go")
    names = [e.event for e in seen]
    assert names[0] == "session_start" and names[-1] == "session_end"
    assert "model_request" in names and "permission" in names
    assert any(isinstance(e, ToolResultEvent) and not e.is_error for e in seen)


def test_ask_goes_to_the_approver_with_the_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    turns = [
        {"tool_calls": [call("Read", file_path="a.txt")]},
        {"tool_calls": [call("Edit", file_path="a.txt", old_string="one", new_string="two")]},
    ]
    approver = ScriptedApprover(["y"])
    session, _ = make(tmp_path, turns, approver=approver)
    Agent(session).run("go")
    assert (tmp_path / "a.txt").read_text() == "two\n"
    (asked,) = approver.asked
    assert asked.tool == "Edit" and asked.subject == "a.txt"
    assert asked.preview is not None and "-one" in asked.preview and "+two" in asked.preview


def test_max_turns_limit(tmp_path: Path) -> None:
    turns = [{"tool_calls": [call("Glob", pattern="*")]}] * 4
    session, _ = make(tmp_path, turns, limits=Limits(max_turns=3))
    result = Agent(session).run("go")
    assert result.stop_reason == "max_turns" and result.turns == 3 and result.limit == "turns"
