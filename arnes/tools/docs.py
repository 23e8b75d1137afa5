"""ReadDoc: the workspace's docs/TOPIC.md on demand, so AGENTS.md can stay a one-page index."""

from __future__ import annotations

import re

from pydantic import Field

from arnes.permissions.types import Target
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError

_TOPIC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ReadDocArgs(ToolArgs):
    topic: str = Field(description="Name of a document in docs/, without .md (e.g. architecture).")


class ReadDoc(BaseTool[ReadDocArgs]):
    name = "ReadDoc"
    description = "Load the workspace document docs/TOPIC.md (project rules, architecture, how-tos)."
    args_model = ReadDocArgs
    read_only = True

    def targets(self, args: ReadDocArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(f"docs/{args.topic.removesuffix('.md')}.md"), "read")]

    def run(self, args: ReadDocArgs, ctx: ToolContext) -> str:
        topic = args.topic.removesuffix(".md")
        available = sorted(p.stem for p in (ctx.workspace / "docs").glob("*.md"))
        if not _TOPIC.fullmatch(topic) or ".." in topic:
            raise ToolError(f"{args.topic!r} is not a topic name. Topics: {', '.join(available) or 'none'}.")
        path = ctx.workspace / "docs" / f"{topic}.md"
        if not path.is_file():
            listing = ", ".join(available) if available else "there is no docs/ folder"
            raise ToolError(f"No document docs/{topic}.md. Available topics: {listing}.")
        return path.read_text(encoding="utf-8", errors="replace")
