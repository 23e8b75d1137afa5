"""The workspace policy: perimeter, built-in protection and the mode.

This is the seam every tool call passes through before it runs. Rules from settings and flags
(DESIGN §4) plug in as another policy in front of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arnes.permissions.paths import is_inside, resolve_real
from arnes.permissions.types import Decision, Target, ToolRequest

Mode = Literal["default", "acceptEdits", "plan", "bypass"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypass")
PROTECTED_DIRS = (".git", ".arnes")


@dataclass
class WorkspacePolicy:
    """Reads inside are allowed; writes inside follow the mode; anything outside is refused."""

    workspace: Path
    mode: Mode = "default"

    def __post_init__(self) -> None:
        self.workspace = Path(resolve_real(self.workspace))

    def decide(self, request: ToolRequest) -> Decision:
        decisions = [self._target(request.tool, t) for t in request.targets]
        if not decisions:
            return Decision("allow", "touches no path", "mode")
        for kind in ("deny", "ask"):
            for decision in decisions:
                if decision.kind == kind:
                    return decision
        return decisions[0]

    def _target(self, tool: str, target: Target) -> Decision:
        real = resolve_real(target.path)
        if not is_inside(self.workspace, real):
            return Decision("deny", f"{target.access} outside the workspace: {real}", "perimeter")
        if target.access == "read":
            return Decision("allow", "read inside the workspace", "perimeter")
        for written in (target.path, real):
            if is_inside(self.workspace, written):
                first = written.relative_to(self.workspace).parts[:1]
                if first and first[0] in PROTECTED_DIRS:
                    return Decision("deny", f"{first[0]}/ is protected: the file tools never write it", "builtin")
        if self.mode == "plan":
            return Decision("deny", "plan mode: no writes, only reading and planning", "mode")
        if self.mode in ("acceptEdits", "bypass"):
            return Decision("allow", f"{self.mode}: write inside the workspace", "mode")
        return Decision("ask", f"write {real}", "mode")
