"""Decisions for shell commands: every part of a compound command is judged, and the whole gets
the strictest answer. A deny on any part denies; an allow must cover every part; what cannot be
looked into asks; writes by redirection are judged as writes to their target path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arnes.permissions.paths import absolute
from arnes.permissions.readonly import is_read_only, path_arguments
from arnes.permissions.shell import SimpleCommand, analyse
from arnes.permissions.types import Decision, DecisionKind, Target

if TYPE_CHECKING:
    from arnes.permissions.engine import RuleEngine


def decide_command(engine: RuleEngine, tool: str, command: str) -> Decision:
    analysis = analyse(command)
    if analysis.error:
        return Decision("ask", f"{analysis.error}; a person has to read it", "mode")
    parts = analysis.commands
    # 1. deny: a rule on any part (as run, or with its wrappers), or a denied path it touches
    for part in parts:
        for words in (part.words, [*part.wrappers, *part.words]):
            hit = engine.command_rule("deny", words)
            if hit:
                return _rule(hit.kind, hit.rule.raw, hit.origin)
    path_decisions = _paths(engine, parts, analysis.writes)
    for decision in path_decisions:
        if decision.kind == "deny":
            return decision
    # 2. ask: a rule on any part, a path that asks, or a part nobody can see into
    for part in parts:
        hit = engine.command_rule("ask", part.words)
        if hit:
            return _rule("ask", hit.rule.raw, hit.origin)
    read_only = all(is_read_only(p) for p in parts) and not analysis.writes
    if engine.mode == "plan" and not read_only:
        return Decision("deny", "plan mode: only read-only commands run", "mode")
    if analysis.opaque:
        return Decision("ask", f"cannot be checked: {analysis.opaque[0]}", "mode")
    for decision in path_decisions:
        if decision.kind == "ask":
            return decision
    # 3. allow: every part read-only or covered by an allow rule it cannot sneak past
    uncovered = [p for p in parts if not is_read_only(p) and not _allowed_by_rule(engine, p)]
    if not uncovered:
        if read_only:
            return Decision("allow", "read-only command", "mode")
        if analysis.writes and all(is_read_only(p) for p in parts):
            first = engine.target("Bash", Target(absolute(engine.workspace, analysis.writes[0]), "write"))
            return Decision("allow", f"redirection: {first.reason}", first.source, first.rule, first.origin)
        return _covered(engine, parts)
    if engine.mode in ("acceptEdits", "bypass") and engine.sandboxed:
        return Decision("allow", f"{engine.mode}: the sandbox holds the perimeter", "mode")
    nested = next((p for p in uncovered if p.nested), None)
    if nested:
        return Decision("ask", f"{nested.text!r} runs inside a substitution, eval or sh -c", "mode")
    return Decision("ask", f"not a read-only command: {uncovered[0].text}", "mode")


def _allowed_by_rule(engine: RuleEngine, part: SimpleCommand) -> bool:
    """Rules cover plain commands only: not inside $(...)/eval/sh -c, not behind a risky variable."""
    if part.nested or part.risky_env or (part.unknown_args and not _prefix_rule(engine, part)):
        return False
    return engine.command_rule("allow", part.words) is not None


def _prefix_rule(engine: RuleEngine, part: SimpleCommand) -> bool:
    hit = engine.command_rule("allow", part.words)
    return hit is not None and hit.command is not None and hit.command.prefix


def _covered(engine: RuleEngine, parts: list[SimpleCommand]) -> Decision:
    for part in parts:
        if not is_read_only(part):
            hit = engine.command_rule("allow", part.words)
            if hit:
                return _rule("allow", hit.rule.raw, hit.origin)
    return Decision("allow", "read-only command", "mode")


def _paths(engine: RuleEngine, parts: list[SimpleCommand], writes: list[str]) -> list[Decision]:
    """Reads named by read-only commands and writes by redirection, judged by the path rules."""
    decisions = []
    for written in writes:
        decisions.append(engine.target("Bash", Target(absolute(engine.workspace, written), "write")))
    for part in parts:
        if not is_read_only(part):
            continue
        for arg in path_arguments(part):
            decision = engine.target("Bash", Target(absolute(engine.workspace, arg), "read"))
            if decision.kind != "allow" or decision.source == "rule":
                decisions.append(decision)
    return [d for d in decisions if d.kind != "allow"]


def _rule(kind: DecisionKind, raw: str, origin: str) -> Decision:
    return Decision(kind, f"rule {raw}", "rule", raw, origin)


def suggest_command_rule(command: str) -> str | None:
    """For "always": `Bash(first two words:*)` of a single plain command."""
    analysis = analyse(command)
    if analysis.error or analysis.opaque or len(analysis.commands) != 1 or analysis.writes:
        return None
    words = analysis.commands[0].words
    if not words or analysis.commands[0].nested:
        return None
    head = words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1]
    return f"Bash({' '.join(head)}:*)"
