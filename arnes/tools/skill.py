"""Skill: load one of the skills named in the first message (DESIGN §13).

The schema is fixed and lists no skill: it is part of the prefix every session shares, and the
skills differ per workspace (they are listed in the first user message instead).
"""

from __future__ import annotations

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError


class SkillArgs(ToolArgs):
    name: str


class Skill(BaseTool[SkillArgs]):
    name = "Skill"
    description = "Load a skill listed in the first message (instructions, files)."
    args_model = SkillArgs
    read_only = True  # it reads prompt text; the narrowing it brings only takes away

    def run(self, args: SkillArgs, ctx: ToolContext) -> str:
        if ctx.skills is None:
            raise ToolError("Skills are not available here; go on without one.")
        return ctx.skills.load(args.name)
