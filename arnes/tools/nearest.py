"""The existing files nearest to a path that does not exist, for "File does not exist" errors.

A small model guesses a name (`rate.txt` where the workspace has `pricing.py`) and, told
only that it does not exist, repeats the error back as its answer. Naming what is there makes
the next call hit a real file. What is named is what Glob would show (ignore rules, Read rules).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from arnes.host.paths import is_inside
from arnes.host.ripgrep import printable, workspace_files
from arnes.tools.base import ToolContext, ToolError

LIST_ALL_UNDER = 12  # a workspace this small is named whole when nothing is close
MAX_NAMED = 5


def nearest_files(ctx: ToolContext, path: Path) -> str:
    """A sentence naming the files most like `path`, or "" when nothing useful can be said."""
    root = ctx.workspace
    if not is_inside(root, path):
        return ""
    try:
        names = [n for n in workspace_files(root) if printable(n) and not ctx.hidden("Glob", root / n)]
    except (ToolError, OSError):
        return ""
    if not names:
        return " The workspace has no files yet."
    wanted = path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    by_name = {Path(n).name.lower(): n for n in names}
    close = difflib.get_close_matches(wanted.lower(), [n.lower() for n in names], n=MAX_NAMED, cutoff=0.5)
    close += difflib.get_close_matches(Path(wanted).name.lower(), list(by_name), n=MAX_NAMED, cutoff=0.5)
    lowered = {n.lower(): n for n in names}
    found = list(dict.fromkeys(lowered.get(c) or by_name[c] for c in close))[:MAX_NAMED]
    if found:
        return f" Existing files with similar names: {', '.join(found)}."
    if len(names) <= LIST_ALL_UNDER:
        return f" The workspace's files are: {', '.join(sorted(names))}."
    return ""
