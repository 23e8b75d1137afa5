"""`$ARGUMENTS`, `$1`..`$9`, `$ARGUMENTS[n]` and `${CLAUDE_PLUGIN_ROOT}` in a command's shell lines,
put in as data the shell cannot read as syntax.

Claude Code pastes the arguments into a command's text before its `` !`cmd` `` lines run, so
`/fix "x; rm -rf ~"` runs `rm` in `!`git log --grep=$ARGUMENTS``. arnes quotes instead, for
where the placeholder stands: outside quotes each word is one `shlex.quote`d word (`$ARGUMENTS`
keeps its words apart, as typed: `--oneline -5` is two), inside "double quotes" the text is
escaped for them (`\\$`, `` \\` ``, `\\"`, `\\\\`), inside 'single quotes' a quote is `'\\''`. Where
the shell would read the text otherwise (backquotes, a here-document, `$'...'`, arithmetic,
`[[ ]]`, a comment, `$(...)` inside double quotes), a value of plain characters (letters, digits,
`_ . / : = @ % + , -`) is put in as it is, and any other value stops the line: the command does
not run, and says why. The gate then judges the line as it will run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

# A command's argument placeholders (placeholders.py counts a skill's from 0), and the plugin's folder.
PLACEHOLDER = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$([1-9][0-9]*)")
PLAIN = re.compile(r"[A-Za-z0-9_./:=@%+,-]*")  # nothing any shell context reads as syntax
_ARITHMETIC = re.compile(r"\(\(|\[\[|\blet\s")


class Unquotable(ValueError):
    """A value with shell characters where arnes cannot tell how the shell reads it."""


@dataclass(frozen=True)
class Value:
    raw: str  # as typed: what a quoted placeholder becomes
    words: tuple[str, ...]  # what an unquoted one becomes, each a word of its own


Lookup = Callable[[re.Match[str]], Value | None]  # None: leave the placeholder as written


def substitute(script: str, lookup: Lookup) -> tuple[str, bool]:
    """`script` with its placeholders put in, and whether it had any; Unquotable to refuse it."""
    out: list[str] = []
    found = False
    unsure = ""  # once the shell's reading of what follows is beyond this scan: why
    double = False
    i = 0
    while i < len(script):
        match = PLACEHOLDER.match(script, i)
        value = lookup(match) if match else None
        if match and value is not None:
            found = True
            after_dollar = bool(out) and out[-1].endswith("$")  # `$$1`: `$` and a quoted word is `$'...'`
            why = unsure or ("right after a $" if after_dollar else "")
            out.append(_put(value, "double" if double else "plain", why, match.group(0)))
            i = match.end()
            continue
        c = script[i]
        if c == "\\":
            out.append(script[i : i + 2])
            i += 2
            continue
        if not double and not unsure:
            if c == "'":
                end = script.find("'", i + 1)
                if end < 0:
                    unsure = "after an unclosed quote"
                else:
                    inner, had = _single(script[i + 1 : end], lookup)
                    found = found or had
                    out.append(f"'{inner}'")
                    i = end + 1
                    continue
            elif c == '"':
                double = True
            else:
                unsure = _tricky(script, i)
        elif double and c == '"':
            double = False
        elif double and (c == "`" or script.startswith(("$(", "${"), i)):
            unsure = unsure or "inside $(...), `...` or ${...} within double quotes"
        out.append(c)
        i += 1
    return "".join(out), found


def _tricky(script: str, i: int) -> str:
    """Why the shell's reading of what follows position `i` (outside quotes) is beyond this scan."""
    c = script[i]
    if c == "`":
        return "inside backquotes"
    if script.startswith("$'", i):
        return "inside $'...'"
    if script.startswith("<<", i) and not script.startswith("<<<", i):
        return "in a here-document"
    if c == "#" and (i == 0 or script[i - 1] in " \t\n;&|()"):
        return "in a comment"
    if _ARITHMETIC.match(script, i) and (i == 0 or not script[i - 1].isalnum()):
        return "in arithmetic or [[ ]]"
    return ""


def _single(text: str, lookup: Lookup) -> tuple[str, bool]:
    """The inside of 'single quotes', its placeholders put in as literal text."""
    found = False

    def put(match: re.Match[str]) -> str:
        nonlocal found
        value = lookup(match)
        if value is None:
            return match.group(0)
        found = True
        return value.raw.replace("'", "'\\''")

    return PLACEHOLDER.sub(put, text), found


def _put(value: Value, context: str, unsure: str, written: str) -> str:
    if unsure:
        if all(PLAIN.fullmatch(w) for w in value.words):
            return " ".join(value.words)
        raise Unquotable(
            f"{written} stands {unsure}, where arnes cannot quote a value safely, and its value has characters "
            "the shell would read; move the placeholder out of there (e.g. into a variable: x=$1) or pass plainer text"
        )
    if context == "double":
        return re.sub(r'([\\$`"])', r"\\\1", value.raw)
    return " ".join(shlex.quote(w) for w in value.words)
