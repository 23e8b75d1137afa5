"""`allowed-tools` of a command or a skill: a list that NARROWS what the model may call.

Claude Code reads `allowed-tools` as a pre-approval: those calls run without asking. arnes reads
it as a fence: a call outside the list is denied before the session's policy is asked, and a
call inside it goes on to that policy unchanged, so a tool the rules deny or ask for stays
denied or asked. A file a repository ships can then never grant anything.

The entries are permission rules and match as allow rules do (DESIGN §4), strictly and without
the perimeter (the policy behind the fence judges that): `Read` also covers Grep, Glob and
ReadDoc, `Edit` covers Write, `mcp__NAME` every tool of that server, `Edit(docs/**)` only writes
there. A shell command is inside only when every part of it is covered by a `Bash` entry; what
cannot be looked into, a redirection that writes, a risky variable or a privileged part is outside.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arnes.permissions.compose import forward_answer
from arnes.permissions.engine import RuleEngine, rule_tools
from arnes.permissions.rules import CommandPattern, Rule, SourcedRule, parse_rule
from arnes.permissions.shell import analyse
from arnes.permissions.types import Access, Decision, Policy, ToolRequest

# Always inside the fence: loading a skill adds prompt text and can only narrow further (its own
# allowed-tools stack on the list in force).
ALWAYS = frozenset({"Skill"})


@dataclass
class Fence:
    """The calls `entries` cover; `who` names the command or skill in the reason the model reads."""

    entries: Sequence[str]
    workspace: Path
    who: str  # "the /review command", "skill docs-only (active)"
    _rules: tuple[Rule, ...] = field(init=False)
    _paths: RuleEngine = field(init=False)  # the entries with a path specifier, as allow rules

    def __post_init__(self) -> None:
        self._rules = tuple(parse_rule(entry) for entry in self.entries)
        paths = [SourcedRule("allow", r.raw, self.who) for r in self._rules if r.specifier and r.tool != "Bash"]
        self._paths = RuleEngine(self.workspace, "default", paths)

    def offers(self, tool: str) -> bool:
        """Whether any entry can cover a call of `tool` (the tools the model is shown)."""
        return tool in ALWAYS or bool(rule_tools(tool, None) & {r.tool for r in self._rules})

    def covers(self, request: ToolRequest) -> bool:
        if request.tool in ALWAYS:
            return True
        access: Access | None = request.targets[0].access if request.targets else None
        names = rule_tools(request.tool, None) | rule_tools(request.tool, access)
        entries = [r for r in self._rules if r.tool in names]
        if any(r.specifier is None for r in entries):
            return True
        patterns = [CommandPattern.parse(r.specifier) for r in entries if r.tool == "Bash" and r.specifier]
        if request.command is not None or patterns:
            return request.command is not None and bool(patterns) and _command_covered(patterns, request.command)
        if not entries or not request.targets:
            return False
        return all(self._paths.allow_rule_covers(request.tool, t) for t in request.targets)

    def refusal(self, request: ToolRequest) -> str | None:
        """Why this call is outside the fence, or None."""
        if self.covers(request):
            return None
        return f"{self.who} allows only: {', '.join(self.entries) or 'no tools'}"


def _command_covered(patterns: list[CommandPattern], command: str) -> bool:
    analysis = analyse(command)
    if analysis.error or analysis.opaque or not analysis.commands or analysis.writes:
        return False  # a redirection writes a file no Bash entry names
    return all(
        not (part.nested or part.risky_env or part.privileged or part.unknown_args)
        and any(p.allows(part.words) for p in patterns)
        for part in analysis.commands
    )


class Refuses(Protocol):
    def refusal(self, request: ToolRequest) -> str | None: ...


@dataclass
class Fenced:
    """The session's policy behind a fence (a command's, or the active skills'): calls the fence
    refuses are denied with its reason; the rest reach `inner` unchanged. It only narrows."""

    inner: Policy
    fence: Refuses

    def decide(self, request: ToolRequest) -> Decision:
        why = self.fence.refusal(request)
        if why is not None:
            return Decision("deny", why, "rule")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)
