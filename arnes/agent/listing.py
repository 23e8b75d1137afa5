"""A short listing of the workspace's files, for the session's context.

Small models act before they look: given "fix the rate", a 1.5B model edits `rate.txt`
that does not exist instead of Globbing for `pricing.py`. Naming the files up front (a tiny
workspace costs ~50 tokens) lets its first call hit a real file. The listing is what Glob would
show: .gitignore honoured, links not followed, nothing a Read deny or ask rule covers.
"""

from __future__ import annotations

from pathlib import Path

from arnes.host.files import Rules
from arnes.host.ripgrep import printable, workspace_files
from arnes.tools.base import ToolError

LISTING_CAP = 60  # paths; a bigger workspace gets the first ones and a count


def visible_files(root: Path, rules: Rules | None) -> list[str]:
    """The workspace's files (relative, sorted) that Glob may show; [] when ripgrep is missing."""
    try:
        names = workspace_files(root)
    except (ToolError, OSError):
        return []
    # A name with a line break or bytes that are not UTF-8 is left out: it could not be named in
    # the prompt as one clean line (and the model can still find it with Glob).
    return sorted(n for n in names if printable(n) and (rules is None or not rules.hidden("Glob", root / n)))


def listing(root: Path, rules: Rules | None, cap: int = LISTING_CAP) -> str:
    """One paragraph naming the files (shallow ones first), or "" for an empty workspace."""
    names = sorted(visible_files(root, rules), key=lambda n: (n.count("/"), n))
    if not names:
        return ""
    shown = sorted(names[:cap])
    more = f" ... and {len(names) - cap} more (use Glob)" if len(names) > cap else ""
    return f"Files in the workspace ({len(names)}): {', '.join(shown)}{more}."
