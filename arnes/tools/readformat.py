"""How Read shows lines (`cat -n`: number, tab, text). Its own module because Read (files.py) and
the Edit hints that show the closest region (editmatch.py) must print the same thing, and Read
uses editmatch, not the other way round."""

from __future__ import annotations

MAX_LINE_CHARS = 2000


def numbered(lines: list[str], first: int = 1) -> str:
    """Lines as Read shows them (`cat -n`: number, tab, text), long lines cut."""
    return "\n".join(f"{n:>6}\t{line[:MAX_LINE_CHARS]}" for n, line in enumerate(lines, start=first))
