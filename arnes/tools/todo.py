"""TodoWrite: Claude Code's checklist of the session's work, under its name and arguments.

Models trained on Claude Code call it unasked on any task of a few steps; answered `Unknown tool`,
they retry or stop planning. The list lives on the session's context (a sub-agent has its own, as
in Claude Code), each call replaces it whole, and it touches no file: nothing to permit. The person
sees it through the result's preview (ui/preview.py), the trace keeps the call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from arnes.tools.base import BaseTool, ToolArgs, ToolContext
from arnes.tools.responses import Output

# Claude Code's own answer, word for word: a model trained on it expects this and goes on working.
CONFIRMATION = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track "
    "your progress. Please proceed with the current tasks if applicable"
)


class TodoItem(ToolArgs):
    # No descriptions, no minLength in the schema: it is paid on every request, and the names are
    # Claude Code's own (the tool's description says what activeForm is). Emptiness is still refused.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = Field(alias="activeForm")

    @field_validator("content", "active_form")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must say the task in words")
        return value


class TodoWriteArgs(ToolArgs):
    todos: list[TodoItem] = Field(description="The whole updated list; it replaces the last one.")


class TodoWrite(BaseTool[TodoWriteArgs]):
    name = "TodoWrite"
    description = "The task's checklist, sent whole each time; activeForm: the task as in progress (Running tests)."
    args_model = TodoWriteArgs
    read_only = True  # it changes the session's list only: plan mode and read-only agents keep it

    def run(self, args: TodoWriteArgs, ctx: ToolContext) -> str:
        old = list(ctx.todos)
        new = [item.model_dump(by_alias=True) for item in args.todos]
        ctx.todos[:] = new
        text = CONFIRMATION
        working = sum(1 for item in args.todos if item.status == "in_progress")
        if working > 1:  # Claude Code's rule for the model, not its validation: said, not refused
            text += f"\n[arnes: {working} tasks are in_progress; keep one in_progress at a time, the one you work on]"
        return Output(text, lambda: {"oldTodos": old, "newTodos": new})
