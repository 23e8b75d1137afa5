"""The loop guard and the nudges: what a small local model does and a script usually does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.adapt.announce import ANNOUNCE_NUDGE, announces
from arnes.agent.loop import Agent
from arnes.llm.script import ScriptProvider
from arnes.messages import Message, TextBlock
from arnes.session import Session
from tests.conftest import run_arnes


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"name": name, "input": inp}


def run(tmp_path: Path, turns: list[dict[str, Any]], **kw: Any) -> tuple[Agent, Any]:
    kw.setdefault("steering_set", "small")
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits", **kw)
    agent = Agent(session)
    return agent, agent.run("task")


def texts(messages: list[Message]) -> list[str]:
    return [b.text for m in messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)]


def test_the_same_write_again_and_again_is_nudged_then_stopped_as_stuck(tmp_path: Path) -> None:
    write = {"tool_calls": [call("Write", file_path="hello.txt", content="hi\n")]}
    agent, result = run(tmp_path, [write] * 8)
    assert result.stop_reason == "stuck" and result.limit == "stuck"
    assert "kept repeating calls it had already made (Write)" in (result.error or "")
    # Created, Overwrote (new results), then two repeats -> nudge, one more -> stop: 5 model turns.
    assert result.turns == 5
    nudges = [t for t in texts(agent.messages) if t.startswith("[arnes] Your last turns repeated calls")]
    assert len(nudges) == 1
    last = agent.messages[-1]  # the stopping turn's call was run and answered, not left pending
    assert last.role == "user" and last.content[0].content == "Overwrote hello.txt (1 lines)."  # type: ignore[union-attr]


def test_a_nudge_that_helps_lets_the_run_go_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    read = {"tool_calls": [call("Read", file_path="a.txt")]}
    agent, result = run(tmp_path, [read, read, read, {"tool_calls": [call("Glob", pattern="*")]}, read, read])
    assert result.stop_reason == "end_turn"  # the Glob was progress: the streak starts again
    assert len([t for t in texts(agent.messages) if t.startswith("[arnes] Your last turns")]) == 2


def test_alternating_repeats_are_a_loop_too_and_polling_is_not(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    a = {"tool_calls": [call("Read", file_path="a.txt")]}
    b = {"tool_calls": [call("Edit", file_path="a.txt", old_string="nothere", new_string="y")]}
    # Every repeat gets the same answer: nudged at turn 4 (the second pair), stuck at turn 5.
    _, result = run(tmp_path, [a, b] * 4)
    assert result.stop_reason == "stuck" and result.turns == 5
    poll = {"tool_calls": [call("BashOutput", id="bash_9")]}
    _, polled = run(tmp_path, [poll] * 6)
    assert polled.stop_reason == "end_turn"


def test_a_compaction_forgets_what_was_seen(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 3000 + "\n")
    read = {"tool_calls": [call("Read", file_path="a.txt")]}
    _, result = run(tmp_path, [read] * 8, context_window=2048)
    assert result.compactions >= 3 and result.stop_reason == "end_turn"


@pytest.mark.parametrize(
    "text",
    [
        "I will read the file first.",
        "Let me check the tests.",
        "Okay, now I'll update labels.py:",
        "I have looked at the code. Next I will edit the function to fix the bug.",
        "Let's start by listing the files.",
        "To fix this, I will edit pricing.py.",
    ],
)
def test_announcing_a_step_is_recognised(text: str) -> None:
    assert announces(text)


@pytest.mark.parametrize(
    "text",
    [
        "I changed DISCOUNT_RATE to 0.15 in pricing.py.",
        "Done. Let me know if you need anything else.",
        "Should I also update the tests?",
        "I changed pricing.py. If you want, I will also add a test.",
        "The function returns the sum. I will not change anything.",
        "I will read the file first.\n```python\nprint('x')\n```",
        "Here is what I found: " + "the loop is fine. " * 30 + "I will fix it.",
        "",
    ],
)
def test_final_answers_are_not_announcements(text: str) -> None:
    assert not announces(text)


def test_an_announcement_is_nudged_at_most_twice_and_a_plain_answer_still_ends_the_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    turns = [
        {"text": "I will read the file first."},
        {"tool_calls": [call("Read", file_path="a.txt")]},
        {"text": "Now I will edit it."},
        {"text": "Let me edit it."},  # a third announcement is taken as the answer
        {"text": "never reached"},
    ]
    agent, result = run(tmp_path, turns)
    assert result.stop_reason == "end_turn" and result.text == "Let me edit it." and result.turns == 4
    assert texts(agent.messages).count(ANNOUNCE_NUDGE) == 2
    _, plain = run(tmp_path, [{"text": "a.txt holds one line, x."}, {"text": "never reached"}])
    assert plain.turns == 1 and plain.text == "a.txt holds one line, x."


def test_stuck_ends_the_command_with_exit_3_and_says_why(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": [call("Glob", pattern="*")]}] * 9}))
    ws = tmp_path / "ws"
    ws.mkdir()
    done = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--output-format", "json", "go")
    data = json.loads(done.out)
    assert done.code == 3 and data["stop_reason"] == "stuck" and data["limit"] == "stuck"
    text = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "go")
    assert text.code == 3 and "[stuck]" in text.out and "asked it to try something else" in text.out


def test_a_one_shot_run_has_a_default_turn_limit_and_the_flag_overrides_it(tmp_path: Path) -> None:
    turns = [{"tool_calls": [call("Glob", pattern=f"*{i}*")]} for i in range(60)]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    ws = tmp_path / "ws"
    ws.mkdir()
    args = ("--provider", "script", "--script", str(script), "-w", str(ws), "--output-format", "json")
    default = json.loads(run_arnes(*args, "go").out)
    assert default["stop_reason"] == "max_turns" and default["turns"] == 50 and "--max-turns 50" in default["error"]
    more = json.loads(run_arnes(*args, "--max-turns", "70", "go").out)
    assert more["stop_reason"] == "end_turn" and more["turns"] == 61
