"""Claude Code's `@path` in a user's message: the file goes with the message, as Read shows it;
`@server:uri` does the same with an MCP server's resource (as ReadMcpResourceTool reads it).

The user typed the name, so the file is read without asking, but never what a Read could not
show: a file outside the workspace (as written or by its real path), one a Read rule hides, a
folder, a link that leads out. The file counts as read (Write and Edit may change it next), as
in Claude Code. A word that names no such file (`@property`, `@team`) stays text; so does a
mention in a sub-agent's task, which the model wrote. Quoted names take spaces: `@"my notes.md"`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from arnes.tools.base import ToolContext, ToolError
from arnes.tools.files import Read, ReadArgs

MOST = 10  # files attached from one message
_MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"\n]+)"|([^\s@"]+))')
_TRAILING = ".,;:!?)]}'`"
_RESOURCE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]*):(\S+)")  # server:uri, e.g. docs:file://api/auth

ReadResource = Callable[[str, str], str | None]  # (server, uri) -> what the model gets, or None


@dataclass(frozen=True)
class Attached:
    name: str  # as the user wrote it
    shown: str  # the workspace-relative path, or the resource as written
    text: str  # what Read (or ReadMcpResourceTool) gives the model
    resource: bool = False


def mentioned(message: str) -> list[str]:
    """The `@` names of a message, in order, each once."""
    names: list[str] = []
    for found in _MENTION.finditer(message):
        name = found.group(1) or found.group(2).rstrip(_TRAILING)
        if name and name not in names:
            names.append(name)
    return names


def resources_named(message: str) -> bool:
    """Whether any `@` name has the form of a resource (`server:uri`): only then are servers asked."""
    return any(_RESOURCE.fullmatch(name) for name in mentioned(message))


def attach(message: str, ctx: ToolContext, resource: ReadResource | None = None) -> list[Attached]:
    """What the message names with `@`: files a Read may show, and (with `resource`) a server's
    resources; at most MOST."""
    attached: list[Attached] = []
    for name in mentioned(message):
        if len(attached) == MOST:
            break
        found = _file(name, ctx)
        if found is None and resource is not None and (form := _RESOURCE.fullmatch(name)) is not None:
            text = resource(form.group(1), form.group(2))
            found = Attached(name, name, text, resource=True) if text is not None else None
        if found is not None:
            attached.append(found)
    return attached


def _file(name: str, ctx: ToolContext) -> Attached | None:
    try:
        path = ctx.path(name)
    except ToolError:
        return None
    real = ctx.readable(path)
    if real is None or not real.is_file():
        return None
    try:
        text = Read().run(ReadArgs(file_path=name), ctx)
    except (ToolError, OSError):
        return None
    return Attached(name, ctx.display(path), str(text))


def block_text(item: Attached) -> str:
    if item.resource:
        return f"The user attached the MCP resource @{item.name}; as ReadMcpResourceTool reads it:\n{item.text}"
    return f"The user attached {item.shown} (@{item.name}); as Read shows it:\n{item.text}"
