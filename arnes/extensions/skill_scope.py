"""`allowed-tools` of the skills loaded this turn: what the model may call while they are active.

A skill can only narrow (DESIGN §13): each active skill is a fence (permissions/scope.py, the same
one a command's `allowed-tools` builds) in front of the session's policy; a call every fence lets
through is still decided by the rules, the perimeter and the mode, so a tool a rule denies or
asks for stays so.

The scope lasts until the user's next message (the end of a `-p` run): the loop clears it when a
turn starts. The Skill tool itself always passes, so a skill may name another; every active
list applies at once, so loading a second skill narrows further and never widens.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arnes.permissions.scope import Fence
from arnes.permissions.types import ToolRequest


@dataclass
class ActiveSkills:
    """The fences of the skills loaded since the turn began (shared by the tool and the policy of
    one session; its sub-agents see it through their parent's policy)."""

    workspace: Path
    _active: list[tuple[str, Fence]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def narrow(self, skill: str, entries: Sequence[str]) -> None:
        fence = Fence(tuple(entries), self.workspace, f"skill {skill} is active and its allowed-tools")
        with self._lock:
            self._active.append((skill, fence))

    def clear(self) -> None:
        with self._lock:
            self._active.clear()

    def names(self) -> list[str]:
        with self._lock:
            return [skill for skill, _ in self._active]

    def refusal(self, request: ToolRequest) -> str | None:
        """Why an active skill does not let this call through, or None."""
        with self._lock:
            active = list(self._active)
        for _, fence in active:
            if not fence.covers(request):
                listed = ", ".join(fence.entries) or "no tools"
                return (
                    f"{fence.who} do not include this call (allowed: {listed}); "
                    "do this step with those tools, or say what else you need"
                )
        return None
