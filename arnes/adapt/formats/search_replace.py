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

_BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^[ \t]*={5,9}[ \t]*\n(?P<replace>.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$")


@dataclass(frozen=True)
class Change:
    path: str | None
    search: str
    replace: str


def changes(text: str) -> list[Change]:
    """Every SEARCH/REPLACE block of a reply, each with the path named above it (the nearest
    line above that names a file, past an opening fence); a block with no path takes the last
    path named before it."""
    out: list[Change] = []
    last: str | None = None
    for match in _BLOCK.finditer(text):
        above = text[: match.start()].rstrip("\n").split("\n")
        named = None
        for line in reversed(above[-3:]):
            if _FENCE_LINE.match(line):
                info = line.strip().lstrip("`~").split()
                named = next((p for w in info if (p := path_of(w)) is not None), None)
                if named:
                    break
                continue
            named = path_of(line)
            break
        last = named or last
        out.append(Change(last, match.group("search"), match.group("replace")))
    return out
