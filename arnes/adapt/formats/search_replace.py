"""aider's SEARCH/REPLACE blocks: an exact search text and its replacement, under the file's path
(`EXAMPLE`, which the system prompt shows the model too).

Applied as Edits, so an Edit's contract holds: the search text must match exactly once (or
with only whitespace off), and an empty one creates a new file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arnes.adapt.formats.whole import path_of

EXAMPLE = """\
mathutil.py
```python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
```"""

_SEARCH = re.compile(r"^[ \t]*<{5,9} ?SEARCH[^\n]*$")
_DIVIDER = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{5,9} ?REPLACE[^\n]*$")
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$")


@dataclass(frozen=True)
class Change:
    path: str | None
    search: str
    replace: str


def changes(text: str) -> list[Change]:
    """Every SEARCH/REPLACE block of a reply, each with the path named above it (the nearest
    line above that names a file, past an opening fence); a block with no path takes the last
    path named before it. Read line by line, once: a SEARCH line starts a block (an unfinished
    one before it is dropped), the first divider ends its search text, a REPLACE line the block."""
    out: list[Change] = []
    last: str | None = None
    lines = text.splitlines(keepends=True)
    start: int | None = None  # the line of the open block's SEARCH marker
    search: list[str] = []
    replace: list[str] | None = None  # None: still in the search text
    for i, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if _SEARCH.match(bare):
            start, search, replace = i, [], None
        elif start is None:
            continue
        elif replace is None and _DIVIDER.match(bare):
            replace = []
        elif replace is not None and _REPLACE.match(bare):
            last = _named_above(lines, start) or last
            out.append(Change(last, "".join(search), "".join(replace)))
            start = None
        elif replace is None:
            search.append(line)
        else:
            replace.append(line)
    return out


def _named_above(lines: list[str], start: int) -> str | None:
    """The path the three lines above line `start` name (blank lines right above it skipped): the
    nearest naming line, past an opening fence."""
    end = start
    while end > 0 and lines[end - 1] in ("\n", "\r\n"):
        end -= 1
    for line in reversed([x.rstrip("\r\n") for x in lines[max(0, end - 3) : end]]):
        if _FENCE_LINE.match(line):
            info = line.strip().lstrip("`~").split()
            named = next((p for w in info if (p := path_of(w)) is not None), None)
            if named:
                return named
            continue
        return path_of(line)
    return None
