"""Who answers an `ask` when Claude Code's Agent SDK runs arnes with a `can_use_tool` callback
(`--permission-prompt-tool stdio`): the callback, through a `can_use_tool` control request.

Only the ask reaches it: deny rules, the perimeter and the mode have decided before (the gate),
as in Claude Code. An allow that changes the call's input is refused: arnes runs only calls its
gate judged. No answer (stdin closed, an error) is a no. The rule "always" would add goes with the
request as Claude Code's `permission_suggestions`; an allow with `updatedPermissions` adding allow
rules is an "always": those rules hold for the rest of the session (whatever destination it
names: arnes writes no settings file for the SDK), so the next such call is not asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arnes.config_claude import translate_rule
from arnes.headless.channel import Channel, ChannelClosed, as_object
from arnes.permissions.approvers import ApprovalAnswer, ApprovalRequest, claude_answer
from arnes.permissions.rules import RuleError, parse_rule


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
                    "permission_suggestions": suggestions(request.suggested_rule),
                    "decision_reason": request.reason,
                }
            )
        except ChannelClosed:
            return ApprovalAnswer("deny", feedback="the SDK closed stdin before answering")
        if reply.get("subtype") == "error":
            return ApprovalAnswer("deny", feedback=f"the SDK's can_use_tool failed: {reply.get('error')}")
        body = as_object(reply.get("response"))
        answer = claude_answer(body, request.input, "can_use_tool")
        if answer.kind == "allow_once" and (rules := allowed_rules(body.get("updatedPermissions"))):
            return ApprovalAnswer("allow_always", rule=rules[0], more_rules=tuple(rules[1:]))
        if body.get("behavior") != "allow" and body.get("interrupt"):  # "deny and stop": as on Ctrl-C
            raise KeyboardInterrupt
        return answer


def suggestions(rule: str | None) -> list[dict[str, Any]]:
    """Claude Code's `permission_suggestions`: the session rule "always" would add, if any."""
    if rule is None:
        return []
    try:
        parsed = parse_rule(rule)
    except RuleError:
        return []
    value: dict[str, Any] = {"toolName": parsed.tool}
    if parsed.specifier is not None:
        value["ruleContent"] = parsed.specifier
    return [{"type": "addRules", "rules": [value], "behavior": "allow", "destination": "session"}]


def allowed_rules(updates: object) -> list[str]:
    """The allow rules an answer's `updatedPermissions` adds (`addRules` with behavior allow), as
    arnes rules; a rule arnes cannot read is left out (the call is still allowed once)."""
    found: list[str] = []
    for update in updates if isinstance(updates, list) else []:
        if not isinstance(update, dict) or update.get("type") != "addRules" or update.get("behavior") != "allow":
            continue
        rules = update.get("rules")
        for value in rules if isinstance(rules, list) else []:
            if not isinstance(value, dict) or not isinstance(value.get("toolName"), str):
                continue
            content = value.get("ruleContent")
            written = f"{value['toolName']}({content})" if isinstance(content, str) and content else value["toolName"]
            rule = translate_rule(written)  # Claude Code's spelling: `Task`, a path rule's anchors
            try:
                parse_rule(rule)
            except RuleError:
                continue
            found.append(rule)
    return found
