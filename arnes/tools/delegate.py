"""Delegate: hand a self-contained piece of work to a sub-agent with a clean context.

Claude Code calls this tool `Task` (`Agent` in later versions), with `prompt`, `description` and
`subagent_type`; a model trained on it sends that call, and `as_delegate` makes it Delegate's
before anything judges it (DESIGN §16): `prompt` is the task, `subagent_type` the agent
definition (its built-in `general-purpose` is none, `Explore` and `Plan` are a read-only one).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError


class DelegateArgs(ToolArgs):
    task: str = Field(description="The whole task: the sub-agent sees nothing else.")
    read_only: bool = Field(False, description="No write tools; its shell only reads.")
    # An agent definition's name. Left undescribed on purpose: the first message lists the names
    # and says what `agent` is for, and every token here is paid by every request (tests/test_budget.py).
    agent: str | None = None


class Delegate(BaseTool[DelegateArgs]):
    name = "Delegate"
    description = "Hand a self-contained task (a wide search, a review) to a fresh sub-agent; get its conclusion."
    args_model = DelegateArgs
    read_only = False

    def run(self, args: DelegateArgs, ctx: ToolContext) -> str:
        if ctx.subagent is None:
            raise ToolError("Sub-agents are not available here; do the work yourself.")
        if not args.task.strip():
            raise ToolError("The task is empty. Describe the whole task: the sub-agent sees nothing else.")
        return ctx.subagent(args.task, args.read_only, args.agent)


CLAUDE_NAMES = ("Task", "Agent")
READ_ONLY_KINDS = ("Explore", "Plan")  # Claude Code's built-in sub-agents that only read


def as_delegate(name: str, raw: dict[str, Any]) -> dict[str, Any] | None:
    """A `Task` call's input as Delegate's; None when `name` is not one of Claude Code's names for it."""
    if name not in CLAUDE_NAMES:
        return None
    args = {k: v for k, v in raw.items() if k not in ("prompt", "description", "subagent_type")}
    if "prompt" in raw and "task" not in raw:
        args["task"] = raw["prompt"]
    kind = raw.get("subagent_type")
    if kind in READ_ONLY_KINDS:
        args.setdefault("read_only", True)
    elif isinstance(kind, str) and kind.strip() and kind != "general-purpose":
        args.setdefault("agent", kind)
    return args
