"""ExitPlanMode: Claude Code's way for the model to present its plan and leave plan mode.

The tool itself does little: the gate asks the user about every call (permissions/engine.py
`_pathless`), with the plan as what is shown, so the approval is the gate's like any other.
Approved, the session goes back to the mode it was in before plan mode (default when it started
in plan); refused, it stays in plan mode and the model reads why. With nobody to ask (`-p`), the
gate's "no" holds, as Claude Code's headless runs deny it. Offered only in plan mode
(Session.tool_specs), never to a sub-agent (a child cannot end its parent's plan).
"""

from __future__ import annotations

from pydantic import Field

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError

NAME = "ExitPlanMode"
# Claude Code's answer on approval, in substance: a model trained on it goes on to the work.
APPROVED = "User has approved your plan. You can now start coding. Start with updating your todo list if applicable."


class ExitPlanModeArgs(ToolArgs):
    plan: str = Field(description="The plan to show the user for approval (Markdown, concise).")


class ExitPlanMode(BaseTool[ExitPlanModeArgs]):
    name = NAME
    description = (
        "In plan mode, when your plan for a coding task is ready: present it for the user's approval. "
        "Approved, plan mode ends and you can make the changes."
    )
    args_model = ExitPlanModeArgs
    read_only = False  # it changes the session's mode: run in order, before the calls after it are judged

    def preview(self, args: ExitPlanModeArgs, ctx: ToolContext) -> str | None:
        """The plan as the approval prompt shows it: each line as a diff's context line (a `-` item
        of a Markdown list is not a removed line)."""
        return "\n".join(f"  {line}" for line in args.plan.strip().split("\n"))

    def run(self, args: ExitPlanModeArgs, ctx: ToolContext) -> str:
        if not args.plan.strip():
            raise ToolError("The plan is empty: give the plan you want the user to approve.")
        left = ctx.leave_plan() if ctx.leave_plan is not None else None
        if left is None:
            raise ToolError("You are not in plan mode, so there is no plan to approve: go on with the task.")
        return f"{APPROVED}\n[arnes: plan mode ended; the session is in {left} mode]"
