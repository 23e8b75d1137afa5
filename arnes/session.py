"""Everything one run needs, in one object: tests build one in a line, nothing is global."""

from __future__ import annotations

import dataclasses
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arnes.adapt.build import build_steering
from arnes.adapt.piece import Env
from arnes.agent.budget import Budget
from arnes.agent.context import SUMMARY_PROMPT
from arnes.agent.events import Event, EventBus, Nested, Notice, SessionStart
from arnes.agent.instructions import cap_for, folder_instructions, scoped_rules
from arnes.agent.listing import visible_files
from arnes.agent.named import named_files
from arnes.agent.prompt import session_context, system_prompt
from arnes.agent.rules import Rule
from arnes.agent.run_context import Limits, Role
from arnes.agent.steering import Steering
from arnes.envlimits import EnvLimits
from arnes.extensions.locations import one_warning
from arnes.extensions.skill_scope import ActiveSkills
from arnes.extensions.skills import SkillCatalog, SkillLoader
from arnes.host.files import HostFiles
from arnes.host.testcmd import TEST_TIMEOUT, TestCommand, detect
from arnes.llm.base import Provider
from arnes.messages import Message, ToolSpec
from arnes.permissions.approvers import Approver, NoTerminalApprover
from arnes.permissions.compose import AllowTools, NeverAsk, ReadOnly, StricterMode
from arnes.permissions.engine import RuleEngine
from arnes.permissions.gate import PermissionGate
from arnes.permissions.protected import SANDBOX_READ_ONLY
from arnes.permissions.rules import SourcedRule
from arnes.permissions.scope import Fenced
from arnes.permissions.types import Mode, Policy, ToolRequest, stricter
from arnes.sandbox.base import Sandbox, SandboxMode, SandboxSpec
from arnes.sandbox.choose import choose_sandbox
from arnes.sandbox.hidden import denied_programs, hidden_paths, unwritable_paths
from arnes.tools.base import Tool, ToolContext, ToolRegistry
from arnes.tools.bash import Bash, BashOutput, KillShell
from arnes.tools.delegate import Delegate
from arnes.tools.docs import ReadDoc
from arnes.tools.files import Edit, Read, Write
from arnes.tools.filestate import ChangeLog
from arnes.tools.notebook_edit import NotebookEdit
from arnes.tools.plan_mode import NAME as EXIT_PLAN
from arnes.tools.plan_mode import ExitPlanMode
from arnes.tools.processes import BackgroundJobs
from arnes.tools.search import Glob, Grep
from arnes.tools.skill import Skill
from arnes.tools.structured import NAME as STRUCTURED
from arnes.tools.structured import StructuredAnswer, StructuredOutput
from arnes.tools.todo import TodoWrite
from arnes.tools.treewatch import TreeWatch
from arnes.workflow.verify import Verifier

if TYPE_CHECKING:
    from arnes.extensions.agents import AgentMode, Catalog
    from arnes.extensions.hooks import HookRunner
    from arnes.extensions.output_styles import OutputStyle
    from arnes.lsp.hub import LspHub
    from arnes.mcp.client import McpHub
    from arnes.rewind.checkpoints import Checkpoints

WRITE_TOOLS = frozenset({"Write", "Edit", "NotebookEdit", "KillShell"})


def default_tools() -> list[Tool]:  # type: ignore[type-arg]  # heterogeneous argument types
    return [
        Read(), Glob(), Grep(), Write(), Edit(), Bash(), BashOutput(), KillShell(), ReadDoc(), Skill(), Delegate(),
        TodoWrite(), NotebookEdit(), ExitPlanMode(),
    ]  # fmt: skip


def new_session_id() -> str:
    """A UUID, as Claude Code's session ids are (tools built on its SDKs store and check them as such)."""
    return str(uuid.uuid4())


def _prepare_read_only(workspace: Path) -> None:
    """Make sure .arnes exists, so a command cannot create it (and settings in it) instead."""
    from arnes.dotdir import ensure_arnes_dir

    ensure_arnes_dir(workspace)


SMALL_WINDOW = 8192  # at or below this many tokens, tools are described briefly (tests/test_budget.py)
NON_INTERACTIVE_TURNS = 50  # the default --max-turns of a run nobody watches; a loop ends here


def workspace_sandbox(
    engine: RuleEngine,
    mode: SandboxMode,
    network: bool = False,
    env_passthrough: tuple[str, ...] = (),
    read_paths: tuple[Path, ...] = (),
) -> tuple[SandboxSpec, Sandbox]:
    """The sandbox for commands in the engine's workspace: the agent's, and the host-side checks'
    (verify, the ladder, handoff, team and eval verify commands), so a repository's test command
    never runs with more than the agent's own commands get."""
    workspace = engine.workspace
    programs = os.environ.get("PATH", os.defpath)  # where commands find programs: a deny names one there
    spec = SandboxSpec(
        workspace,
        network=network,
        read_only=tuple(workspace / p for p in SANDBOX_READ_ONLY),
        hidden=lambda: [*hidden_paths(engine), *denied_programs(engine, programs)],
        unwritable=lambda: unwritable_paths(engine),
        env_passthrough=env_passthrough,
        read_paths=read_paths,
    )
    sandbox = choose_sandbox(mode, spec)
    if sandbox.name != "off":
        _prepare_read_only(workspace)
    # Only bubblewrap holds the whole perimeter (read-only .git/.arnes, hidden files, no
    # network); with Landlock commands still ask as they would without a sandbox.
    engine.sandboxed = sandbox.name == "bubblewrap"
    return spec, sandbox


@dataclass
class Shared:
    """What a session shares with its sub-agents: one rule engine, one log of writes, one budget."""

    engine: RuleEngine
    spec: SandboxSpec
    sandbox: Sandbox
    changes: ChangeLog = field(default_factory=ChangeLog)
    jobs: BackgroundJobs = field(default_factory=BackgroundJobs)
    # SessionStart hooks' CLAUDE_ENV_FILE variables: every Bash command, a sub-agent's too, gets them
    command_env: dict[str, str] = field(default_factory=dict)


def open_shared(
    workspace: Path,
    mode: Mode,
    rules: list[SourcedRule],
    sandbox_mode: SandboxMode = "off",
    network: bool = False,
    env_passthrough: tuple[str, ...] = (),
    read_paths: tuple[Path, ...] = (),
    on_write: Callable[[Path], None] | None = None,
) -> Shared:
    """A top-level session's shared parts, made before the session so that what is built on them
    (hooks, MCP servers, checkpoints, a verifier) is given to it whole. `on_write`: told before a
    file tool writes (rewind's checkpoints)."""
    engine = RuleEngine(workspace, mode, list(rules))
    spec, sandbox = workspace_sandbox(engine, sandbox_mode, network, env_passthrough, read_paths)
    tree = TreeWatch(workspace, standing=sandbox.standing)
    return Shared(engine, spec, sandbox, ChangeLog(tree=tree, on_write=on_write))


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
    budget: Budget = field(default_factory=Budget)
    context_window: int = 32_768
    context_source: str = "default"  # flag | settings | server ... | profile, shown in the banner
    id: str = field(default_factory=new_session_id)
    sandbox_mode: SandboxMode = "off"
    network: bool = False
    # From the user's settings only (sandbox.env_passthrough, sandbox.read_paths).
    env_passthrough: tuple[str, ...] = ()
    read_paths: tuple[Path, ...] = ()
    roles: dict[Role, Provider] = field(default_factory=dict)  # subagent / compaction; default: provider
    depth: int = 0
    max_depth: int = 1  # how deep sub-agents may nest: 1 means a sub-agent cannot delegate
    shared: Shared | None = None
    owns_jobs: bool = True  # the top-level session: its background jobs and shared sandbox close with it
    verifier: Verifier | None = None
    # Run the project's tests before an answer stands (agent/selfcheck.py); off where whoever runs
    # the agent runs them after it (--verify is the session's verifier; a checker, a team node's verify).
    self_check: bool = True
    # The model-adaptation layer (DESIGN §15): the profile's steering set and edit format.
    steering_set: str = "off"
    draws: int = 0  # fresh draws per user message, when the steering set has fresh-draws
    edit_format: str = "tools"
    hidden_tools: tuple[str, ...] = ()  # tools the profile does not offer (a small model's distractions)
    steering: Steering = field(init=False)
    _unoffered: frozenset[str] = field(init=False, default=frozenset())
    _tools_lock: threading.Lock = field(init=False, default_factory=threading.Lock, repr=False)
    # The self-check's command when the settings name one (verify.command: the user's, or a trusted
    # folder's); None: detected from the project's files. Its run may take `test_timeout` seconds.
    test_command: TestCommand | None = None
    test_timeout: float = TEST_TIMEOUT
    model_switch: Callable[[Provider, str], Provider] | None = None  # set by the runner
    mcp: McpHub | None = None  # MCP servers starting in the background (set by the runner)
    lsp: LspHub | None = None  # plugins' language servers, started on first use (set by the runner)
    hooks: HookRunner | None = None  # the settings' hooks (set by the runner; sub-agents share them)
    trace_path: Path | None = None  # the JSONL trace (DESIGN §7)
    transcript_path: Path | None = None  # the conversation in Claude Code's shape, for hooks (agent/transcript.py)
    # Rewind's checkpoints (DESIGN §17), the top-level session's only (set by the runner).
    checkpoints: Checkpoints | None = None
    skill_catalog: SkillCatalog | None = None  # default: discovered in the workspace at first use
    active_skills: ActiveSkills = field(init=False)  # the loaded skills' allowed-tools, this turn
    agents: Catalog | None = None  # agent definitions Delegate may name (set by the runner)
    instructions: str = ""  # an agent definition's body: in the first message, after the context
    never_ask: bool = False  # Claude Code's dontAsk: what would be asked is denied, nobody is asked
    instructions_bytes: int | None = None  # where the instructions are cut (None: agent/instructions.py CAP)
    env_limits: EnvLimits = field(default_factory=EnvLimits)  # Claude Code's limit variables, read at build
    # Claude Code's --system-prompt (replaces arnes's own; empty: arnes's) and --append-system-prompt.
    system_base: str = ""
    system_append: str = ""
    output_style: OutputStyle | None = None  # Claude Code's outputStyle: the top-level session's only
    structured: StructuredAnswer | None = None  # --json-schema: the run's answer, by StructuredOutput
    engine: RuleEngine = field(init=False)
    # The mode /mode plan (or the SDK's set_permission_mode) left: where an approved plan returns.
    mode_before_plan: Mode = field(init=False, default="default")
    sandbox: Sandbox = field(init=False)
    ctx: ToolContext = field(init=False)
    gate: PermissionGate = field(init=False)
    host: HostFiles = field(init=False)  # the workspace's files as arnes itself reads and writes them
    _noted: set[str] = field(init=False, default_factory=set)
    _own_boxes: list[Sandbox] = field(init=False, default_factory=list)  # closed with the session
    _built: bool = field(init=False, default=False, repr=False, compare=False)  # see __setattr__

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        if self.shared is None:
            self.shared = open_shared(
                self.workspace, self.mode, self.rules, self.sandbox_mode, self.network, self.env_passthrough,
                self.read_paths,
            )  # fmt: skip
        if self.owns_jobs:  # the top-level session: its shared parts close with it
            self._own_boxes.append(self.shared.sandbox)
        self.engine, self.sandbox = self.shared.engine, self.shared.sandbox
        self.host = HostFiles(self.workspace, self.engine)
        read_only_box = None
        if self.sandbox.name == "bubblewrap":
            read_only_box = choose_sandbox(
                "bubblewrap", dataclasses.replace(self.shared.spec, read_only_workspace=True)
            )
            self._own_boxes.append(read_only_box)
        self.ctx = ToolContext(
            self.workspace,
            read_only_sandbox=read_only_box,
            host_git=self.sandbox.name == "bubblewrap" and not self.shared.spec.read_only_workspace,
            changes=self.shared.changes,
            hidden=self.engine.hidden,
            listable=self.engine.listable,
            read_rules=self.engine.has_read_rules,
            rule_hides=self.engine.rule_hides,
            sandbox=self.sandbox,
            jobs=self.shared.jobs,
            command_env=self.shared.command_env,
            max_output_chars=self.output_cap,
            bash_default_ms=self.env_limits.bash_default_ms,
            bash_max_ms=self.env_limits.bash_max_ms,
            mcp_output_chars=self.env_limits.mcp_output_chars(self.context_window, self.output_cap),
            reads_hooked=self.hooks is not None and self.hooks.has("PreToolUse", "Read"),
        )
        if self.skill_catalog is None:
            self.skill_catalog = SkillCatalog(self.host)
        self.active_skills = ActiveSkills(self.workspace)
        self.ctx.skills = SkillLoader(self.skill_catalog, self.engine, self.active_skills, self.id)
        if self.depth == 0:
            self.ctx.leave_plan = self.leave_plan
        # A loaded skill's allowed-tools narrow whatever policy this session has (never widen it).
        base = self.policy or self.engine
        self.policy = Fenced(
            NeverAsk(base, "dontAsk mode: nothing is asked") if self.never_ask else base, self.active_skills
        )
        self.gate = PermissionGate(
            self.policy,
            self.approver,
            on_always=lambda rule: self.engine.add_rule("allow", rule, "session"),
            suggest=self.engine.suggest_rule,
        )
        # In a window of 8k or less a sub-agent would need its own fixed prompt in the same small
        # window, and a 1.5B model called Delegate (with an agent named "arnes") instead of working.
        small = self.context_window <= SMALL_WINDOW
        if (self.depth >= self.max_depth or small) and "Delegate" in self.tools.names():
            self.tools = ToolRegistry(t for t in self.tools if t.name != "Delegate")
        # Nor NotebookEdit: its schema would take the room (tests/test_budget.py), and a notebook
        # with its outputs seldom fits such a window; Edit still changes a notebook's JSON.
        if small and "NotebookEdit" in self.tools.names():
            self.tools = ToolRegistry(t for t in self.tools if t.name != "NotebookEdit")
        if self.structured is not None and self.depth == 0 and STRUCTURED not in self.tools.names():
            self.tools = ToolRegistry([*self.tools, StructuredOutput(self.structured)])
        if self.lsp is not None and "LSP" not in self.tools.names():
            from arnes.lsp.tool import LspTool

            self.tools = ToolRegistry([*self.tools, LspTool(self.lsp)])
        if set(self.hidden_tools) & set(self.tools.names()):
            self.tools = ToolRegistry(t for t in self.tools if t.name not in self.hidden_tools)
        # In an edit format the reply is how files change: the model is not offered two ways. The
        # tools stay in the registry: the format's own Writes and Edits run through them.
        self._unoffered = frozenset({"Write", "Edit"} if self.edit_format != "tools" else ())
        env = Env(
            self.ctx,
            self.edit_format,
            lambda: self.self_check,
            self.tests,
            self.task_files,
            self.test_timeout,
            self.draws,
        )
        self.steering = build_steering(self.steering_set, env)
        self._built = True

    def __setattr__(self, name: str, value: object) -> None:
        """A session is built once: what it is made of is given when it is made (runner.py
        `build_session`, `child`), never patched on afterwards. Only what a user may change while
        it runs (the model, the mode, the window a server reports, a command turn's fenced tools)
        is set later."""
        if name in _MADE_ONCE and self.__dict__.get("_built", False):
            raise AttributeError(
                f"Session.{name} is given when the session is built (runner.build_session, Session.child), "
                "not set afterwards"
            )
        object.__setattr__(self, name, value)

    @property
    def output_cap(self) -> int:
        """The most characters one tool result may take: a quarter of the window, at most 30k."""
        return max(2000, min(30_000, self.context_window))

    def tests(self, workspace: Path) -> str | None:
        """The command the self-check runs here: the settings' own, else the one the files suggest."""
        found = self.test_command or detect(workspace)
        return found.command if found else None

    def provider_for(self, role: Role) -> Provider:
        return self.roles.get(role, self.provider)

    def summarise(self, transcript: str) -> str:
        """Compaction's summary call: the compaction model, no tools."""
        response = self.provider_for("compaction").complete(SUMMARY_PROMPT, [Message.user(transcript)], [])
        return response.message.text

    def child(
        self,
        *,
        read_only: bool,
        parent_call: str,
        tool_names: list[str] | None = None,
        model: str | None = None,
        max_turns: int | None = None,
        mode: AgentMode | None = None,
        instructions: str = "",
        self_check: bool = True,
    ) -> Session:
        """A sub-agent's session: clean context, fewer tools, permissions only ever narrower.

        `mode` (an agent definition's) is held against the parent's, the stricter winning: plan
        makes the child read-only, dontAsk denies what would be asked. `model` "inherit" is the
        parent's own model; None is what any sub-agent gets (the subagent role, else the parent's).
        `self_check` False turns the child's self-check off (its caller runs the tests itself).
        """
        assert self.shared is not None and self.policy is not None
        read_only = read_only or mode == "plan"
        tools = [
            t for t in self.tools if not (read_only and t.name in WRITE_TOOLS) and t.name not in (STRUCTURED, EXIT_PLAN)
        ]
        if tool_names is not None:
            tools = [t for t in tools if t.name in tool_names]
        names = {t.name for t in tools}
        narrowed: Mode = stricter(self.mode, "default" if mode == "dontAsk" else mode)
        policy: Policy = StricterMode(self.policy, narrowed) if mode is not None else self.policy
        if mode == "dontAsk":
            policy = NeverAsk(policy)
        policy = AllowTools(ReadOnly(policy) if read_only else policy, names)
        shared = self.shared
        if read_only:
            spec = dataclasses.replace(shared.spec, read_only_workspace=True)
            shared = dataclasses.replace(shared, spec=spec, sandbox=choose_sandbox(self._sandbox_mode_in_use(), spec))
        bus = EventBus([_forward(self.bus, parent_call)])
        provider = self.provider if model == "inherit" else self.provider_for("subagent")
        if model and model != "inherit":
            provider = self.with_model(provider, model)
        child = Session(
            workspace=self.workspace,
            provider=provider,
            mode=narrowed,
            instructions=instructions,
            instructions_bytes=self.instructions_bytes,
            env_limits=self.env_limits,
            approver=self.approver,
            policy=policy,
            tools=ToolRegistry(tools),
            bus=bus,
            limits=Limits(max_turns=max_turns or self.limits.subagent_turns),
            budget=self.budget,
            context_window=self.context_window,
            id=f"{self.id}/{parent_call}",
            roles=self.roles,
            depth=self.depth + 1,
            max_depth=self.max_depth,
            shared=shared,
            owns_jobs=False,
            model_switch=self.model_switch,
            hooks=self.hooks,
            trace_path=self.trace_path,
            transcript_path=self.transcript_path,
            skill_catalog=self.skill_catalog,
            self_check=self.self_check and self_check,
            steering_set=self.steering_set,
            draws=self.draws,
            edit_format=self.edit_format if not read_only else "tools",
            hidden_tools=self.hidden_tools,
            test_command=self.test_command,
            test_timeout=self.test_timeout,
        )
        if shared is not self.shared:
            child._own_boxes.append(shared.sandbox)  # the read-only sandbox made for it
        return child

    def with_model(self, provider: Provider, model: str) -> Provider:
        """The same provider with another model, where the runner knows how to build one."""
        return self.model_switch(provider, model) if self.model_switch else provider

    def _sandbox_mode_in_use(self) -> SandboxMode:
        name = self.sandbox.name
        return "bubblewrap" if name == "bubblewrap" else "landlock" if name == "landlock" else "off"

    # -- what the loop asks of its run context (agent/run_context.py) -------------------------
    def begin(self) -> None:
        self.bus.emit(
            SessionStart(
                self.id, str(self.workspace), self.provider.name, self.provider.model, self.mode, self.sandbox.name,
                self.sandbox.describe(), self.context_window, self.context_source,
                self.output_style.name if self.output_style is not None else "", self.edit_format,
            )
        )  # fmt: skip
        if self.mcp is not None:  # after the banner: the servers connect while the user reads it
            self.mcp.start()

    def end(self) -> list[str]:
        if not self.owns_jobs:
            self.close_sandboxes()
            return []
        self.close()
        # What closing the sandbox found (a hook a command planted in a repository it made, renamed aside).
        return [note if note.startswith("warning: ") else f"warning: {note}" for note in self.sandbox.notes()]

    def new_turn(self) -> None:
        self.ctx.changes.new_turn()
        self.active_skills.clear()  # a skill's allowed-tools last until the user's next message

    def set_mode(self, mode: Mode) -> None:
        """/mode, the SDK's set_permission_mode, an approved plan: the session's mode and its rule
        engine's, and, entering plan mode, the mode to go back to."""
        if mode == "plan" and self.mode != "plan":
            self.mode_before_plan = self.mode
        self.mode = self.engine.mode = mode

    def leave_plan(self) -> Mode | None:
        """ExitPlanMode approved: back to the mode before plan mode; None when not in plan mode."""
        if self.mode != "plan":
            return None
        back = self.mode_before_plan
        self.set_mode(back)
        self.bus.emit(Notice("info", f"plan approved: plan mode ended, the session is in {back} mode"))
        return back

    def can_write(self, offered: set[str]) -> bool:
        return self.mode != "plan" and (bool(offered & {"Write", "Edit"}) or self.edit_format != "tools")

    def quietly_allowed(self, request: ToolRequest) -> bool:
        return self.policy is not None and self.policy.decide(request).kind == "allow"

    def scoped_rules(self) -> list[Rule]:
        return scoped_rules(self.host)

    def folder_instructions(self, folder: str) -> str:
        return folder_instructions(self.host, folder, cap=cap_for(self.context_window, self.instructions_bytes))

    def delegate(self, agent: str | None, *, read_only: bool, parent_call: str) -> Session:
        from arnes.agent.delegation import delegate_session

        return delegate_session(self, agent, read_only=read_only, parent_call=parent_call)

    def close(self) -> None:
        """End the session's background work: every background shell is killed."""
        self.ctx.jobs.close()
        if self.mcp is not None:
            self.mcp.close()
        if self.lsp is not None:
            self.lsp.close()
        self.close_sandboxes()

    def close_sandboxes(self) -> None:
        """Stop the sandboxes this session made (the command servers kept in them): a sub-agent's
        session calls this alone, its parent owns the rest."""
        for box in self._own_boxes:
            box.close()

    def tool_specs(self) -> list[ToolSpec]:
        """The schemas sent with every request; brief ones when the window is small. An MCP server
        the SDK turned off or restarted since (headless/control_mcp.py) counts from the next one."""
        with self._tools_lock:  # the SDK's get_context_usage asks from the stdin reader's thread
            if self.mcp is not None:
                self._add_mcp_tools(self.mcp, first="mcp" not in self._noted)
            specs = self.tools.specs(brief=self.context_window <= SMALL_WINDOW)
        off = self._not_now()
        return [spec for spec in specs if spec.name not in self._unoffered and spec.name not in off]

    def offered_names(self) -> list[str]:
        """The tools the model is offered now, by name (an edit format's Write and Edit are not)."""
        off = self._not_now()
        return [name for name in self.tools.names() if name not in self._unoffered and name not in off]

    def _not_now(self) -> set[str]:
        """Tools the session has but does not offer at this moment: ExitPlanMode outside plan mode,
        MCP tools whose server is off."""
        return self._mcp_off() | ({EXIT_PLAN} if self.mode != "plan" else set())

    def _add_mcp_tools(self, hub: McpHub, first: bool) -> None:
        """The first time, before the first request: wait for the servers, offer their tools, name
        failures. Later: the tools of a server started again, without waiting or saying anything."""
        from arnes.mcp.tools import McpTool, tool_name

        if first:
            self._noted.add("mcp")
            hub.wait()
        for name, st in hub.servers.items():
            if first and st.state.startswith("failed"):
                said = f"warning: MCP server {name} {st.state}; its tools are not offered"
                self.bus.emit(Notice("warning", said + st.shown_tail()))
            for listed in st.tools if st.state == "started" else []:
                if self.tools.get(tool_name(name, listed.name)) is None:
                    self.tools.add(McpTool(name, listed.name, listed.description, listed.schema, hub))
        if hub.with_resources() and self.tools.get("ReadMcpResourceTool") is None:
            from arnes.mcp.resource_tools import ListMcpResources, ReadMcpResource

            self.tools.add(ListMcpResources(hub))
            self.tools.add(ReadMcpResource(hub))

    def _mcp_off(self) -> set[str]:
        """The MCP tools not offered now: their server was turned off, failed, or no longer lists them."""
        from arnes.mcp.tools import McpTool

        hub = self.mcp
        if hub is None:
            return set()
        return {t.name for t in self.tools if isinstance(t, McpTool) and not hub.offers(t.server, t.tool)}

    def system_prompt(self) -> str:
        """Fixed across sessions and workspaces, so a server can cache it (see agent/prompt.py)."""
        writes = "Write" in self.tools.names() or self.edit_format != "tools"
        style = self.output_style
        own = system_prompt(
            read_only=not writes, in_reply=self.edit_format != "tools", coding=style is None or style.keep_coding
        )
        parts = [
            self.system_base or own,
            self.steering.system_note(),
            style.section() if style is not None else "",
            self.structured.note() if self.structured is not None and self.depth == 0 else "",
            self.system_append,
        ]
        return "\n\n".join(part for part in parts if part)

    def context(self) -> str:
        """The per-run part: the workspace and its AGENTS.md, for the head of the first message."""
        notes: list[str] = []
        names = [n for n in self.tools.names() if n not in self._unoffered and n not in self._not_now()]
        skills = ""
        if "Skill" in names and self.skill_catalog is not None:
            skills = self.skill_catalog.summary(bundled=self.context_window > SMALL_WINDOW)
            if self.depth == 0:  # said once, not again by every sub-agent
                refused = one_warning("skill files", [f"skill refused: {r.why}" for r in self.skill_catalog.refused()])
                notes += [refused] if refused else []
        agents = self.agents.summary() if self.agents and "Delegate" in names else ""
        text = session_context(
            self.host,
            names,
            notes,
            skills=skills,
            agents=agents,
            cap=cap_for(self.context_window, self.instructions_bytes),
        )
        if self.instructions:  # here, not in the system prompt: a server's cached prefix still fits
            text += f"\n\nYour instructions as this agent (from its definition):\n{self.instructions}"
        for note in notes:
            if note not in self._noted:  # once per session
                self._noted.add(note)
                self.bus.emit(Notice("warning", f"warning: {note}"))
        return text

    def task_files(self, task: str, spare_kept: bool = False) -> str:
        """The content of the files `task` names and the session has not seen, marked as read
        (`spare_kept`: see `named_files`).

        None with a PreToolUse hook: a hook may keep files from Read (the user's own check of
        what the model may see), and this shows files without a Read call it could judge."""
        if self.hooks is not None and self.hooks.has("PreToolUse"):
            return ""
        names = visible_files(self.host.root, self.host.rules)
        shown = named_files(
            self.host,
            task,
            names,
            self.context_window,
            set(self.ctx.files.seen()),
            plain=self.edit_format != "tools",
            spare_kept=spare_kept,
        )
        for real, data, st in shown.files:
            self.ctx.files.record_read(real, data, st)
        return shown.text


# Set when a session is built and never after (Session.__setattr__). Left out on purpose: the
# provider (/model, set_model), the mode (/mode, set_permission_mode), the context window (a
# server that reports a smaller one), and tools, policy and gate (a custom command's turn fences
# them and puts them back).
_MADE_ONCE = frozenset(
    {
        "workspace", "approver", "rules", "bus", "limits", "budget", "id", "sandbox_mode", "network",
        "env_passthrough", "read_paths", "roles", "depth", "max_depth", "shared", "owns_jobs", "verifier",
        "self_check", "steering_set", "draws", "edit_format", "hidden_tools", "steering", "test_command",
        "test_timeout", "model_switch", "mcp", "lsp", "hooks", "trace_path", "transcript_path", "checkpoints",
        "skill_catalog", "active_skills", "agents", "instructions", "never_ask", "instructions_bytes", "env_limits",
        "system_base",
        "system_append",
        "structured", "output_style", "engine", "sandbox", "ctx", "host",
    }
)  # fmt: skip


def _forward(parent: EventBus, call_id: str) -> Callable[[Event], None]:
    return lambda event: parent.emit(Nested(call_id, event))
