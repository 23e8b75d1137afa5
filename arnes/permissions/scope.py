"""`allowed-tools` of a command (or a skill): a list that NARROWS what the model may call.

Claude Code reads `allowed-tools` as a pre-approval: those calls run without asking. arnes reads
it as a fence: a call outside the list is denied before the session's policy is asked, and a
call inside it goes on to that policy unchanged, so a tool the rules deny or ask for stays
denied or asked. A file a repository ships can then never grant anything.

The entries are permission rules (`Read`, `Edit(src/**)`, `Bash(git diff:*)`, `mcp__srv`) and
match as allow rules do (DESIGN §4): strictly. A shell command is inside only when every part of
it is covered by a `Bash` entry; what cannot be looked into is outside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arnes.permissions.compose import forward_answer
from arnes.permissions.engine import RuleEngine, rule_tools
from arnes.permissions.rules import SourcedRule, parse_rule
from arnes.permissions.shell import analyse
from arnes.permissions.types import Decision, Policy, ToolRequest

# Always inside the fence: loading a skill adds prompt text and can only narrow further (its own
# allowed-tools stack on this list), as the skills' scope lets the Skill tool through too.
ALWAYS = frozenset({"Skill"})


@dataclass
class AllowedTools:
    """Only calls an entry covers reach `inner`; the rest is denied, naming `who` narrowed it."""

    inner: Policy
    entries: tuple[str, ...]
    workspace: Path
    who: str  # "the /review command", for the reason the model reads
    _scope: RuleEngine = field(init=False)
    _tools: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        rules = [SourcedRule("allow", entry, self.who) for entry in self.entries]
        self._scope = RuleEngine(self.workspace, "default", rules)
        self._tools = frozenset(parse_rule(entry).tool for entry in self.entries)

    def offers(self, tool: str) -> bool:
        """Whether any entry can cover a call of `tool` (the tools the model is shown)."""
        return tool in ALWAYS or bool(rule_tools(tool, None) & self._tools)

    def covers(self, request: ToolRequest) -> bool:
        if request.tool in ALWAYS:
            return True
        if request.command is not None:
            return self._covers_command(request.command)
        decision = self._scope.decide(request)
        return decision.kind == "allow" and decision.rule is not None

    def _covers_command(self, command: str) -> bool:
        if "Bash" in self.entries:
            return True
        analysis = analyse(command)
        if analysis.error or analysis.opaque or not analysis.commands:
            return False
        for part in analysis.commands:
            if part.nested or part.risky_env or part.privileged or part.unknown_args:
                return False
            if self._scope.command_rule("allow", part.words) is None:
                return False
        return not analysis.writes  # a redirection writes a file no Bash entry names

    def decide(self, request: ToolRequest) -> Decision:
        if not self.covers(request):
            allowed = ", ".join(self.entries) or "no tools"
            return Decision("deny", f"{self.who} allows only: {allowed}", "rule")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)
