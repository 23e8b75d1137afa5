"""Strings from outside made honest for the terminal: what the model, a tool, a file or a command
wrote is shown, never obeyed.

A terminal obeys what it is sent: ESC starts sequences that move the cursor, clear the screen, set
the window title or write to the clipboard; CR and backspace overwrite what was printed; bidi
overrides reorder a line so `rm` reads as `mr`; zero-width characters hide text inside a word. A
person approving a command must see the bytes that will run, so every string that did not come from
arnes itself passes `visible()` at the rendering boundary. Rich already prints `Text` and
`markup=False` strings literally; `terminal_console()` also turns off `:emoji:` codes, so `[bold]` or
`:warning:` in model text prints as written.
"""

from __future__ import annotations

import unicodedata
from typing import TextIO

from rich.console import Console

# Categories a terminal may act on or that show nothing: controls (C0, DEL, C1), format characters
# (bidi embeddings/overrides/isolates, zero-width space/joiners, BOM, soft hyphen, tags), lone
# surrogates (undecodable bytes) and the Unicode line/paragraph separators.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\x1b": "\\x1b", "\x00": "\\0"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _SHORT:
        return _SHORT[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _shown(ch: str) -> str:
    return _escape(ch) if unicodedata.category(ch) in HIDDEN_CATEGORIES else ch


def visible(text: str, *, newlines: bool = True, tabs: bool = True) -> str:
    """`text` with every control or invisible character written out (`\\x1b`, `\\r`, `\\u202e`).

    Newlines and tabs stay as they are unless the caller needs one line (`newlines=False`). A CR
    is always written out, even in a CRLF line end (as `git diff` shows `^M`): a file's line
    ends are part of what changed.
    """
    if text.isascii() and text.isprintable():  # the common case: nothing to do
        return text
    keep = ("\n" if newlines else "") + ("\t" if tabs else "")
    return "".join(ch if ch in keep else _shown(ch) for ch in text)


def one_line(text: str) -> str:
    """`visible()` for a line that must stay one line (a tool line, an error's first line)."""
    return visible(text, newlines=False, tabs=False)


def terminal_console(
    file: TextIO | None = None, *, stderr: bool = False, soft_wrap: bool = True, kind: type[Console] = Console
) -> Console:
    """The console every arnes screen prints through: no markup guessing, no emoji codes."""
    return kind(file=file, stderr=stderr, highlight=False, emoji=False, soft_wrap=soft_wrap)
