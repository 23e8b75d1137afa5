"""The rule engine: deny > ask > allow over every source, then the perimeter, then the mode.

Paths are judged twice, as written and as their real path: a deny or an ask that matches either
form applies; an allow must match both; the perimeter looks at the real path alone. Deny and ask
rules match case-insensitively (on a case-insensitive disk `.ENV` is `.env`); allow rules do not.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from arnes.permissions.paths import is_inside, resolve_real
from arnes.permissions.rules import Rule, RuleKind, SourcedRule, parse_rule, path_regex
from arnes.permissions.types import Access, Decision, Mode, Target, ToolRequest

PROTECTED_DIRS = (".git", ".arnes")
READ_FAMILY = frozenset({"Read", "Glob", "Grep", "ReadDoc"})
WRITE_FAMILY = frozenset({"Write", "Edit"})


@dataclass(frozen=True)
class _Compiled:
    kind: RuleKind
    rule: Rule
    origin: str
    regex: re.Pattern[str] | None  # None: the rule covers every call of its tool


def rule_tools(tool: str, access: Access | None) -> frozenset[str]:
    """Which rule names apply: `Edit(...)` covers Write, `Read(...)` covers Glob, Grep, ReadDoc."""
    tools = {tool}
    if access == "write" or tool in WRITE_FAMILY:
        tools.add("Edit")
    if access == "read" or tool in READ_FAMILY:
        tools.add("Read")
    return frozenset(tools)


@dataclass
class RuleEngine:
    """The permission policy of DESIGN §4 as one `Policy`; wrappers can narrow it further."""

    workspace: Path
    mode: Mode = "default"
    rules: list[SourcedRule] = field(default_factory=list)
    home: Path = field(default_factory=lambda: Path(os.path.expanduser("~")))
    _compiled: dict[tuple[RuleKind, str], list[_Compiled]] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.workspace = resolve_real(self.workspace)
        self._compile()

    # -- rules ---------------------------------------------------------------------------------
    def add_rule(self, kind: RuleKind, raw: str, source: str = "session") -> None:
        parse_rule(raw)
        with self._lock:
            self.rules.insert(0, SourcedRule(kind, raw, source))
            self._compile()

    def _compile(self) -> None:
        table: dict[tuple[RuleKind, str], list[_Compiled]] = {}
        ws, home = str(self.workspace), str(self.home)
        for sourced in self.rules:
            rule = parse_rule(sourced.rule)
            regex = None
            if rule.specifier is not None and rule.tool != "Bash":
                flags = re.IGNORECASE if sourced.kind != "allow" else 0
                regex = re.compile(path_regex(rule.specifier, ws, home) + r"\Z", flags | re.DOTALL)
            table.setdefault((sourced.kind, rule.tool), []).append(_Compiled(sourced.kind, rule, sourced.source, regex))
        self._compiled = table

    def _first(
        self, kind: RuleKind, tools: Iterable[str], paths: Iterable[Path] | None, every: bool
    ) -> _Compiled | None:
        """The first rule of `kind` for these tools that matches any (or, with every, all) paths."""
        forms = [str(p) for p in paths] if paths is not None else None
        for tool in tools:
            for compiled in self._compiled.get((kind, tool), ()):
                if compiled.regex is None:
                    return compiled
                if forms is None:
                    continue
                hits = [compiled.regex.match(form) is not None for form in forms]
                if (all(hits) if every else any(hits)) and hits:
                    return compiled
        return None

    # -- decisions -----------------------------------------------------------------------------
    def decide(self, request: ToolRequest) -> Decision:
        if not request.targets:
            return self._finish(self._pathless(request))
        decisions = [self._target(request.tool, t) for t in request.targets]
        for kind in ("deny", "ask"):
            for decision in decisions:
                if decision.kind == kind:
                    return self._finish(decision)
        return self._finish(decisions[0])

    def _finish(self, decision: Decision) -> Decision:
        if self.mode == "bypass" and decision.kind == "ask":
            return Decision("allow", f"bypass mode (was: {decision.reason})", "mode", decision.rule, decision.origin)
        return decision

    def _pathless(self, request: ToolRequest) -> Decision:
        tools = rule_tools(request.tool, None)
        for kind in ("deny", "ask", "allow"):
            hit = self._first(kind, tools, None, every=False)
            if hit:
                return _by_rule(hit)
        return Decision("allow", "touches no path", "mode")

    def _target(self, tool: str, target: Target) -> Decision:
        written, real = target.path, resolve_real(target.path)
        forms = (written, real) if written != real else (written,)
        tools = rule_tools(tool, target.access)
        if target.access == "write":
            protected = self._protected(forms)
            if protected:
                return Decision("deny", f"{protected}/ is protected: the file tools never write it", "builtin")
        with self._lock:
            for kind in ("deny", "ask"):
                hit = self._first(kind, tools, forms, every=False)
                if hit:
                    return _by_rule(hit)
            if self.mode == "plan" and target.access == "write":
                return Decision("deny", "plan mode: no writes, only reading and planning", "mode")
            hit = self._first("allow", tools, forms, every=True)
            if hit:
                return _by_rule(hit)
        if not is_inside(self.workspace, real):
            return Decision("ask", f"{target.access} outside the workspace: {real}", "perimeter")
        if target.access == "read":
            return Decision("allow", "read inside the workspace", "perimeter")
        if self.mode in ("acceptEdits", "bypass"):
            return Decision("allow", f"{self.mode}: write inside the workspace", "mode")
        return Decision("ask", f"write {real}", "mode")

    def _protected(self, forms: Iterable[Path]) -> str | None:
        for form in forms:
            if is_inside(self.workspace, form):
                parts = form.relative_to(self.workspace).parts
                if parts and parts[0] in PROTECTED_DIRS:
                    return parts[0]
        return None

    def hidden(self, tool: str, path: Path) -> bool:
        """True when a deny or ask rule covers reading `path`: searches must not show it."""
        forms = (path, resolve_real(path))
        tools = rule_tools(tool, "read")
        with self._lock:
            return any(self._first(kind, tools, forms, every=False) for kind in ("deny", "ask"))

    def suggest_rule(self, request: ToolRequest) -> str | None:
        """The session rule offered as "always": reading the folder outside the workspace."""
        if request.tool not in READ_FAMILY or not request.targets:
            return None
        real = resolve_real(request.targets[0].path)
        if is_inside(self.workspace, real):
            return None
        folder = real if real.is_dir() else real.parent
        return f"Read({folder}/**)"

    def listing(self) -> list[SourcedRule]:
        with self._lock:
            return list(self.rules)


def _by_rule(hit: _Compiled) -> Decision:
    return Decision(hit.kind, f"rule {hit.rule.raw}", "rule", hit.rule.raw, hit.origin)
