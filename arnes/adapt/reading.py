"""How a piece reads a workspace file: only as a Read would show it without asking.

Pieces act before the permission gate (a call's content checked, a reply's file compared or
merged), so they may never read what the gate would not show the model: a file outside the
workspace, one a Read rule hides (as written or by its real path), or one through a link.
"""

from __future__ import annotations

from arnes.host.nofollow import read_regular
from arnes.tools.base import ToolContext

MOST = 4_000_000  # bytes: a bigger file is not read by a piece
MOST_CHANGED = 256 << 10  # characters of the session's changed files a piece keeps (past that: none)


def readable_text(ctx: ToolContext, name: object) -> tuple[str, str] | None:
    """(shown path, text) of the file `name` names, or None when a piece may not read it."""
    if not isinstance(name, str):
        return None
    path = ctx.path(name)
    real = ctx.readable(path)
    if real is None:
        return None
    try:
        data = read_regular(real, limit=MOST)[0]
    except (OSError, ValueError):
        return None
    return ctx.display(path), data.decode("utf-8", "replace")


def changed_texts(ctx: ToolContext) -> dict[str, str]:
    """The text files this agent changed, as Read shows them (shown path -> text); nothing at all
    past MOST_CHANGED characters, and a file a piece may not read, or that is no text, is left out."""
    files, size = {}, 0
    for path in ctx.changes.changed():
        found = readable_text(ctx, ctx.display(path))
        if found is None or "\ufffd" in found[1]:  # not text the model could have written (a cache, a binary)
            continue
        files[found[0]] = found[1]
        size += len(found[1])
        if size > MOST_CHANGED:
            return {}
    return files
