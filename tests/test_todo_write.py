"""TodoWrite: Claude Code's session checklist, kept, confirmed in Claude Code's words, shown to the
person, and allowed wherever reading is (it touches no file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.llm.script import ScriptProvider
from arnes.permissions.types import ToolRequest
from arnes.session import Session
from arnes.tools.base import ToolContext, ToolError, ToolRegistry, spec_of
from arnes.tools.responses import tool_response
from arnes.tools.todo import CONFIRMATION, TodoWrite
from arnes.ui.preview import preview
from tests.conftest import run_arnes

PLAN = [
    {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
    {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
    {"content": "Update docs", "status": "pending", "activeForm": "Updating docs"},
]


def todo_write(ctx: ToolContext, todos: list[dict[str, Any]]) -> str:
    tool, args = ToolRegistry([TodoWrite()]).parse("TodoWrite", {"todos": todos})
    return tool.run(args, ctx)


def test_each_call_replaces_the_list_and_is_confirmed_in_claude_codes_words(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    first = todo_write(ctx, PLAN[:1])
    assert first == CONFIRMATION and ctx.todos == PLAN[:1]
    second = todo_write(ctx, PLAN[1:])
    assert ctx.todos == PLAN[1:]  # replaced whole, not appended
    assert tool_response("TodoWrite", {"todos": PLAN[1:]}, second, tmp_path, 1) == {
        "oldTodos": PLAN[:1], "newTodos": PLAN[1:],
    }  # fmt: skip
    assert list(tmp_path.iterdir()) == []  # no file touched


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ({"content": "x", "status": "done", "activeForm": "x"}, "status"),
        ({"content": "x", "status": "pending"}, "activeForm"),
        ({"content": "  ", "status": "pending", "activeForm": "x"}, "content"),
        ({"content": "x", "status": "pending", "activeForm": "x", "priority": "high"}, "priority"),
    ],
)
def test_a_bad_item_is_an_error_for_the_model(tmp_path: Path, item: dict[str, Any], named: str) -> None:
    with pytest.raises(ToolError, match=rf"Invalid arguments for TodoWrite: .*{named}"):
        todo_write(ToolContext(tmp_path), [item])


def test_two_in_progress_is_pointed_out_not_refused(tmp_path: Path) -> None:
    """Claude Code's prompt asks for one in_progress at a time; its schema does not refuse more."""
    ctx = ToolContext(tmp_path)
    both = [{**PLAN[1]}, {**PLAN[2], "status": "in_progress"}]
    out = todo_write(ctx, both)
    assert out.startswith(CONFIRMATION) and "2 tasks are in_progress; keep one in_progress" in out
    assert ctx.todos == both


def test_the_person_sees_the_list_with_the_current_task_in_its_active_form() -> None:
    shown = preview("TodoWrite", {"todos": PLAN}, CONFIRMATION)
    assert shown.summary == "todos: 1/3 done"
    assert shown.lines == ["[x] Write tests", "[>] Fixing bug", "[ ] Update docs"]


def test_plan_mode_and_read_only_agents_keep_it_and_each_agent_has_its_own_list(tmp_path: Path) -> None:
    parent = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), mode="plan")
    request = ToolRequest("TodoWrite", {"todos": PLAN}, (), True)
    assert parent.policy is not None and parent.policy.decide(request).kind == "allow"
    for child in (parent.child(read_only=True, parent_call="r"), parent.child(read_only=False, parent_call="p")):
        assert "TodoWrite" in child.tools.names()
        assert child.policy is not None and child.policy.decide(request).kind == "allow"
        assert child.ctx.todos is not parent.ctx.todos


def test_claude_codes_call_runs_end_to_end_shown_and_traced(tmp_path: Path) -> None:
    """The survey's call (T3-04), in plan mode, with Claude Code's --allowedTools naming it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    calls = [{"name": "TodoWrite", "input": {"todos": PLAN}}]
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "--permission-mode", "plan", "--allowedTools", "TodoWrite", "--", "x")  # fmt: skip
    assert run.code == 0, run.err
    said = run.out + run.err
    assert "has no tool TodoWrite" not in said
    assert "[x] Write tests" in said and "[>] Fixing bug" in said and "[ ] Update docs" in said
    (result,) = [e for e in read_trace(trace) if e["event"] == "tool_result"]
    assert result["output"] == CONFIRMATION and not result.get("is_error")
    assert {p.name for p in ws.iterdir()} <= {".arnes"}  # arnes's own folder; nothing of TodoWrite's


def test_a_deny_rule_on_it_holds(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    calls = [{"name": "TodoWrite", "input": {"todos": PLAN}}]
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "--disallowedTools", "TodoWrite", "--", "x")  # fmt: skip
    assert run.code == 0, run.err
    (result,) = [e for e in read_trace(trace) if e["event"] == "tool_result"]
    assert result.get("is_error") and result["output"] != CONFIRMATION


def test_its_schema_is_inlined_and_small() -> None:
    """pydantic puts a nested model under `$defs` with titles; every request pays for those bytes."""
    schema = spec_of(TodoWrite()).input_schema
    text = json.dumps(schema)
    assert "$defs" not in text and "$ref" not in text and "title" not in text and "additionalProperties" not in text
    items = schema["properties"]["todos"]["items"]
    assert set(items["properties"]) == {"content", "status", "activeForm"}
    assert items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert len(text) < 400
