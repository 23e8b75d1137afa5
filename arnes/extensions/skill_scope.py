"""`allowed-tools` of the skills loaded this turn: what the model may call while they are active.

A skill can only narrow (DESIGN §13): the scope sits in front of the session's policy and denies
a call no active skill lists, but a call it lets through is still decided by the rules, the
perimeter and the mode, so a tool a rule denies or asks for stays so. Entries are read like
permission rules: `Read` also covers Grep, Glob and ReadDoc, `Edit` covers Write, `mcp__NAME`
every tool of that server; `Bash(git log:*)` lets through only commands whose every part that
pattern allows, `Edit(docs/**)` only writes there.

The scope lasts until the user's next message (the end of a `-p` run): the loop clears it when a
turn starts. The Skill tool itself always passes, so a skill may name another; every active
list applies at once, so loading a second skill narrows further and never widens.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arnes.permissions.compose import forward_answer
from arnes.permissions.engine import RuleEngine, rule_tools
from arnes.permissions.rules import CommandPattern, Rule, SourcedRule, parse_rule
from arnes.permissions.shell import analyse
from arnes.permissions.types import Access, Decision, Policy, ToolRequest

SKILL_TOOL = "Skill"


@dataclass(frozen=True)
class _Narrowing:
    skill: str
    entries: tuple[Rule, ...]
    paths: RuleEngine  # the entries with a path specifier, as allow rules, to match targets


@dataclass
class ActiveSkills:
    """The narrowing lists of the skills loaded since the turn began (shared by the tool and the
    policy of one session; its sub-agents see it through their parent's policy)."""

    workspace: Path
    _active: list[_Narrowing] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def narrow(self, skill: str, entries: Sequence[str]) -> None:
        rules = tuple(parse_rule(e) for e in entries)
        paths = [SourcedRule("allow", r.raw, f"skill {skill}") for r in rules if r.specifier and r.tool != "Bash"]
        with self._lock:
            self._active.append(_Narrowing(skill, rules, RuleEngine(self.workspace, "default", paths)))

    def clear(self) -> None:
        with self._lock:
            self._active.clear()

    def names(self) -> list[str]:
        with self._lock:
            return [n.skill for n in self._active]

    def refusal(self, request: ToolRequest) -> str | None:
        """Why an active skill does not let this call through, or None."""
        if request.tool == SKILL_TOOL:
            return None
        with self._lock:
            active = list(self._active)
        for narrowing in active:
            if not _covers(narrowing, request):
                listed = ", ".join(r.raw for r in narrowing.entries) or "no tools"
                return (
                    f"skill {narrowing.skill} is active and its allowed-tools do not include this call "
                    f"(allowed: {listed}); do this step with those tools, or say what else you need"
                )
        return None


def _covers(narrowing: _Narrowing, request: ToolRequest) -> bool:
    access: Access | None = request.targets[0].access if request.targets else None
    names = rule_tools(request.tool, None) | rule_tools(request.tool, access)
    entries = [r for r in narrowing.entries if r.tool in names]
    if any(r.specifier is None for r in entries):
        return True
    patterns = [CommandPattern.parse(r.specifier) for r in entries if r.tool == "Bash" and r.specifier]
    if patterns:
        return request.command is not None and _command_covered(patterns, request.command)
    if not entries or not request.targets:
        return False
    return all(narrowing.paths.allow_rule_covers(request.tool, t) for t in request.targets)


def _command_covered(patterns: list[CommandPattern], command: str) -> bool:
    """Every part of the command is one a pattern allows; what cannot be read is not covered."""
    analysis = analyse(command)
    if analysis.error or analysis.opaque or not analysis.commands:
        return False
    return all(not part.nested and any(p.allows(part.words) for p in patterns) for part in analysis.commands)


@dataclass
class SkillScope:
    """The session's policy behind the active skills' allowed-tools (a wrapper: it only narrows)."""

    inner: Policy
    active: ActiveSkills

    def decide(self, request: ToolRequest) -> Decision:
        why = self.active.refusal(request)
        if why is not None:
            return Decision("deny", why, "rule")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)
