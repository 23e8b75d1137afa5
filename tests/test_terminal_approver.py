"""What the interactive ask shows: the call's subject once, whatever it is."""

from __future__ import annotations

import io

from rich.console import Console

from arnes.permissions.approvers import ApprovalRequest, TerminalApprover


def shown(request: ApprovalRequest) -> str:
    out = io.StringIO()
    approver = TerminalApprover(console=Console(file=out, width=100, no_color=True), read_line=lambda: "n")
    assert approver.ask(request).kind == "deny"
    return out.getvalue()


def test_a_call_with_no_path_or_command_is_named_once() -> None:
    text = shown(ApprovalRequest("ExitPlanMode", "ExitPlanMode", "leaving plan mode needs the user's approval"))
    assert "? ExitPlanMode \n" in text and "ExitPlanMode ExitPlanMode" not in text


def test_a_command_is_shown_after_the_tool() -> None:
    assert "? Bash rm -rf build" in shown(ApprovalRequest("Bash", "rm -rf build", "writes"))
