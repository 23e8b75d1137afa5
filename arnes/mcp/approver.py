"""Claude Code's `--permission-prompt-tool mcp__SERVER__TOOL`: what would be asked goes to a tool of
one of the run's MCP servers, which answers for the user (a CI bot, a chat approval).

Only the ask reaches it: deny rules, the perimeter and the mode have decided before, as in Claude
Code. The tool gets `{"tool_name", "input", "tool_use_id"}` and answers with a text holding JSON:
`{"behavior": "allow", "updatedInput": {...}}` or `{"behavior": "deny", "message": "..."}`. An
allow that changes the call's input is refused (arnes runs only calls its gate judged); anything
else, a server that fails, text that is not such JSON, is a no with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from arnes.nesting import json_loads
from arnes.permissions.approvers import ApprovalAnswer, ApprovalRequest, claude_answer


class Caller(Protocol):
    def call(self, server: str, tool: str, arguments: dict[str, object]) -> tuple[str, bool]: ...


@dataclass
class McpApprover:
    hub: Caller
    server: str
    tool: str
    interactive = True

    @property
    def name(self) -> str:
        return f"mcp__{self.server}__{self.tool}"

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        arguments: dict[str, object] = {"tool_name": request.tool, "input": request.input}
        if request.call_id:
            arguments["tool_use_id"] = request.call_id
        try:
            text, is_error = self.hub.call(self.server, self.tool, arguments)
        except ConnectionError as exc:
            return ApprovalAnswer("deny", feedback=f"the permission prompt tool {self.name} could not answer: {exc}")
        if is_error:
            return ApprovalAnswer("deny", feedback=f"the permission prompt tool {self.name} failed: {text}")
        try:
            answer = json_loads(text)
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or answer.get("behavior") not in ("allow", "deny"):
            return ApprovalAnswer(
                "deny", feedback=f'{self.name} answered neither {{"behavior": "allow"}} nor "deny": {text[:200]}'
            )
        return claude_answer(answer, request.input, self.name)


def parse_tool(given: str, servers: list[str]) -> tuple[str, str] | None:
    """(server, tool) of `mcp__SERVER__TOOL` for one of `servers`, or None."""
    for server in sorted(servers, key=len, reverse=True):  # the longest name that fits: `a` vs `a_b`
        prefix = f"mcp__{server}__"
        if given.startswith(prefix) and len(given) > len(prefix):
            return server, given[len(prefix) :]
    return None
