"""Skill: load one of the skills named in the first message (DESIGN §13).

The schema is fixed and lists no skill: it is part of the prefix every session shares, and the
skills differ per workspace (they are listed in the first user message instead).
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic.json_schema import SkipJsonSchema

from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError


class SkillArgs(ToolArgs):
    # Claude Code's Skill tool takes `skill` (`command` in older versions), and `args` for the skill:
    # a model trained on it sends those. Neither is in the schema: it stays the same bytes.
    name: str = Field(validation_alias=AliasChoices("name", "skill", "command"))
    args: SkipJsonSchema[str | None] = None


class Skill(BaseTool[SkillArgs]):
    name = "Skill"
    description = "Load a skill listed in the first message (instructions, files)."
    args_model = SkillArgs
    read_only = True  # it reads prompt text; the narrowing it brings only takes away

    def run(self, args: SkillArgs, ctx: ToolContext) -> str:
        if ctx.skills is None:
            raise ToolError("Skills are not available here; go on without one.")
        return ctx.skills.load(args.name, arguments=args.args)
