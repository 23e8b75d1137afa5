"""One custom command as one prompt: its text, its narrowed tools and its model, then the session
as it was. The interactive prompt wraps a turn in `applied`; a one-shot run applies it for the
whole run (`arnes -p "/review src/a.py"` is one prompt)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arnes.errors import ConfigError
from arnes.extensions.command_shell import run_commands
from arnes.extensions.commands import (
    MCP_PROMPT_PREFIX,
    Catalog,
    Command,
    expand,
    load_catalog,
    split_invocation,
    unknown_message,
)
from arnes.extensions.placeholders import words
from arnes.llm.claude_ids import model_for
from arnes.messages import ToolSpec
from arnes.permissions.scope import Fence, Fenced
from arnes.tools.base import ToolError, ToolRegistry

if TYPE_CHECKING:
    from arnes.config import EffectiveConfig
    from arnes.session import Session


class Offered(ToolRegistry):
    """The session's tools, of which the model is shown only those the fence offers. A call to
    another still parses, so the fence (not "unknown tool") tells the model why it did not run."""

    def __init__(self, tools: ToolRegistry, fence: Fence):
        super().__init__(tools)
        self._fence = fence

    def specs(self, *, brief: bool = False) -> list[ToolSpec]:
        return [spec for spec in super().specs(brief=brief) if self._fence.offers(spec.name)]


@dataclass(frozen=True)
class Prepared:
    command: Command
    prompt: str
    model: str | None  # the model this prompt runs with, when the command may choose one
    notes: tuple[str, ...]  # warnings for the user: what of the front matter does not apply
    arguments: str = ""  # as typed after `/NAME`


def prepare(command: Command, arguments: str, trusted: bool, provider: str) -> Prepared:
    """The prompt for `/NAME arguments`; a project's `model` waits for trust (a grant, DESIGN §10),
    and a Claude model is left out where `provider` serves none (llm/claude_ids.py)."""
    notes = [f"{command.path}: {note}" for note in command.notes]
    model = command.model
    if model and command.origin == "project" and not trusted:
        notes.append(
            f"{command.path}: model '{model}' ignored until you trust this folder (a project's model is a grant; "
            "`arnes trust`, or --trust for one run)"
        )
        model = None
    model, note = model_for(model, provider)
    if note is not None:
        notes.append(f"{command.path}: {note}")
    return Prepared(command, expand(command, arguments), model, tuple(notes), arguments)


def apply(session: Session, prepared: Prepared, cfg: EffectiveConfig) -> str:
    """Narrow the session's tools to the command's `allowed-tools`, switch its model, and return
    the prompt to send, its `` !`cmd` ``s run (extensions/command_shell.py).

    The fence wraps the session's policy, so the rules and the mode still decide inside it, and
    sub-agents started during the prompt inherit it (Session.child narrows `policy`)."""
    command = prepared.command
    # Before the fence, and on the command's own text: a `!`cmd`` in its arguments (an issue
    # title in CI) is text, never a command; inside a line the arguments are quoted data
    # (shell_args.py). The outputs go in after the rest of the arguments, so they stay as printed.
    ran = run_commands(session, command, command.body, prepared.arguments)
    if ran.said:
        body = dataclasses.replace(command, body=ran.prompt)
        prompt = ran.fill(expand(body, prepared.arguments, placed=ran.placed))
    else:
        prompt = prepared.prompt
    cfg.warnings += [line for level, line in ran.said if level == "warning" and line not in cfg.warnings]
    if command.allowed is not None:
        assert session.policy is not None
        session.tool_specs()  # the MCP servers' tools join the registry first, so the fence sees them
        fence = Fence(command.allowed, session.workspace, f"the /{command.name} command")
        session.tools = Offered(session.tools, fence)
        session.policy = Fenced(session.policy, fence)
        session.gate = dataclasses.replace(session.gate, policy=session.policy)
    if prepared.model:
        _priced(session, cfg, prepared.model, command)
        session.provider = session.with_model(session.provider, prepared.model)
    return prompt


def _priced(session: Session, cfg: EffectiveConfig, model: str, command: Command) -> None:
    """Under --max-cost the command's model needs a price too, or its turns would cost nothing."""
    from arnes.llm.pricing import Price, price_for

    budget = session.budget
    if budget.max_cost is None or model in budget.prices:
        return
    overrides = {name: Price(p.input, p.output) for name, p in cfg.prices.items()}
    price = price_for(session.provider.name, model, overrides)
    if price is None:
        raise ConfigError(
            f'--max-cost needs a price for model {model!r} ({command.path} chooses it): add it under "pricing" '
            f'in settings (e.g. "pricing": {{"{model}": {{"input": 3.0, "output": 15.0}}}}, USD per million tokens)'
        )
    budget.prices[model] = price


@contextmanager
def applied(session: Session, prepared: Prepared, cfg: EffectiveConfig) -> Iterator[str]:
    """`apply` for one turn of the interactive prompt (its prompt is given); the session's tools,
    policy and model come back."""
    saved = session.tools, session.policy, session.gate, session.provider
    try:
        yield apply(session, prepared, cfg)
    finally:
        session.tools, session.policy, session.gate, session.provider = saved


def one_shot(session: Session, cfg: EffectiveConfig, task: str) -> str:
    """A one-shot task that starts with `/NAME`: the command applied for the whole run, its prompt
    returned. An unknown name is a usage error (exit 2) listing the commands there are."""
    invocation = split_invocation(task)
    if invocation is None:
        return task
    name, arguments = invocation
    from arnes.ui.slash import BUILTINS

    catalog = load_catalog(session.host, BUILTINS)
    command, note = resolve(catalog, session, name)
    if note is not None:
        cfg.warnings.append(note)
    cfg.warnings.extend(r.why for r in catalog.refused if r.shadowed and r.path.stem == name)
    if command is None and name.startswith(MCP_PROMPT_PREFIX):
        prompt = mcp_prompt(session, name, arguments)
        if prompt is not None:
            return prompt
    if command is None:
        if name in BUILTINS:
            raise ConfigError(
                f"/{name} is a command of the interactive prompt (run `arnes` at a terminal); "
                f'to send the text to the model, word it differently, e.g. "{name} ..." without the slash'
            )
        raise ConfigError(unknown_message(name, catalog, [], skill_names(session)))
    prepared = prepare(command, arguments, cfg.trusted, session.provider.name)
    cfg.warnings.extend(prepared.notes)  # shown and traced once the run's subscribers listen
    return apply(session, prepared, cfg)


def mcp_prompt(session: Session, name: str, arguments: str) -> str | None:
    """The text of an MCP server's prompt for `/mcp__SERVER__PROMPT words` (None: no server offers
    it). The words fill the prompt's arguments in the server's order, the last taking the rest;
    the text is the user's message, as a command's is. ConfigError when the server fails."""
    hub = session.mcp
    server, _, prompt = name.removeprefix(MCP_PROMPT_PREFIX).partition("__")
    if hub is None or server not in hub.servers or not prompt:
        return None
    hub.wait()
    found = next((p for p in hub.servers[server].prompts if p.name == prompt), None)
    if found is None:
        return None
    given = words(arguments)
    names = found.arguments
    filled = dict(zip(names, given, strict=False))
    if names and len(given) > len(names):
        filled[names[-1]] = " ".join(given[len(names) - 1 :])
    try:
        return hub.prompt(server, prompt, filled)
    except ConnectionError as exc:
        raise ConfigError(f"/{name}: {exc}") from None


def resolve(catalog: Catalog, session: Session, name: str) -> tuple[Command | None, str | None]:
    """What `/name` runs, and a note when something else has the name too.

    Your own command or skill wins over a project's (a cloned repository must not take over your
    `/commit` or your `deploy` skill); within one origin a command's own name comes first, then a
    skill, then a namespaced command's last part (`/x` for `tools:x`)."""
    exact = catalog.commands.get(name)
    spaced = _last_part(catalog, name)  # a user's (or plugin's) `tools:x` outranks a project's `x`
    skill = session.skill_catalog.get(name) if session.skill_catalog is not None else None
    if skill is not None and not skill.user_invocable:
        skill = None
    ranked: list[tuple[str, str, Path]] = []  # (kind, origin, path)
    if exact is not None:
        ranked.append(("command", exact.origin, exact.path))
    if skill is not None:
        ranked.append(("skill", skill.origin, skill.folder / "SKILL.md"))
    if spaced is not None:
        ranked.append(("namespaced", spaced.origin, spaced.path))
    if not ranked:
        return None, None
    kind, origin, path = next((r for r in ranked if r[1] == "user"), ranked[0])
    chosen = exact if kind == "command" else spaced if kind == "namespaced" else skill_command(session, name)
    others = [str(p) for _, o, p in ranked if p != path]
    note = f"/{name} runs {path} ({origin}); also named so: {', '.join(others)}" if others else None
    return chosen, note


def _last_part(catalog: Catalog, name: str) -> Command | None:
    """The namespaced command whose last part is `name` (`tools:x` for `/x`): the user's own when
    exactly one of theirs has it (a repository's `ops/x.md` must not make it ambiguous), else the
    only one."""
    if ":" in name:
        return None
    matching = [c for n, c in catalog.commands.items() if ":" in n and n.rpartition(":")[2] == name]
    users = [c for c in matching if c.origin == "user"]
    return users[0] if len(users) == 1 else matching[0] if len(matching) == 1 else None


def skill_command(session: Session, name: str) -> Command | None:
    """A skill run as `/name` (as Claude Code runs them): its body, files and allowed-tools as one
    prompt, loaded as the Skill tool loads it (a user's skill folder becomes readable). Its
    allowed-tools fence the prompt like a command's (the Skill tool always passes a fence)."""
    catalog, loader = session.skill_catalog, session.ctx.skills
    skill = catalog.get(name) if catalog is not None else None
    if skill is None or loader is None or not skill.user_invocable:
        return None
    try:
        text = loader.load(name, by_user=True)
    except ToolError as exc:
        raise ConfigError(f"/{name}: {exc}") from None
    path = skill.folder / "SKILL.md"
    variables = (("CLAUDE_SKILL_DIR", str(skill.real)), ("CLAUDE_SESSION_ID", session.id))
    return Command(name, text, path, skill.origin, skill.description, allowed=skill.allowed_tools, skill=True,
                   variables=variables)  # fmt: skip


def skill_names(session: Session) -> list[str]:
    catalog = session.skill_catalog
    return [s.name for s in catalog.skills() if s.user_invocable] if catalog is not None else []
