"""The interactive prompt in a real pseudo-terminal: tasks, slash commands, Ctrl-C, multi-line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pexpect

from arnes.agent.trace import read_trace
from tests.conftest import ARNES

PROMPT = "arnes>"


def spawn(ws: Path, tmp_path: Path, turns: list[dict[str, object]], *flags: str) -> tuple[pexpect.spawn, Path]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    child = pexpect.spawn(
        ARNES,
        ["--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), *flags],
        env={**os.environ, "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 160),
    )
    child.expect(PROMPT)
    return child, trace


EDIT = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
    {
        "tool_calls": [
            {"name": "Edit", "input": {"file_path": "pricing.py", "old_string": "0.10", "new_string": "0.15"}}
        ]
    },
    {"text": "changed it"},
]


def test_a_task_then_diff_undo_cost_mode_and_exit(shop: Path, tmp_path: Path) -> None:
    child, _ = spawn(shop, tmp_path, EDIT, "--permission-mode", "acceptEdits", "--trust")  # the command applies
    child.sendline("change the discount")
    child.expect("changed it")
    child.expect(PROMPT)
    assert "0.15" in (shop / "pricing.py").read_text()
    child.sendline("/diff")
    child.expect(r"\+DISCOUNT_RATE = 0\.15")
    child.expect(PROMPT)
    child.sendline("/cost")
    child.expect(r"\d+ input tokens, \d+ output tokens")
    child.expect(PROMPT)
    child.sendline("/undo")
    child.expect("restored: pricing.py")
    child.expect(PROMPT)
    assert "DISCOUNT_RATE = 0.10" in (shop / "pricing.py").read_text()
    child.sendline("/mode plan")
    child.expect("mode: plan")
    child.expect(PROMPT)
    child.sendline("/help")
    child.expect("/checker TASK")
    child.expect(PROMPT)
    child.sendline("/permissions")
    child.expect("built in: the file tools never write")
    child.expect(PROMPT)
    child.sendline('/checker "unclosed')
    child.expect("/checker: No closing quotation")
    child.expect(PROMPT)
    child.sendline("/compact")
    child.expect(r"compacted: \d+ -> \d+ messages")
    child.expect(PROMPT)
    child.sendline("/model other-model")
    child.expect("model: ")
    child.expect(PROMPT)
    child.sendline("/frobnicate")
    child.expect("unknown command /frobnicate")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert "handoff" not in (child.before or "")  # /undo left nothing changed: no checks on the way out
    child.close()
    assert child.exitstatus == 0


def test_leaving_after_changes_runs_the_quick_handoff_not_the_tests(shop: Path, tmp_path: Path) -> None:
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"command": "touch tests-ran"}}))
    # The command applies (trusted); the self-check would run it during the turn, so it is off here:
    # this test is about the way out.
    child, _ = spawn(shop, tmp_path, EDIT, "--permission-mode", "acceptEdits", "--trust", "--no-self-check")
    child.sendline("change the discount")
    child.expect("changed it")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect("files changed this session: pricing.py")
    child.expect("handoff check")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and not (shop / "tests-ran").exists()


def test_no_model_gets_the_same_hint_at_the_prompt_as_in_one_shot_runs(shop: Path, tmp_path: Path) -> None:
    child = pexpect.spawn(
        ARNES, ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "-w", str(shop)],
        env={**os.environ, "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}, encoding="utf-8", timeout=60,
        dimensions=(40, 160),
    )  # fmt: skip
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("no answer from the model")
    child.expect("To configure a model")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_ctrl_c_cancels_the_turn_not_the_session(shop: Path, tmp_path: Path) -> None:
    turns = [{"sleep": 30, "text": "thinking slowly"}, {"text": "second answer"}]
    child, trace = spawn(shop, tmp_path, turns)
    child.sendline("slow task")
    child.expect("thinking slowly")  # streamed by the model before it waits: the request is under way
    child.sendintr()
    child.expect("turn cancelled")
    child.expect(PROMPT)
    child.sendline("next task")
    child.expect("second answer")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    users = [e["content"][-1]["text"] for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user"]
    assert users == ["slow task", "next task"]


def test_alt_enter_makes_a_multi_line_task(shop: Path, tmp_path: Path) -> None:
    child, trace = spawn(shop, tmp_path, [{"text": "ok"}])
    child.send("first line")
    child.send("\x1b\r")  # Alt-Enter (Esc, Enter): a new line, not a submit
    child.send("second line\r")
    child.expect("ok")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    assert first["content"][-1]["text"] == "first line\nsecond line"
