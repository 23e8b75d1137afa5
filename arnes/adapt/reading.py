"""How a piece reads a workspace file: only as a Read would show it without asking.

Pieces act before the permission gate (a call's content checked, a reply's file compared or
merged), so they may never read what the gate would not show the model: a file outside the
workspace, one a Read rule hides (as written or by its real path), or one through a link.
"""

from __future__ import annotations

from arnes.host.nofollow import read_regular
from arnes.host.paths import is_inside, resolve_real
from arnes.tools.base import ToolContext

MOST = 4_000_000  # bytes: a bigger file is not read by a piece


def readable_text(ctx: ToolContext, name: object) -> tuple[str, str] | None:
    """(shown path, text) of the file `name` names, or None when a piece may not read it."""
    if not isinstance(name, str):
        return None
    path = ctx.path(name)
    real = resolve_real(path)
    if not is_inside(resolve_real(ctx.workspace), real) or ctx.hidden("Read", path) or ctx.hidden("Read", real):
        return None
    try:
        data = read_regular(real, limit=MOST)[0]
    except (OSError, ValueError):
        return None
    return ctx.display(path), data.decode("utf-8", "replace")
