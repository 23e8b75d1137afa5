"""Delegate: hand a self-contained piece of work to a sub-agent with a clean context."""

from __future__ import annotations

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
