"""One gate every tool call passes: the policy decides, and an `ask` goes to the approver."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from arnes.permissions.approvers import NO_TTY, ApprovalRequest, Approver
from arnes.permissions.commands import command_parts
from arnes.permissions.compose import LearnsFromAnswers
from arnes.permissions.types import Decision, DecisionKind, Policy, ToolRequest

RETRY_ADVICE = "Do not retry it with another tool; ask the user how to proceed if needed."


@dataclass(frozen=True)
class GateOutcome:
    allowed: bool
    decision: Decision
    message: str | None = None  # what the model is told when the call does not run


@dataclass
class PermissionGate:
    """Decides, asks when it must (one prompt at a time), and tells the policy the answer."""

    policy: Policy
    approver: Approver
    on_always: Callable[[str], None] | None = None  # adds the session rule an "always" names
    suggest: Callable[[ToolRequest], str | None] = lambda request: None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(
        self,
        request: ToolRequest,
        subject: str,
        preview: Callable[[], str | None] = lambda: None,
        hook: HookDecision | None = None,
    ) -> GateOutcome:
        decision = with_hook(self.policy.decide(request), hook)
        if decision.kind != "ask":
            return _settled(decision)
        # One prompt at a time; and a call queued behind an "always" is judged again, not re-asked.
        with self._lock:
            decision = with_hook(self.policy.decide(request), hook)
            if decision.kind != "ask":
                return _settled(decision)
            if not self.approver.interactive:
                denied = Decision("deny", f"{decision.reason} {NO_TTY}", "no-tty", decision.rule)
                return GateOutcome(False, denied, f"Permission denied: {denied.reason}")
            offer = self.suggest(request) if self.on_always else None
            parts = tuple(command_parts(request.command)) if request.command else ()
            asked = ApprovalRequest(
                request.tool, subject, decision.reason, preview(), offer, parts, request.input, request.call_id
            )
            answer = self.approver.ask(asked)
            if answer.kind == "allow_always" and answer.rule and self.on_always:
                for rule in (answer.rule, *answer.more_rules):
                    self.on_always(rule)  # inside the lock: the next queued call sees it
            if isinstance(self.policy, LearnsFromAnswers):
                self.policy.after_ask(request, answer.kind != "deny")
        if answer.kind == "deny":
            words = answer.feedback
            if words == NO_TTY:
                denied = Decision("deny", f"{decision.reason} {NO_TTY}", "no-tty")
                return GateOutcome(False, denied, f"Permission denied: {denied.reason}")
            said = f": {words}" if words else ""
            said += "" if said.endswith((".", "!", "?")) else "."
            return GateOutcome(
                False,
                Decision("deny", f"denied by the user{said}", "user"),
                f"The user denied this action{said} {RETRY_ADVICE}",
            )
        if answer.kind == "allow_always" and answer.rule:
            return GateOutcome(True, Decision("allow", f"allowed always by the user ({answer.rule})", "user"))
        return GateOutcome(True, Decision("allow", "approved by the user", "user"))


@dataclass(frozen=True)
class HookDecision:
    """A PreToolUse hook's `permissionDecision` and its reason (extensions/hooks.py)."""

    kind: DecisionKind
    reason: str = ""


def with_hook(decision: Decision, hook: HookDecision | None) -> Decision:
    """A hook's deny or ask always tightens; its allow only answers the prompt no rule asked for.

    An ask that a rule (or the perimeter: outside the workspace) raised stays an ask, so with no
    terminal it is denied: a hook's allow never overrides a deny or ask rule (DESIGN §13).
    """
    if hook is None:
        return decision
    said = f": {hook.reason}" if hook.reason else ""
    if hook.kind == "deny":
        return Decision("deny", f"a PreToolUse hook denied it{said}", "hook")
    if hook.kind == "ask" and decision.kind == "allow":
        return Decision("ask", f"a PreToolUse hook asks{said}", "hook")
    if hook.kind == "allow" and decision.kind == "ask" and decision.unjudged:
        why = f"a PreToolUse hook allowed it{said}, but {decision.reason}, so the deny rules cannot be checked"
        return Decision("deny", why, "rule")
    if hook.kind == "allow" and decision.kind == "ask" and decision.source == "mode":
        return Decision("allow", f"allowed by a PreToolUse hook{said} (was: {decision.reason})", "hook")
    return decision


def _settled(decision: Decision) -> GateOutcome:
    if decision.kind == "allow":
        return GateOutcome(True, decision)
    return GateOutcome(False, decision, f"Permission denied: {decision.reason}")
