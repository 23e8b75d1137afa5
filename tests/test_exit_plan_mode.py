"""ExitPlanMode, as Claude Code's plan mode has it: offered only in plan mode, the plan shown for
approval at the gate; yes returns the session to the mode it had before plan mode, no keeps plan
mode and tells the model; nobody to ask (`-p`) is a no, listed in `permission_denials`."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect

from arnes.agent.trace import read_trace
from arnes.llm.script import ScriptProvider
from arnes.session import Session
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer
from tests.test_e2e_repl import PROMPT, spawn

PLAN = "- write a.txt\n- then say done"
EXIT = {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]}
WRITE = {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "made\n"}}]}
KEYS = {"OPENAI_API_KEY": "test"}


def results(trace: Path) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for event in read_trace(trace):
        if event["event"] == "tool_result":
            out.setdefault(str(event["name"]), []).append(event)
    return out


def test_approved_the_session_goes_back_to_the_mode_before_plan(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    child, trace = spawn(ws, tmp_path, [WRITE, EXIT, WRITE, {"text": "all done"}], "--permission-mode", "acceptEdits")
    child.sendline("/mode plan")
    child.expect("mode: plan")
    child.expect(PROMPT)
    child.sendline("make a.txt")
    child.expect("ExitPlanMode")
    child.expect("leaving plan mode needs the user's approval of this plan")
    child.expect("- write a.txt")  # the plan, shown for approval
    child.expect(r"\[y\] yes / \[n\] no")
    child.sendline("y")
    child.expect("plan mode ended, the session is in acceptEdits mode")
    child.expect("all done")  # acceptEdits again: the second Write was not asked about
    child.expect(PROMPT)
    child.sendline("/mode")
    child.expect("mode: acceptEdits")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert (ws / "a.txt").read_text() == "made\n"
    done = results(trace)
    first, second = done["Write"]
    assert first["is_error"] and "plan mode" in str(first["output"])  # before the approval
    assert not second.get("is_error")
    (approved,) = done["ExitPlanMode"]
    assert not approved.get("is_error") and "User has approved your plan" in str(approved["output"])


def test_refused_it_stays_in_plan_mode_and_the_model_is_told(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    child, trace = spawn(ws, tmp_path, [EXIT, WRITE, {"text": "stopped"}], "--permission-mode", "plan")
    child.sendline("make a.txt")
    child.expect(r"\[y\] yes / \[n\] no")
    child.sendline("not yet, split it in two")
    child.expect("stopped")
    child.expect(PROMPT)
    child.sendline("/mode")
    child.expect("mode: plan")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert not (ws / "a.txt").exists()
    done = results(trace)
    (refused,) = done["ExitPlanMode"]
    assert refused["is_error"] and "The user denied this action: not yet, split it in two" in str(refused["output"])
    (write,) = done["Write"]
    assert write["is_error"] and "plan mode" in str(write["output"])


def test_headless_nobody_approves_it_plan_mode_holds_and_the_denial_is_listed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [EXIT, WRITE, {"text": "the plan is above"}]}))
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--permission-mode", "plan",
                    "--output-format", "stream-json", "--verbose", "make a.txt")  # fmt: skip
    assert run.code == 0, run.err
    lines = [json.loads(line) for line in run.out.splitlines() if line.startswith("{")]
    uses = [b for m in lines if m["type"] == "assistant" for b in m["message"]["content"] if b["type"] == "tool_use"]
    assert uses[0]["name"] == "ExitPlanMode" and uses[0]["input"] == {"plan": PLAN}  # shown as any tool call
    denied = [d["tool_name"] for d in lines[-1]["permission_denials"]]
    assert denied == ["ExitPlanMode", "Write"]  # nobody approved: still plan mode, so the Write is refused too
    blocks = [b for m in lines if m["type"] == "user" for b in m["message"]["content"]]
    told = [b["content"] for b in blocks if b["type"] == "tool_result"]
    assert "needs the user's approval of this plan" in str(told[0]) and "no terminal to ask" in str(told[0])
    assert not (ws / "a.txt").exists()


def test_it_is_offered_only_in_plan_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    offered = {}
    for mode in ("plan", "default"):
        with FakeLLMServer([{"text": "ok"}]) as server:
            run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--model", "m", "-w", str(ws),
                            "--permission-mode", mode, "-p", "hi", env=KEYS)  # fmt: skip
            assert run.code == 0, run.err
            offered[mode] = {tool["function"]["name"] for tool in server.requests[0][1]["tools"]}
    assert "ExitPlanMode" in offered["plan"] and "ExitPlanMode" not in offered["default"]
    assert offered["plan"] - {"ExitPlanMode"} == offered["default"]


def test_leaving_plan_mode_stops_offering_it_and_sub_agents_never_have_it(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), mode="plan")
    assert "ExitPlanMode" in session.offered_names()
    assert "ExitPlanMode" not in session.child(read_only=False, parent_call="c").tools.names()
    assert session.leave_plan() == "default" and session.engine.mode == "default"
    assert "ExitPlanMode" not in session.offered_names() and session.leave_plan() is None


def test_an_allow_rule_naming_it_approves_every_plan_unasked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [EXIT, WRITE, {"text": "done"}]}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "--permission-mode", "plan", "--allowedTools", "ExitPlanMode", "Write", "--", "go")  # fmt: skip
    assert run.code == 0, run.err
    assert "plan mode ended, the session is in default mode" in run.out + run.err
    assert (ws / "a.txt").read_text() == "made\n"  # default mode, and the Write allowed by its rule
    # a run that started in plan mode keeps checkpoints: what it wrote after the plan can be taken back
    back = run_arnes("-w", str(ws), "rewind", "1", "--code-only")
    assert back.code == 0, back.err
    assert not (ws / "a.txt").exists()
