"""Small policies that wrap another: composition by wrapping, not a growing switch.

Each wrapper can only narrow what it wraps (a deny from inside always stands), so any stack of
them is at most as permissive as the innermost policy. Write your own in a few lines:

    @dataclass
    class NoFridays:
        inner: Policy
        def decide(self, request: ToolRequest) -> Decision:
            if not request.read_only and date.today().weekday() == 4:
                return Decision("deny", "no writes on Fridays", "rule")
            return self.inner.decide(request)

A policy that wants to remember answers implements `after_ask` (see `AskOncePerTool`), and
forwards it to its inner policy so that the whole stack learns.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.readonly import is_read_only
from arnes.permissions.shell import analyse
from arnes.permissions.types import Decision, Mode, Policy, ToolRequest, stricter


@runtime_checkable
class LearnsFromAnswers(Protocol):
    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        """Told what the user answered to a call this policy said `ask` for."""
        ...


def forward_answer(inner: Policy, request: ToolRequest, allowed: bool) -> None:
    if isinstance(inner, LearnsFromAnswers):
        inner.after_ask(request, allowed)


@dataclass
class AllowTools:
    """Only the named tools exist for this policy; everything else is denied before `inner`."""

    inner: Policy
    names: frozenset[str]

    def __init__(self, inner: Policy, names: Iterable[str]):
        self.inner = inner
        self.names = frozenset(names)

    def decide(self, request: ToolRequest) -> Decision:
        if request.tool not in self.names:
            allowed = ", ".join(sorted(self.names)) or "none"
            return Decision("deny", f"tool {request.tool} is not allowed here (allowed: {allowed})", "rule")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)


@dataclass
class AskOncePerTool:
    """After the user says yes to a tool once, later asks for that tool are allowed."""

    inner: Policy
    approved: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, request: ToolRequest) -> Decision:
        decision = self.inner.decide(request)
        with self._lock:
            remembered = request.tool in self.approved
        if decision.kind == "ask" and remembered:
            return Decision("allow", f"{request.tool} was approved earlier this session", "user")
        return decision

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        if allowed:
            with self._lock:
                self.approved.add(request.tool)
        forward_answer(self.inner, request, allowed)


@dataclass
class PathScoped:
    """Every path a call touches must stay inside `root` (by real path); the rest is `inner`'s."""

    inner: Policy
    root: Path

    def __post_init__(self) -> None:
        self.root = resolve_real(self.root)

    def decide(self, request: ToolRequest) -> Decision:
        for target in request.targets:
            real = resolve_real(target.path)
            if not is_inside(self.root, real):
                return Decision("deny", f"{target.access} outside {self.root} is not allowed here: {real}", "perimeter")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)


def command_only_reads(command: str) -> bool:
    """Every part is a known read-only command, nothing is redirected into a file, nothing hidden."""
    analysis = analyse(command)
    if analysis.error or analysis.opaque or analysis.writes:
        return False
    return all(is_read_only(part) for part in analysis.commands)


@dataclass
class ReadOnly:
    """No writes at all, whatever `inner` says: for reviewers and read-only sub-agents."""

    inner: Policy

    def decide(self, request: ToolRequest) -> Decision:
        if request.command is not None:
            if not command_only_reads(request.command):
                return Decision("deny", "this agent is read-only: only commands that read may run", "rule")
        elif not request.read_only or any(t.access == "write" for t in request.targets):
            return Decision("deny", "this agent is read-only: it reports changes instead of making them", "rule")
        return self.inner.decide(request)

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)


@dataclass
class StricterMode:
    """Judge every call in `mode` or the inner engine's mode, whichever is stricter (an agent
    definition's `permissionMode`). The request carries the mode down the stack, so the rule
    engine at the bottom decides with it; nothing here can widen what the engine would say."""

    inner: Policy
    mode: Mode

    def decide(self, request: ToolRequest) -> Decision:
        mode = stricter(self.mode, request.mode)
        return self.inner.decide(dataclasses.replace(request, mode=mode))

    def after_ask(self, request: ToolRequest, allowed: bool) -> None:
        forward_answer(self.inner, request, allowed)


@dataclass
class NeverAsk:
    """Claude Code's `dontAsk`: what would be asked is denied; only what the rules and the mode
    allow runs."""

    inner: Policy
    why: str = "this agent never asks"

    def decide(self, request: ToolRequest) -> Decision:
        decision = self.inner.decide(request)
        if decision.kind == "ask":
            return Decision("deny", f"{decision.reason} ({self.why})", decision.source, decision.rule)
        return decision
