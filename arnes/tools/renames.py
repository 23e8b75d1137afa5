"""After an Edit that renames a name: where the old name still stands.

A small model renaming `calc_total` edits the definition and stops; the uses in other files keep
the old name and the tests fail on an import. An IDE's rename shows every use; this is the
short form of that, in the Edit's result: the files and lines that still have the old name as a
whole word (what Grep would show: .gitignore honoured, no link followed, no hidden file named).
The Edit for the first of them is spelled out: the 1.5B model, told only where the name still
stood, printed the renamed function in the chat and stopped; it copies a concrete call well.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from arnes.errors import ToolError
from arnes.host.nofollow import read_regular
from arnes.host.ripgrep import NO_IGNORE_DOT, printable, ripgrep
from arnes.tools.base import ToolContext

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MOST_FILES = 8


def still_named(ctx: ToolContext, old: str, new: str) -> str:
    """ " `old` is still in: a.py (lines 1, 4), ..." for a rename of one name to another, else ""."""
    if old == new or not NAME.match(old) or not NAME.match(new):
        return ""
    try:
        done = subprocess.run(
            [ripgrep(), "-n", "-w", "-F", "--no-heading", "--null", "--hidden", "--no-require-git", NO_IGNORE_DOT,
             "--max-count", "20", "--glob", "!.git", "--glob", "!.arnes", "--", old, "."],
            cwd=ctx.workspace, capture_output=True, text=True, errors="replace", timeout=10, check=False,
        )  # fmt: skip
    except (ToolError, OSError, subprocess.TimeoutExpired):
        return ""
    lines: dict[str, list[str]] = {}
    broken: str | None = None  # the pieces so far of a path that holds a newline
    # Cut at newlines only (splitlines() also cuts a matched line at \u2028 or \f); each hit has
    # a NUL after its path, so a piece without one starts a path cut at a newline.
    for hit in done.stdout.split("\n"):
        if "\0" not in hit:
            broken = hit if broken is None else f"{broken}\n{hit}"
            continue
        path, _, rest = hit.partition("\0")  # --null: a name with ':' in it stays whole
        if broken is not None:
            path, broken = f"{broken}\n{path}", None
        number = rest.partition(":")[0]
        path = path.removeprefix("./")
        if not number.isdigit() or not printable(path) or ctx.hidden("Grep", Path(ctx.workspace) / path):
            continue
        lines.setdefault(path, []).append(number)
    if not lines:
        return ""
    shown = sorted(lines)[:MOST_FILES]
    where = ", ".join(f"{p} (line{'s' if len(lines[p]) > 1 else ''} {', '.join(lines[p][:6])})" for p in shown)
    more = f" and {len(lines) - MOST_FILES} more files" if len(lines) > MOST_FILES else ""
    return f" `{old}` is still in: {where}{more}.{_next_edit(ctx, shown[0], old, new)}"


def _next_edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    """The Edit that renames every use in `path`, when a plain replace_all does just that: each
    place `old` stands in the file is the whole word (no `calc_totals` to break)."""
    try:
        text = read_regular(Path(ctx.workspace) / path, limit=1_000_000)[0].decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    whole = re.findall(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])", text)
    if not whole or len(whole) != text.count(old):
        return ""
    call = {"file_path": path, "old_string": old, "new_string": new, "replace_all": True}
    return f" To rename it there too, send:\n{json.dumps({'name': 'Edit', 'arguments': call})}"
