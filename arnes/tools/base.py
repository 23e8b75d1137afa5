"""The Tool seam, the context a tool runs in, and the registry the loop reads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from arnes.envlimits import BASH_DEFAULT_MS, BASH_MAX_MS
from arnes.errors import ToolError as ToolError  # the seam's error, for every tool
from arnes.errors import validation_summary
from arnes.host.paths import absolute, is_inside, real_path, resolve_real
from arnes.messages import ToolSpec
from arnes.permissions.types import Target
from arnes.sandbox.base import NoSandbox, Sandbox
from arnes.tools.filestate import ChangeLog, FileStateCache
from arnes.tools.processes import BackgroundJobs


class SkillHost(Protocol):
    """What the Skill tool needs from its session (extensions/skills.py `SkillLoader`)."""

    def load(self, name: str, *, by_user: bool = False, arguments: str | None = None) -> str:
        """The skill's body and files; ToolError naming the skills there are for an unknown name,
        or for one only the user may run (`by_user`: run as `/name`, whose placeholders the command
        expansion fills). The model's call fills them with its `arguments` (None: none given)."""
        ...


class ToolArgs(BaseModel):
    """Base for tool arguments: unknown keys are an error the model gets to see."""

    model_config = ConfigDict(extra="forbid")


A = TypeVar("A", bound=ToolArgs)
A_contra = TypeVar("A_contra", bound=ToolArgs, contravariant=True)


@dataclass
class ToolContext:
    """What a tool may use: the workspace, the read snapshots and the log of writes."""

    workspace: Path
    files: FileStateCache = field(default_factory=FileStateCache)
    changes: ChangeLog = field(default_factory=ChangeLog)
    max_output_chars: int = 30_000
    bash_default_ms: int = BASH_DEFAULT_MS  # Bash's time limit when the model names none (envlimits.py)
    bash_max_ms: int = BASH_MAX_MS  # and the most it may name
    mcp_output_chars: int = 30_000  # an MCP tool's result at most (MAX_MCP_OUTPUT_TOKENS, envlimits.py)
    # Set by the session from the permission policy: searches leave out what a rule hides.
    hidden: Callable[[str, Path], bool] = field(default=lambda tool, path: False)
    # A search hit that may be shown: no link on its way now, no rule hiding it (see RuleEngine).
    listable: Callable[[str, str], bool] = field(default=lambda tool, path: real_path(path) == path)
    # Whether any rule hides files from reading, and the cheap rule-only test per hit: a search
    # counts every hit but judges links only on those it shows (see tools/search.py).
    read_rules: Callable[[], bool] = field(default=lambda: False)
    rule_hides: Callable[[str, str], bool] = field(default=lambda tool, path: False)
    sandbox: Sandbox = field(default_factory=NoSandbox)
    jobs: BackgroundJobs = field(default_factory=BackgroundJobs)
    # Set by the agent loop: runs a sub-agent on (task, read_only, agent definition's name or
    # None) and returns its conclusion.
    subagent: Callable[[str, bool, str | None], str] | None = None
    # Set by the loop for the write it is running: path as written -> the real path judged.
    pinned: dict[Path, Path] = field(default_factory=dict)
    # A command allowed only because it reads runs in this sandbox, which cannot write the
    # workspace: a command the classifier misjudged still cannot change anything.
    read_only_sandbox: Sandbox | None = None
    confined: bool = False
    # Set by the session where bubblewrap holds .git read-only for a writable workspace: git's
    # state-writing commands (permissions/gitroute.py) run on the host instead (tools/hostgit.py).
    host_git: bool = False
    skills: SkillHost | None = None  # set by the session: the Skill tool's catalog and loader
    # A PreToolUse hook may judge a Read (the user's own check of what the model may see): a
    # write's refusal then does not show the file a Read would have had to pass.
    reads_hooked: bool = False
    # The session's todo list as the last TodoWrite sent it (tools/todo.py); a sub-agent has its own.
    todos: list[dict[str, Any]] = field(default_factory=list)
    # Set by the top-level session: ExitPlanMode's approved plan ends plan mode (the mode it is in
    # now, or None when the session is not in plan mode); a sub-agent has none.
    leave_plan: Callable[[], str | None] | None = None
    # Set by SessionStart hooks through CLAUDE_ENV_FILE (extensions/hook_env.py, filtered there):
    # variables every later Bash command gets, on top of the sandbox's environment.
    command_env: dict[str, str] = field(default_factory=dict)

    def real_of(self, path: Path) -> Path | None:
        return self.pinned.get(path)

    def readable(self, path: Path) -> Path | None:
        """The real path of `path` when a Read would show it unasked: inside the workspace by its
        real path, hidden by no Read rule as written or as real; else None. For what reads on the
        model's or the user's behalf before the gate (a piece's view, an `@` mention)."""
        real = resolve_real(path)
        if not is_inside(resolve_real(self.workspace), real) or self.hidden("Read", path) or self.hidden("Read", real):
            return None
        return real

    def path(self, file_path: str) -> Path:
        if "\0" in file_path:
            raise ToolError("The path contains a NUL byte; no file has such a name. Give the path again.")
        return absolute(self.workspace, file_path)

    def display(self, path: Path) -> str:
        """Workspace-relative when inside, absolute otherwise: short for the model and the user."""
        try:
            return str(path.relative_to(self.workspace)) or "."
        except ValueError:
            return str(path)


class Tool(Protocol[A_contra]):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def args_model(self) -> type[ToolArgs]: ...
    @property
    def read_only(self) -> bool: ...

    def targets(self, args: A_contra, ctx: ToolContext) -> list[Target]:
        """The paths this call would touch, for the permission seam."""
        ...

    def preview(self, args: A_contra, ctx: ToolContext) -> str | None:
        """What a write would change (a diff), shown when the user is asked."""
        ...

    def run(self, args: A_contra, ctx: ToolContext) -> str:
        """Do the work; raise ToolError with a helpful message on failure."""
        ...

    def command(self, args: A_contra) -> str | None:
        """The shell command this call runs, for the command rules; None for other tools."""
        ...


class NoPaths(Generic[A]):
    """A tool that names no path, shows no preview and runs no command (the gate's defaults)."""

    def targets(self, args: A, ctx: ToolContext) -> list[Target]:
        return []

    def preview(self, args: A, ctx: ToolContext) -> str | None:
        return None

    def command(self, args: A) -> str | None:
        return None


class BaseTool(NoPaths[A]):
    """Defaults for tools: no preview; subclasses set the class attributes and `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    read_only: ClassVar[bool] = True


ESSENTIAL: dict[str, Any] = {"essential": True}  # json_schema_extra: keep this field's description when brief


def spec_of(tool: Tool[Any], *, brief: bool = False) -> ToolSpec:
    """The tool's JSON schema, made compact: every token of it is paid on every request.

    `brief` (small context windows) also drops the fields' descriptions, except those marked
    ESSENTIAL (a unit, a mode whose meaning the name does not give): the tool's own description
    says what a small model needs, and the saved tokens are left for the work.
    """
    schema = _inlined(tool.args_model.model_json_schema())
    schema.pop("title", None)
    schema.pop("additionalProperties", None)  # still enforced: unknown keys fail validation
    properties = schema.get("properties", {})
    for name, prop in list(properties.items()) if isinstance(properties, dict) else []:
        properties[name] = _compact(prop, brief)
    return ToolSpec(tool.name, tool.description, schema)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """A nested model's schema (TodoWrite's items) written in place of its `$ref`, without the
    titles and `additionalProperties` pydantic gives it: the same meaning, a third of the tokens."""
    defs = schema.pop("$defs", None)
    if not isinstance(defs, dict):
        return schema

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return inline(defs[ref.removeprefix("#/$defs/")])
        return {k: inline(v) for k, v in node.items() if k not in ("title", "additionalProperties")}

    return {k: inline(v) if k == "properties" else v for k, v in schema.items()}


def _compact(prop: Any, brief: bool = False) -> Any:
    """`anyOf: [X, null]` with `default: null` says no more than X in an optional field. A
    property schema that is not an object (`true`, `false`: valid JSON Schema) stays as it is."""
    if not isinstance(prop, dict):
        return prop
    essential = prop.get("essential", False)
    prop = {k: v for k, v in prop.items() if k not in ("title", "essential")}
    if brief and not essential:
        prop.pop("description", None)
    options = prop.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1:
            prop.pop("anyOf")
            prop = {**kept[0], **prop}
    if prop.get("default", 0) is None:
        prop.pop("default")
    return prop


class ToolRegistry:
    """The tools one session offers, by name, in a stable order."""

    def __init__(self, tools: Iterable[Tool[Any]] = ()):
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool[Any]) -> None:
        self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(list(self._tools.values()))

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self, *, brief: bool = False) -> list[ToolSpec]:
        return [spec_of(t, brief=brief) for t in self._tools.values()]

    def parse(self, name: str, raw: dict[str, Any]) -> tuple[Tool[Any], ToolArgs]:
        """Find the tool and validate its arguments, or raise ToolError for the model."""
        tool, args, _ = self.parse_call(name, raw)
        return tool, args

    def parse_call(self, name: str, raw: dict[str, Any]) -> tuple[Tool[Any], ToolArgs, list[str]]:
        """parse, and the unknown keys that were dropped to make the call valid (the model is told).

        Small models hand one tool another's keys (Glob given Grep's `output_mode`, `-i`, `-n`);
        refusing the whole call for them cost the 1.5B model its run. When the call is valid
        without them, it runs without them; any other problem is still an error.
        """
        tool = self._tools.get(name)
        available = f"Available tools: {', '.join(self._tools)}."
        if tool is None and (name or "__invalid_json__" not in raw):
            raise ToolError(f"Unknown tool {name!r}. {available}{file_named_call(name, raw, self._tools)}")
        if "__invalid_json__" in raw:  # a call the provider could not read (see llm/recovery.py)
            why = raw.get("__reason__") or "its arguments are not valid JSON"
            raise ToolError(
                f"Your tool call could not be read: {why}: {str(raw['__invalid_json__'])[:200]!r}. "
                f'Call it again with valid JSON: {{"name": "{name or "TOOL"}", "arguments": {{...}}}}, '
                'strings in double quotes, with newlines and quotes inside them written as \\n and \\".'
                + ("" if tool else f" {available}")
            )
        assert tool is not None
        try:
            return tool, tool.args_model.model_validate(raw), []
        except ValidationError as exc:
            extra = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden" and len(e["loc"]) == 1]
            if extra and len(extra) == len(exc.errors()):
                try:
                    kept = {k: v for k, v in raw.items() if k not in extra}
                    return tool, tool.args_model.model_validate(kept), extra
                except ValidationError:
                    pass
            brief = validation_summary(exc, "arguments")
            raise ToolError(f"Invalid arguments for {name}: {brief}. Fix them and call {name} again.") from exc


_FILE_NAME = re.compile(r"[\w./-]*\w\.[A-Za-z0-9]{1,8}")


def file_named_call(name: str, raw: dict[str, Any], tools: Iterable[str]) -> str:
    """For a "tool" named like a file (seen: `{"name": "config.json", "arguments": {"name":
    "shop", ...}}`), what to call instead: with JSON arguments for a .json name, the Write itself."""
    if "Write" not in tools or not _FILE_NAME.fullmatch(name) or "__invalid_json__" in raw:
        return ""
    if name.lower().endswith(".json") and raw:
        write = {"name": "Write", "arguments": {"file_path": name, "content": json.dumps(raw, indent=2) + "\n"}}
        return (
            f" {name!r} is a file name, not a tool. To write these arguments to {name} as its JSON content, "
            f"send exactly this tool call:\n{json.dumps(write)}"
        )
    return f" {name!r} is a file name, not a tool: to create or replace that file, call Write with file_path {name!r}."


def dropped_note(name: str, keys: list[str]) -> str:
    """The line added to a result whose call had keys its tool does not take."""
    which = "that argument was" if len(keys) == 1 else "those arguments were"
    return f"\n[arnes: {name} takes no {', '.join(keys)}; {which} ignored]"
