"""Who answers an `ask` when Claude Code's Agent SDK runs arnes with a `can_use_tool` callback
(`--permission-prompt-tool stdio`): the callback, through a `can_use_tool` control request.

Only the ask reaches it: deny rules, the perimeter and the mode have decided before (the gate),
as in Claude Code. An allow that changes the call's input is refused: arnes runs only calls its
gate judged. No answer (stdin closed, an error) is a no.
"""

from __future__ import annotations

from dataclasses import dataclass

from arnes.headless.channel import Channel, ChannelClosed, as_object
from arnes.permissions.approvers import ApprovalAnswer, ApprovalRequest


@dataclass
class SdkApprover:
    channel: Channel
    interactive = True

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        try:
            reply = self.channel.request(
                {
                    "subtype": "can_use_tool",
                    "tool_name": request.tool,
                    "input": request.input,
                    "tool_use_id": request.call_id,
                    "permission_suggestions": [],
                    "decision_reason": request.reason,
                }
            )
        except ChannelClosed:
            return ApprovalAnswer("deny", feedback="the SDK closed stdin before answering")
        if reply.get("subtype") == "error":
            return ApprovalAnswer("deny", feedback=f"the SDK's can_use_tool failed: {reply.get('error')}")
        body = as_object(reply.get("response"))
        if body.get("behavior") == "allow":
            changed = body.get("updatedInput")
            if changed is not None and changed != request.input:
                return ApprovalAnswer(
                    "deny", feedback="can_use_tool changed the call's input; arnes runs only calls it judged"
                )
            return ApprovalAnswer("allow_once")
        if body.get("interrupt"):  # the callback's "deny and stop": the turn ends as on Ctrl-C
            raise KeyboardInterrupt
        return ApprovalAnswer("deny", feedback=str(body.get("message") or "") or None)
