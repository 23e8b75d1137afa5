"""Team files (`.arnes/teams/NAME.toml`, DESIGN §8), validated strictly like settings."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arnes.errors import ConfigError, validation_summary
from arnes.host.files import HostFiles
from arnes.nesting import Unreadable, toml_loads

FOLDER = ".arnes/teams"

AgentName = Literal["arnes", "claude", "codex", "opencode", "gemini"]


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    prompt: str = Field(min_length=1, description="The node's role.")
    agent: AgentName = "arnes"
    agent_def: str | None = Field(
        None,
        description="arnes nodes: an agent definition (.arnes/agents/NAME.md): its tools, mode, model, prompt.",
    )
    read_only: bool = False
    model: str | None = None
    tools: list[str] | None = Field(None, description="arnes nodes: only these tools.")
    args: list[str] = Field(default_factory=list, description="External CLIs: extra arguments.")
    verify: str | None = Field(
        None, description="A command that must be green for the node to pass; `auto`: the project's test command."
    )

    @model_validator(mode="after")
    def _definition_for_arnes(self) -> Node:
        if self.agent_def is not None and self.agent != "arnes":
            raise ValueError(
                f"node {self.id}: agent_def names an arnes agent definition; {self.agent} nodes cannot use one"
            )
        return self


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    to: str
    when: Literal["always", "pass", "fail"] = "always"
    max_rounds: int = Field(3, ge=1, description="How often this edge may be taken in one run.")


class Team(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = ""
    nodes: list[Node] = Field(min_length=1)
    edges: list[Edge] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Team:
        ids = [n.id for n in self.nodes]
        if len(ids) != len(set(ids)):
            raise ValueError("node ids must be unique")
        for edge in self.edges:
            for end in (edge.source, edge.to):
                if end not in ids:
                    raise ValueError(f"edge {edge.source} -> {edge.to} names an unknown node {end!r}")
        return self

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    def starts(self) -> list[str]:
        """Nodes nobody leads to (run first, in parallel when several); else the first node."""
        targets = {e.to for e in self.edges}
        return [n.id for n in self.nodes if n.id not in targets] or [self.nodes[0].id]

    def outgoing(self, node_id: str) -> list[tuple[int, Edge]]:
        return [(i, e) for i, e in enumerate(self.edges) if e.source == node_id]


def builtin_names() -> list[str]:
    folder = resources.files("arnes.workflow.teams")
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def project_names(workspace: Path) -> list[str]:
    """Team files in a real .arnes/teams folder (links are not team files: their prompts go to a model)."""
    return [name.removesuffix(".toml") for name, _ in HostFiles(workspace).entries(FOLDER, ".toml")]


def load_team(workspace: Path, name: str) -> Team:
    """A project team (.arnes/teams/NAME.toml) first, else a built-in template of that name."""
    path = workspace / FOLDER / f"{name}.toml"
    data = None
    if "/" not in name and name in project_names(workspace):
        try:
            data = HostFiles(workspace).read(f"{FOLDER}/{name}.toml")
        except OSError as exc:
            raise ConfigError(f"{path}: {exc.strerror or exc}") from exc
    if data is not None:
        where = str(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{where}: cannot be read as UTF-8 text ({exc})") from exc
    elif name in builtin_names():
        text = (resources.files("arnes.workflow.teams") / f"{name}.toml").read_text(encoding="utf-8")
        where = f"built-in team {name}"
    else:
        known = ", ".join(project_names(workspace) + builtin_names())
        raise ConfigError(f"no team {name!r} (in .arnes/teams/ or built in); teams: {known}")
    try:
        team = Team.model_validate({**toml_loads(text), "name": name})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from exc
    except ValidationError as exc:
        problems = validation_summary(exc, "team")
        raise ConfigError(f"{where}: invalid team: {problems}") from exc
    except Unreadable as exc:  # nested too deep, a number too long (nesting.py)
        raise ConfigError(f"{where}: not read: {exc}") from None
    return team


def team_grants(team: Team) -> list[str]:
    """What a team file decides beyond the session's permissions: other CLIs on the host, their
    flags, commands run as verify, a model. A project team with any of these needs trust."""
    grants = []
    for node in team.nodes:
        if node.agent != "arnes":
            grants.append(f"{node.id}.agent")
        grants += [f"{node.id}.{key}" for key in ("args", "verify", "model") if getattr(node, key)]
    return grants


def missing_definitions(team: Team, known: list[str]) -> str | None:
    """The first node naming an agent definition that does not exist, said so it can be fixed."""
    for node in team.nodes:
        if node.agent_def is not None and node.agent_def not in known:
            found = ", ".join(known) or "none (.arnes/agents/, .claude/agents/, ~/.config/arnes/agents/)"
            return f"node {node.id}: agent_def {node.agent_def!r} names no agent definition; found: {found}"
    return None
