"""Claude Code's `@path` in a user's message: the file goes with the message, as Read shows it.

The user typed the name, so the file is read without asking, but never what a Read could not
show: a file outside the workspace (as written or by its real path), one a Read rule hides, a
folder, a link that leads out. The file counts as read (Write and Edit may change it next), as
in Claude Code. A word that names no such file (`@property`, `@team`) stays text; so does a
mention in a sub-agent's task, which the model wrote. Quoted names take spaces: `@"my notes.md"`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arnes.host.paths import is_inside, resolve_real
from arnes.tools.base import ToolContext, ToolError
from arnes.tools.files import Read, ReadArgs

MOST = 10  # files attached from one message
_MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"\n]+)"|([^\s@"]+))')
_TRAILING = ".,;:!?)]}'`"


@dataclass(frozen=True)
class Attached:
    name: str  # as the user wrote it
    shown: str  # the workspace-relative path
    text: str  # what Read gives the model


def mentioned(message: str) -> list[str]:
    """The `@` names of a message, in order, each once."""
    names: list[str] = []
    for found in _MENTION.finditer(message):
        name = found.group(1) or found.group(2).rstrip(_TRAILING)
        if name and name not in names:
            names.append(name)
    return names


def attach(message: str, ctx: ToolContext) -> list[Attached]:
    """The files the message names with `@` that a Read may show, read (at most MOST)."""
    workspace = resolve_real(ctx.workspace)
    attached: list[Attached] = []
    for name in mentioned(message):
        if len(attached) == MOST:
            break
        try:
            path = ctx.path(name)
        except ToolError:
            continue
        real = resolve_real(path)
        if not is_inside(workspace, real) or ctx.hidden("Read", path) or ctx.hidden("Read", real):
            continue
        if not real.is_file():
            continue
        try:
            text = Read().run(ReadArgs(file_path=name), ctx)
        except (ToolError, OSError):
            continue
        attached.append(Attached(name, ctx.display(path), str(text)))
    return attached


def block_text(item: Attached) -> str:
    return f"The user attached {item.shown} (@{item.name}); as Read shows it:\n{item.text}"
