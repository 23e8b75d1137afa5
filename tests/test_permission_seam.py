"""The workspace policy and the gate: every line of the seam's decision table."""

from __future__ import annotations

from pathlib import Path

import pytest

from arnes.permissions.approvers import (
    NO_TTY,
    ApprovalAnswer,
    ApprovalRequest,
    NoTerminalApprover,
    ScriptedApprover,
    parse_answer,
)
from arnes.permissions.gate import PermissionGate
from arnes.permissions.policy import Mode, WorkspacePolicy
from arnes.permissions.types import Access, Target, ToolRequest


def req(path: Path, access: Access, tool: str = "Edit") -> ToolRequest:
    return ToolRequest(tool, {}, (Target(path, access),), access == "read")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.mark.parametrize(
    ("mode", "kind", "source"),
    [
        ("default", "ask", "mode"),
        ("acceptEdits", "allow", "mode"),
        ("bypass", "allow", "mode"),
        ("plan", "deny", "mode"),
    ],
)
def test_write_inside_follows_the_mode(ws: Path, mode: Mode, kind: str, source: str) -> None:
    d = WorkspacePolicy(ws, mode).decide(req(ws / "a.py", "write"))
    assert (d.kind, d.source) == (kind, source)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypass"])
def test_read_inside_is_allowed_in_every_mode(ws: Path, mode: Mode) -> None:
    assert WorkspacePolicy(ws, mode).decide(req(ws / "a.py", "read", "Read")).kind == "allow"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypass"])
@pytest.mark.parametrize("access", ["read", "write"])
def test_outside_is_refused_in_every_mode(ws: Path, tmp_path: Path, mode: Mode, access: Access) -> None:
    d = WorkspacePolicy(ws, mode).decide(req(tmp_path / "other.txt", access))
    assert (d.kind, d.source) == ("deny", "perimeter")


def test_sibling_with_a_common_prefix_is_outside(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "ws-other").mkdir()
    d = WorkspacePolicy(ws, "bypass").decide(req(tmp_path / "ws-other" / "a", "read"))
    assert d.kind == "deny"


def test_dotdot_is_folded_before_judging(ws: Path) -> None:
    d = WorkspacePolicy(ws, "bypass").decide(req(ws / "sub" / ".." / ".." / "x", "write"))
    assert d.kind == "deny"


def test_links_are_judged_by_their_real_path(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "out").symlink_to(outside)
    (ws / "dangling").symlink_to(tmp_path / "nowhere" / "file")
    (ws / "inner").symlink_to(ws / "real.txt")
    policy = WorkspacePolicy(ws, "bypass")
    assert policy.decide(req(ws / "out" / "new.txt", "write")).kind == "deny"
    assert policy.decide(req(ws / "dangling", "write")).kind == "deny"
    assert policy.decide(req(ws / "inner", "write")).kind == "allow"


@pytest.mark.parametrize("target", [".git/config", ".arnes/settings.json", ".git", "sub/../.arnes/x"])
def test_protected_folders_are_never_written_even_in_bypass(ws: Path, target: str) -> None:
    d = WorkspacePolicy(ws, "bypass").decide(req(Path(str(ws / target)).resolve(), "write"))
    assert (d.kind, d.source) == ("deny", "builtin")


def test_a_link_into_a_protected_folder_is_protected(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / "hooks").symlink_to(ws / ".git")
    assert WorkspacePolicy(ws, "bypass").decide(req(ws / "hooks" / "pre-commit", "write")).source == "builtin"


def test_protected_folders_can_still_be_read(ws: Path) -> None:
    assert WorkspacePolicy(ws).decide(req(ws / ".git" / "HEAD", "read", "Read")).kind == "allow"


def test_no_targets_is_allowed(ws: Path) -> None:
    assert WorkspacePolicy(ws).decide(ToolRequest("ReadDoc", {})).kind == "allow"


def test_deny_beats_ask_among_several_targets(ws: Path, tmp_path: Path) -> None:
    request = ToolRequest("Edit", {}, (Target(ws / "a", "write"), Target(tmp_path / "b", "write")), False)
    assert WorkspacePolicy(ws).decide(request).kind == "deny"


# -- the gate -------------------------------------------------------------------------------


def test_no_terminal_turns_ask_into_deny(ws: Path) -> None:
    gate = PermissionGate(WorkspacePolicy(ws), NoTerminalApprover())
    outcome = gate.check(req(ws / "a.py", "write"), "a.py")
    assert not outcome.allowed and outcome.decision.source == "no-tty"
    assert outcome.message is not None and outcome.message.endswith(NO_TTY)


def test_gate_passes_the_preview_and_honours_yes(ws: Path) -> None:
    approver = ScriptedApprover(["y"])
    gate = PermissionGate(WorkspacePolicy(ws), approver)
    outcome = gate.check(req(ws / "a.py", "write"), "a.py", lambda: "+new line")
    assert outcome.allowed and outcome.decision.source == "user"
    assert approver.asked == [ApprovalRequest("Edit", "a.py", f"write {ws / 'a.py'}", "+new line", None)]


def test_allowed_and_denied_calls_never_reach_the_approver(ws: Path, tmp_path: Path) -> None:
    approver = ScriptedApprover([])
    gate = PermissionGate(WorkspacePolicy(ws), approver)
    assert gate.check(req(ws / "a", "read", "Read"), "a").allowed
    assert not gate.check(req(tmp_path / "x", "write"), "x").allowed
    assert approver.asked == []


@pytest.mark.parametrize(
    ("raw", "rule", "expected"),
    [
        ("y", None, ApprovalAnswer("allow_once")),
        ("YES\n", None, ApprovalAnswer("allow_once")),
        ("a", "Read(/x/**)", ApprovalAnswer("allow_always", rule="Read(/x/**)")),
        ("a", None, ApprovalAnswer("deny", feedback="a")),  # "always" is only offered with a rule
        ("n", None, ApprovalAnswer("deny")),
        ("", None, ApprovalAnswer("deny")),
        ("try the other file", None, ApprovalAnswer("deny", feedback="try the other file")),
    ],
)
def test_parse_answer(raw: str, rule: str | None, expected: ApprovalAnswer) -> None:
    assert parse_answer(raw, rule) == expected
