"""Delegate: hand a self-contained piece of work to a sub-agent with a clean context."""

from __future__ import annotations

from pydantic import Field

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError


class DelegateArgs(ToolArgs):
    task: str = Field(description="The whole task for the sub-agent: it sees nothing else.")
    read_only: bool = Field(False, description="No write tools; its shell only reads.")
    agent: str | None = Field(None, description="An agent definition to follow (names in the first message).")


class Delegate(BaseTool[DelegateArgs]):
    name = "Delegate"
    description = (
        "Give a self-contained task (a wide search, a review) to a sub-agent with a fresh context; get its conclusion."
    )
    args_model = DelegateArgs
    read_only = False

    def run(self, args: DelegateArgs, ctx: ToolContext) -> str:
        if ctx.subagent is None:
            raise ToolError("Sub-agents are not available here; do the work yourself.")
        if not args.task.strip():
            raise ToolError("The task is empty. Describe the whole task: the sub-agent sees nothing else.")
        return ctx.subagent(args.task, args.read_only, args.agent)
