"""Everything one run needs, in one object: tests build one in a line, nothing is global."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from arnes.agent.events import EventBus
from arnes.agent.prompt import system_prompt
from arnes.llm.base import Provider
from arnes.permissions.approvers import Approver, NoTerminalApprover
from arnes.permissions.engine import RuleEngine
from arnes.permissions.gate import PermissionGate
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Mode, Policy
from arnes.sandbox.base import Sandbox, SandboxMode, SandboxSpec, choose_sandbox
from arnes.sandbox.hidden import hidden_paths
from arnes.tools.base import Tool, ToolContext, ToolRegistry
from arnes.tools.bash import Bash, BashOutput, KillShell
from arnes.tools.docs import ReadDoc
from arnes.tools.files import Edit, Read, Write
from arnes.tools.search import Glob, Grep


def default_tools() -> list[Tool]:  # type: ignore[type-arg]  # heterogeneous argument types
    return [Read(), Glob(), Grep(), Write(), Edit(), Bash(), BashOutput(), KillShell(), ReadDoc()]


def new_session_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


# Inside the workspace, kept read-only for shell commands: hooks and config run code later.
SANDBOX_READ_ONLY = (".git/hooks", ".git/config", ".arnes")


def _prepare_read_only(workspace: Path) -> None:
    """Make sure the folders kept read-only exist, so a command cannot create them instead."""
    (workspace / ".arnes").mkdir(exist_ok=True)
    if (workspace / ".git").is_dir():
        (workspace / ".git" / "hooks").mkdir(exist_ok=True)


@dataclass
class Limits:
    max_turns: int | None = None


@dataclass
class Session:
    workspace: Path
    provider: Provider
    mode: Mode = "default"
    approver: Approver = field(default_factory=NoTerminalApprover)
    rules: list[SourcedRule] = field(default_factory=list)
    policy: Policy | None = None  # default: the rule engine alone; pass a wrapped one to narrow it
    tools: ToolRegistry = field(default_factory=lambda: ToolRegistry(default_tools()))
    bus: EventBus = field(default_factory=EventBus)
    limits: Limits = field(default_factory=Limits)
    context_window: int = 32_768
    id: str = field(default_factory=new_session_id)
    sandbox_mode: SandboxMode = "off"
    network: bool = False
    engine: RuleEngine = field(init=False)
    sandbox: Sandbox = field(init=False)
    ctx: ToolContext = field(init=False)
    gate: PermissionGate = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        self.engine = RuleEngine(self.workspace, self.mode, list(self.rules))
        spec = SandboxSpec(
            self.workspace,
            network=self.network,
            read_only=tuple(self.workspace / p for p in SANDBOX_READ_ONLY),
            hidden=lambda: hidden_paths(self.engine),
        )
        self.sandbox = choose_sandbox(self.sandbox_mode, spec)
        if self.sandbox.name != "off":
            _prepare_read_only(self.workspace)
        self.engine.sandboxed = self.sandbox.name != "off"
        self.ctx = ToolContext(self.workspace, hidden=self.engine.hidden, sandbox=self.sandbox)
        if self.policy is None:
            self.policy = self.engine
        self.gate = PermissionGate(
            self.policy,
            self.approver,
            on_always=lambda rule: self.engine.add_rule("allow", rule, "session"),
            suggest=self.engine.suggest_rule,
        )

    def close(self) -> None:
        """End the session's background work: every background shell is killed."""
        self.ctx.jobs.close()

    def system_prompt(self) -> str:
        return system_prompt(self.workspace, self.tools.names())
