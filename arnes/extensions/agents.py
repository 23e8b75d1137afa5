"""Agent definitions (DESIGN §13): `.arnes/agents/NAME.md`, `.claude/agents/NAME.md`, the user's
`~/.config/arnes/agents/NAME.md`, in Claude Code's shape:

    ---
    name: reviewer
    description: Reviews a change and reports problems
    tools: Read, Grep, Glob
    model: inherit
    permissionMode: plan
    ---
    You review code. Report file, line and reason for each problem.

A definition can only narrow the agent that delegates to it (agent/delegation.py applies it):
its tools are cut to the parent's, its mode is at most as wide as the parent's. Choosing a
model is a grant (DESIGN §10, like a team node's `model`): a project's definition names one
only in a trusted folder; untrusted, the model is ignored with a warning. `permissionMode`
only narrows, so it applies untrusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from arnes.errors import ConfigError
from arnes.extensions.locations import Found, Refusal, discover, linked, shadowed
from arnes.host.files import HostFiles

# Claude Code's names and arnes's own; `dontAsk` denies what would be asked.
AgentMode = Literal["plan", "dontAsk", "default", "acceptEdits", "bypass"]
MODE_NAMES: dict[str, AgentMode] = {
    "plan": "plan",
    "dontAsk": "dontAsk",
    "default": "default",
    "acceptEdits": "acceptEdits",
    "bypass": "bypass",
    "bypassPermissions": "bypass",
}
# Claude Code's tools that arnes has under another name, or does not need to name at all.
TOOL_ALIASES = {"Task": "Delegate", "Agent": "Delegate", "MultiEdit": "Edit"}
_NAME = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*:)?[A-Za-z0-9][A-Za-z0-9_.-]*$")  # `plugin:` for a plugin's
DESCRIPTION_CAP = 200  # characters of a description in the session's context: a few tokens each


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    body: str  # the sub-agent's instructions, put at the head of its first message
    tools: tuple[str, ...] | None  # None: the parent's tools
    disallowed: tuple[str, ...] = ()
    model: str | None = None  # None or "inherit": no model of its own
    mode: AgentMode | None = None
    origin: str = "project"  # project | user
    path: str = ""
    notes: tuple[str, ...] = ()  # what was ignored, for the warning and `arnes doctor`

    def allows(self, tool: str) -> bool:
        """Whether the definition lets the sub-agent have `tool` (the parent must have it too)."""
        if any(_covers(entry, tool) for entry in self.disallowed):
            return False
        return self.tools is None or any(_covers(entry, tool) for entry in self.tools)


def _covers(entry: str, tool: str) -> bool:
    """`Read` names Read; `mcp__github` names every tool of that server, as in permission rules."""
    return entry == tool or (entry.startswith("mcp__") and entry.count("__") == 1 and tool.startswith(entry + "__"))


@dataclass
class Catalog:
    """The definitions a session can delegate to, and what was refused or ignored on the way."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def add_given(self, given: dict[str, AgentDefinition]) -> None:
        """The run's own definitions (given_agents): each takes the place of a file's of its name."""
        self.agents.update(given)

    def summary(self) -> str:
        """Names and descriptions, one per line: for the session's context and an unknown name."""
        return "\n".join(f"- {a.name}: {a.description or '(no description)'}" for a in self.agents.values())

    def unknown(self, name: str) -> str:
        """What the model is told when it names no definition that exists."""
        if not self.agents:
            return (
                f"There is no agent definition named {name!r}: this workspace has none (.arnes/agents/, "
                ".claude/agents/). Call Delegate again without `agent`."
            )
        return (
            f"There is no agent definition named {name!r}. The agents you can name:\n{self.summary()}\n"
            "Call Delegate again with one of these names, or without `agent`."
        )


GIVEN_KEYS = ("description", "prompt", "tools", "disallowedTools", "model", "permissionMode")


def given_agents(raw: object, where: str) -> tuple[dict[str, AgentDefinition], list[str]]:
    """Definitions given with the run: Claude Code's `--agents '{"NAME": {...}}'` and the Agent
    SDKs' `agents` option. The caller's own (like a flag), so a `model` holds untrusted; they take
    the place of a file's definition of the same name, as in Claude Code. What cannot be used is
    named in the warnings and the rest still load."""
    if not isinstance(raw, dict):
        return {}, [f"{where}: agent definitions are an object of NAME: {{description, prompt, ...}}; ignored"]
    found: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for name, spec in raw.items():
        try:
            found[name] = definition = _given(str(name), spec, where)
        except ConfigError as exc:
            warnings.append(f"{where}: agent {name!r} left out: {exc}")
            continue
        warnings += [f"{where}: agent {name!r}: {note}" for note in definition.notes]
    return found, warnings


def _given(name: str, spec: object, where: str) -> AgentDefinition:
    if not _NAME.match(name) or ":" in name:
        raise ConfigError("a name is letters, digits, '-', '_' or '.'")
    if not isinstance(spec, dict) or not isinstance(spec.get("prompt"), str) or not spec["prompt"].strip():
        raise ConfigError('it has no "prompt" (its instructions)')
    mode = spec.get("permissionMode")
    if mode is not None and mode not in MODE_NAMES:
        raise ConfigError(f"permissionMode {mode!r} is not one of {', '.join(MODE_NAMES)}")
    lists = {key: spec.get(key) for key in ("tools", "disallowedTools")}
    for value in lists.values():
        if value is not None and not (isinstance(value, list) and all(isinstance(t, str) for t in value)):
            raise ConfigError("tools and disallowedTools are lists of tool names")
    notes = [f"{key!r} is not used here" for key in spec if key not in GIVEN_KEYS]
    model = spec.get("model")
    return AgentDefinition(
        name=name,
        description=_description(str(spec.get("description") or "")),
        body=spec["prompt"].strip(),
        tools=_tools(lists["tools"], where, notes),
        disallowed=_tools(lists["disallowedTools"], where, notes, narrowing=False) or (),
        model=model if isinstance(model, str) and model and model != "inherit" else None,
        mode=MODE_NAMES[mode] if mode is not None else None,
        origin="user",
        path=where,
        notes=tuple(notes),
    )


def _description(text: str) -> str:
    """One line, at most DESCRIPTION_CAP characters: it sits in the session's context."""
    flat = " ".join(text.split())
    return flat[: DESCRIPTION_CAP - 3] + "..." if len(flat) > DESCRIPTION_CAP else flat


def load_catalog(files: HostFiles, env: dict[str, str] | None = None, *, trusted: bool) -> Catalog:
    """Every definition found; a bad file is refused (named, with why), the others still load.
    The user's own definition wins its name over a project's (locations.py: it only narrows)."""
    found, refused = discover("agents", files, env)
    catalog = Catalog(refused=[*refused, *linked("agents", files)])
    for item in found:
        try:
            definition = _definition(item, trusted)
        except ConfigError as exc:
            catalog.refused.append(Refusal(item.document.path, str(exc)))
            continue
        if definition.name in catalog.agents:  # the final name decides; the first file in order wins it
            first = catalog.agents[definition.name].path
            catalog.refused.append(shadowed(item.document.path, definition.name, first))
            continue
        catalog.agents[definition.name] = definition
        catalog.warnings += [f"{definition.path}: {note}" for note in definition.notes]
    catalog.warnings += [r.why for r in catalog.refused]
    return catalog


def _definition(item: Found, trusted: bool) -> AgentDefinition:
    doc, path = item.document, item.document.path
    name = item.final(doc.text("name"))
    if ":" in name and not item.namespace:
        raise ConfigError(
            f"{path}: name {name!r} holds ':', which only a plugin's agents have (plugin:agent); rename it"
        )
    if not _NAME.match(name):
        raise ConfigError(f"{path}: name {name!r} must be letters, digits, '-', '_' or '.'; rename it")
    notes: list[str] = []
    raw_mode = doc.text("permissionMode")
    mode = None
    if raw_mode is not None:
        if raw_mode not in MODE_NAMES:
            choices = ", ".join(MODE_NAMES)
            raise ConfigError(f"{path}: permissionMode {raw_mode!r} is not one of {choices}; fix or remove it")
        mode = MODE_NAMES[raw_mode]
    model = doc.name("model") or None
    if model and model != "inherit" and item.origin == "project" and not trusted:
        notes.append(
            f"model {model!r} ignored: a project's definition chooses a model only in a folder you trust "
            "(`arnes trust`, or --trust for one run); the sub-agent uses the parent's"
        )
        model = None
    if "hooks" in doc.meta:  # Claude Code runs these for this agent's calls only; arnes does not (yet)
        notes.append(
            "hooks not run: arnes runs hooks from settings files only, for every agent; to guard this "
            "agent's calls, put the hook in your settings (a PreToolUse matcher) or narrow its tools"
        )
    tools = _tools(doc.names("tools"), path, notes)
    disallowed = _tools(doc.names("disallowedTools"), path, notes, narrowing=False) or ()
    return AgentDefinition(
        name=name,
        description=_description(doc.text("description") or ""),
        body=doc.body.strip(),
        tools=tools,
        disallowed=tuple(disallowed),
        model=model,
        mode=mode,
        origin=item.origin,
        path=str(path),
        notes=tuple(notes),
    )


def _tools(names: list[str] | None, path: object, notes: list[str], narrowing: bool = True) -> tuple[str, ...] | None:
    """Tool names as arnes calls them. An entry with a specifier (`Bash(git diff:*)`) cannot be
    held by a tool list: it is left out, so the tool is not granted at all (when in doubt, no)."""
    if names is None:
        return None
    out: list[str] = []
    for raw in names:
        if "(" in raw:
            if narrowing:
                notes.append(f"tools entry {raw!r} left out: a tool list names whole tools; use a permission rule")
            else:
                out.append(raw.split("(", 1)[0])  # a disallowed tool with a specifier: the whole tool goes
            continue
        out.append(TOOL_ALIASES.get(raw, raw))
    return tuple(dict.fromkeys(out))
