"""A sub-agent's session from an agent definition: the definition narrows, never widens.

Shared by Delegate (`agent`) and team nodes (`agent_def`): the definition's tools are cut to
the parent's (and to the node's own list), its mode is held against the parent's by the
session, its body becomes the head of the child's first message (agent/prompt.py says why not
the system prompt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Self, TypeVar

from arnes.agent.events import EventBus, Notice
from arnes.agent.run_context import Role
from arnes.extensions.agents import AgentDefinition, Catalog
from arnes.llm.claude_ids import model_for
from arnes.tools.base import ToolError, ToolRegistry

if TYPE_CHECKING:
    from arnes.extensions.agents import AgentMode
    from arnes.llm.base import Provider


class Parent(Protocol):
    """A session that makes sub-agents' sessions (arnes/session.py `Session.child`)."""

    agents: Catalog | None
    tools: ToolRegistry
    bus: EventBus

    def provider_for(self, role: Role) -> Provider: ...
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
    ) -> Self: ...


P = TypeVar("P", bound=Parent)


def delegate_session(parent: P, agent: str | None, *, read_only: bool, parent_call: str) -> P:
    """The child for a Delegate call; an unknown name is an observation listing the known ones."""
    if agent is None or not agent.strip():
        return parent.child(read_only=read_only, parent_call=parent_call)
    catalog = parent.agents or Catalog()
    definition = catalog.get(agent.strip())
    if definition is None:
        raise ToolError(catalog.unknown(agent.strip()))
    return child_for(parent, definition, read_only=read_only, parent_call=parent_call)


def child_for(
    parent: P,
    definition: AgentDefinition | None,
    *,
    read_only: bool,
    parent_call: str,
    tool_names: list[str] | None = None,
    model: str | None = None,
    max_turns: int | None = None,
    self_check: bool = True,
) -> P:
    """`tool_names`/`model` are the caller's own (a team node's); the definition narrows them further.
    `self_check` False: the caller runs the tests itself (a team node's verify)."""
    if definition is None:
        return parent.child(
            read_only=read_only, parent_call=parent_call, tool_names=tool_names, model=model, max_turns=max_turns,
            self_check=self_check,
        )  # fmt: skip
    names = [t.name for t in parent.tools if definition.allows(t.name)]
    if tool_names is not None:
        names = [n for n in names if n in tool_names]
    return parent.child(
        read_only=read_only,
        parent_call=parent_call,
        tool_names=names,
        model=model or _model(parent, definition),
        max_turns=max_turns,
        mode=definition.mode,
        instructions=definition.body,
        self_check=self_check,
    )


def _model(parent: Parent, definition: AgentDefinition) -> str | None:
    """The definition's model as the parent's provider knows it (llm/claude_ids.py: a Claude model
    is left out, with a note, where the provider serves none)."""
    model, note = model_for(definition.model, parent.provider_for("subagent").name)
    if note is not None:
        parent.bus.emit(Notice("warning", f"warning: agent {definition.name}: {note}"))
    return model
