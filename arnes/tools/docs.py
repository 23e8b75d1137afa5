"""ReadDoc: the workspace's docs/TOPIC.md on demand, so AGENTS.md can stay a one-page index."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import Field

from arnes.host.nofollow import LinkRefused, open_folder, read_regular
from arnes.host.paths import resolve_real
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
        available = topics(ctx.workspace)
        if not _TOPIC.fullmatch(topic) or ".." in topic:
            raise ToolError(f"{args.topic!r} is not a topic name. Topics: {', '.join(available) or 'none'}.")
        path = ctx.path(f"docs/{topic}.md")
        try:
            data, _ = read_regular(ctx.real_of(path) or resolve_real(path))
        except LinkRefused:
            raise ToolError(f"docs/{topic}.md changed after it was judged (a link appeared); not read.") from None
        except OSError:
            listing = ", ".join(available) if available else "there is no docs/ folder"
            raise ToolError(f"No document docs/{topic}.md. Available topics: {listing}.") from None
        return data.decode("utf-8", errors="replace")


def topics(workspace: Path) -> list[str]:
    """The names in docs/ (the folder opened through no link), for the prompt and error messages."""
    try:
        fd = open_folder(workspace / "docs", start=workspace)
    except OSError:
        return []
    try:
        return sorted(name[:-3] for name in os.listdir(fd) if name.endswith(".md") and len(name) > 3)
    finally:
        os.close(fd)
