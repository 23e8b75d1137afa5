"""Policies that wrap policies, and the gate that asks: one prompt at a time, "always" re-evaluated."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from arnes.permissions.approvers import ApprovalAnswer, ApprovalRequest, ScriptedApprover
from arnes.permissions.compose import AllowTools, AskOncePerTool, PathScoped, ReadOnly
from arnes.permissions.engine import RuleEngine
from arnes.permissions.gate import PermissionGate
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Decision, Target, ToolRequest


class Always:
    def __init__(self, kind: str = "ask"):
        self.kind = kind

    def decide(self, request: ToolRequest) -> Decision:
        return Decision(self.kind, "inner", "mode")


def read(path: Path, tool: str = "Read") -> ToolRequest:
    return ToolRequest(tool, {}, (Target(path, "read"),), True)


def write(path: Path) -> ToolRequest:
    return ToolRequest("Edit", {}, (Target(path, "write"),), False)


def test_allow_tools_denies_the_rest_and_delegates(tmp_path: Path) -> None:
    policy = AllowTools(Always("allow"), ["Read", "Grep"])
    assert policy.decide(read(tmp_path)).kind == "allow"
    d = policy.decide(write(tmp_path))
    assert d.kind == "deny" and "Edit is not allowed" in d.reason and "Grep, Read" in d.reason


def test_ask_once_remembers_a_yes_per_tool(tmp_path: Path) -> None:
    policy = AskOncePerTool(Always("ask"))
    approver = ScriptedApprover(["y"])
    gate = PermissionGate(policy, approver)
    assert gate.check(read(tmp_path / "a"), "a").allowed
    assert gate.check(read(tmp_path / "b"), "b").allowed  # no second question
    assert len(approver.asked) == 1
    assert policy.decide(write(tmp_path)).kind == "ask"  # another tool still asks


def test_ask_once_does_not_remember_a_no(tmp_path: Path) -> None:
    policy = AskOncePerTool(Always("ask"))
    gate = PermissionGate(policy, ScriptedApprover(["n", "y"]))
    assert not gate.check(read(tmp_path / "a"), "a").allowed
    assert gate.check(read(tmp_path / "a"), "a").allowed


def test_path_scoped_confines_and_delegates(tmp_path: Path) -> None:
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "out").symlink_to(tmp_path)
    policy = PathScoped(Always("allow"), tmp_path / "box")
    assert policy.decide(read(tmp_path / "box" / "a")).kind == "allow"
    assert policy.decide(read(tmp_path / "elsewhere")).kind == "deny"
    assert policy.decide(read(tmp_path / "box" / "out" / "x")).kind == "deny"  # by real path
    assert policy.decide(ToolRequest("Delegate", {})).kind == "allow"


def test_read_only_denies_every_write_and_wrappers_only_narrow(tmp_path: Path) -> None:
    engine = RuleEngine(tmp_path, "bypass")
    stack = PathScoped(AskOncePerTool(ReadOnly(engine)), tmp_path)
    assert stack.decide(write(tmp_path / "a")).kind == "deny"
    assert stack.decide(read(tmp_path / "a")).kind == "allow"
    denied = RuleEngine(tmp_path, "bypass", [SourcedRule("deny", "Read(*.pem)", "x")])
    assert AskOncePerTool(AllowTools(denied, ["Read"])).decide(read(tmp_path / "k.pem")).kind == "deny"


class SlowApprover:
    """Records how many prompts are open at once."""

    interactive = True

    def __init__(self, answer: str = "y"):
        self.open = 0
        self.most = 0
        self.asked: list[ApprovalRequest] = []
        self.answer = answer
        self.lock = threading.Lock()

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        with self.lock:
            self.open += 1
            self.most = max(self.most, self.open)
            self.asked.append(request)
        time.sleep(0.05)
        with self.lock:
            self.open -= 1
        if self.answer == "a" and request.suggested_rule:
            return ApprovalAnswer("allow_always", rule=request.suggested_rule)
        return ApprovalAnswer("allow_once")


def test_parallel_calls_never_open_two_prompts(tmp_path: Path) -> None:
    approver = SlowApprover()
    gate = PermissionGate(Always("ask"), approver)
    threads = [threading.Thread(target=gate.check, args=(read(tmp_path / str(i)), str(i))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(approver.asked) == 4 and approver.most == 1


def test_a_call_waiting_behind_always_is_re_evaluated_not_re_asked(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = RuleEngine(ws, "default")
    approver = SlowApprover("a")
    gate = PermissionGate(
        engine, approver, on_always=lambda r: engine.add_rule("allow", r), suggest=engine.suggest_rule
    )
    outcomes = []
    threads = [
        threading.Thread(target=lambda i=i: outcomes.append(gate.check(read(tmp_path / "lib" / f"{i}.py"), "x")))
        for i in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(approver.asked) == 1
    assert approver.asked[0].suggested_rule == f"Read({tmp_path}/lib/**)"
    assert all(o.allowed for o in outcomes)
    assert [r.source for r in engine.listing()] == ["session"]


def test_a_wrapped_policy_governs_the_loop(tmp_path: Path) -> None:
    from arnes.agent.loop import Agent
    from arnes.llm.script import ScriptProvider
    from arnes.session import Session

    (tmp_path / "a.txt").write_text("one\n")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "two\n"}}]},
    ]
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="bypass")
    session.gate.policy = ReadOnly(session.engine)
    result = Agent(session).run("go")
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert [d["reason"] for d in result.denials] == [
        "this agent is read-only: it reports changes instead of making them"
    ]
