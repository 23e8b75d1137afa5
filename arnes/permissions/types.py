"""The vocabulary of the permission seam, shared by tools, policies, approvers and the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

Access = Literal["read", "write"]
DecisionKind = Literal["allow", "ask", "deny"]
Source = Literal["rule", "mode", "perimeter", "builtin", "user", "no-tty", "hook"]
Mode = Literal["default", "acceptEdits", "plan", "bypass"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypass")
# From the strictest to the widest: an agent under another may only move left of its parent.
STRICTNESS: tuple[Mode, ...] = ("plan", "default", "acceptEdits", "bypass")


def stricter(mode: Mode, other: Mode | None) -> Mode:
    """The stricter of two modes (`other` None: `mode`), so a narrower agent never widens its parent."""
    if other is None:
        return mode
    return mode if STRICTNESS.index(mode) <= STRICTNESS.index(other) else other


@dataclass(frozen=True)
class Target:
    """A path a tool call touches, absolute and normalised as written (not yet resolved)."""

    path: Path
    access: Access
    real: Path | None = None  # resolved once by the caller: the decision and the write use the same


@dataclass(frozen=True)
class ToolRequest:
    """What a policy sees of one tool call."""

    tool: str
    input: dict[str, Any]
    targets: tuple[Target, ...] = ()
    read_only: bool = True
    command: str | None = None
    # A narrower agent's mode (see compose.StricterMode); the engine judges in the stricter of it and its own.
    mode: Mode | None = None
    call_id: str = ""  # the model's id for the call, for whoever answers an ask (the SDK's can_use_tool)


@dataclass(frozen=True)
class Decision:
    kind: DecisionKind
    reason: str
    source: Source
    rule: str | None = field(default=None, compare=False)  # the rule that decided, if any
    origin: str | None = field(default=None, compare=False)  # where that rule came from
    confine: bool = field(default=False, compare=False)  # allowed as read-only: run it read-only too
    # An ask only because a command cannot be read, while deny rules on commands exist: a person
    # may read it, but nothing that cannot read it either (a hook's allow) may say yes.
    unjudged: bool = field(default=False, compare=False)


class Policy(Protocol):
    """Decides allow, ask or deny for one tool call, with its reason and source."""

    def decide(self, request: ToolRequest) -> Decision: ...
