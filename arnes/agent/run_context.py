"""What the loop needs of the session it runs in, and nothing more (issue 22.9).

The loop (agent/loop.py) and its hook moments (agent/hookpoints.py) are typed against this
protocol, never against `Session`: they import no module above agent/, and mypy refuses any
reach into the session beyond what is listed here. `Session` (arnes/session.py) is the one
implementation; it builds what these members hand over (the gate, the tool context, the
steering) once, when it is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from arnes.agent.budget import Budget
    from arnes.agent.events import EventBus
    from arnes.agent.rules import Rule
    from arnes.agent.steering import Steering
    from arnes.extensions.hooks import HookRunner
    from arnes.llm.base import Provider
    from arnes.messages import ToolSpec
    from arnes.permissions.gate import PermissionGate
    from arnes.permissions.types import Mode, ToolRequest
    from arnes.rewind.checkpoints import Checkpoints
    from arnes.tools.base import ToolContext, ToolRegistry
    from arnes.tools.structured import StructuredAnswer

Role = Literal["main", "subagent", "compaction", "draw"]  # draw: the main model sampled (adapt/draws.py)


@dataclass
class Limits:
    max_turns: int | None = None
    subagent_turns: int = 30


class Verdict(Protocol):
    """One run of a verify command (workflow/verify.py's `Verdict`)."""

    @property
    def command(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def output(self) -> str: ...


class Verification(Protocol):
    """The verify rounds after the model finishes (workflow/verify.py's `Verifier`)."""

    command: str
    rounds: int

    def check(self) -> Verdict: ...
    def feedback(self, verdict: Verdict, round_no: int) -> str: ...


class Diagnostics(Protocol):
    """A language server's word on a file just written (arnes/lsp/hub.py), and failures to say."""

    notes: list[str]

    def handles(self, path: Path) -> bool: ...
    def after_write(self, path: Path, real: Path) -> str:
        """The server's word on `path`, written at `real` (read here, never blocking)."""


class HookSite(Protocol):
    """What a hook's input names: the session, its transcript, its folder and mode (Claude Code's keys)."""

    @property
    def id(self) -> str: ...
    @property
    def depth(self) -> int: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def bus(self) -> EventBus: ...
    @property
    def hooks(self) -> HookRunner | None: ...
    @property
    def transcript_path(self) -> Path | None: ...


class RunContext(HookSite, Protocol):
    """The session as the loop sees it: the model, the tools behind the gate, the limits, the
    work around a turn (steering, verify rounds, checkpoints), and its start and end. Read-only
    but for the window, which a server may report smaller than the settings said."""

    context_window: int

    @property
    def provider(self) -> Provider: ...  # the main model; /model and set_model change it between turns
    @property
    def tools(self) -> ToolRegistry: ...
    @property
    def ctx(self) -> ToolContext: ...
    @property
    def gate(self) -> PermissionGate: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def budget(self) -> Budget: ...
    @property
    def steering(self) -> Steering: ...
    @property
    def verifier(self) -> Verification | None: ...
    @property
    def checkpoints(self) -> Checkpoints | None: ...
    @property
    def structured(self) -> StructuredAnswer | None: ...  # --json-schema: the answer StructuredOutput kept
    @property
    def lsp(self) -> Diagnostics | None: ...  # plugins' language servers

    def provider_for(self, role: Role) -> Provider: ...
    def summarise(self, transcript: str) -> str: ...
    def system_prompt(self) -> str: ...
    def tool_specs(self) -> list[ToolSpec]: ...
    def context(self) -> str: ...
    def begin(self) -> None:
        """The banner event, then the background work (MCP servers) starts."""

    def end(self) -> list[str]:
        """Close what this session owns; what closing found, for the user (warnings)."""

    def new_turn(self) -> None:
        """The user's message: what lasted a turn (writes, skills' narrowing) starts over."""

    def can_write(self, offered: set[str]) -> bool:
        """Whether the model can change files with these tools (or through the edit format)."""

    def quietly_allowed(self, request: ToolRequest) -> bool:
        """Whether the rules allow this call without asking anyone (for calls arnes makes quietly)."""

    def scoped_rules(self) -> list[Rule]: ...

    def folder_instructions(self, folder: str) -> str:
        """A sub-folder's instruction files, for the first file tool call below it ("" for none)."""

    def delegate(self, agent: str | None, *, read_only: bool, parent_call: str) -> RunContext:
        """A sub-agent's context (ToolError for an unknown agent name)."""
