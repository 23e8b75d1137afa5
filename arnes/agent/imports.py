"""The `@path` imports a CLAUDE.md or AGENTS.md names, found the way Claude Code finds them.

Claude Code's rule (its memory docs): `@path/to/file` anywhere in the text, relative to the importing
file, `~/` for the home folder, imported files may import in turn up to 5 hops, and nothing inside
a Markdown code span or code block counts (`@decorator` in a snippet is code, not an import).
Only the text is read here; which of those files may be read is agent/instruction_files.py's job.
"""

from __future__ import annotations

import re

MAX_DEPTH = 5  # hops from the file arnes found to the deepest import it reads
# `@` at the start of a line or after a blank; a path runs to the next blank (`\ ` escapes one).
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A code span: a run of backticks, then text up to a run of the same length, within a paragraph.
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.DOTALL)
_TRAILING = ".,;:!?)]}\"'"  # sentence punctuation after a path ("see @README.md.")
_STARTS = re.compile(r"^(~/|[A-Za-z0-9_./])")


def prose(text: str) -> str:
    """`text` with fenced code blocks and code spans blanked out (newlines kept)."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence = opened.group(1)
                lines.append(_blank(line))
            else:
                lines.append(line)
            continue
        body = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if indent <= 3 and len(body) >= len(fence) and set(body) == {fence[0]}:
            fence = None
        lines.append(_blank(line))
    return _SPAN.sub(lambda m: _blank(m.group(0)), "".join(lines))


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def import_paths(text: str) -> list[str]:
    """The paths `text` imports, in order, each once, as written (`~/` not yet expanded)."""
    found: list[str] = []
    for match in _IMPORT.finditer(prose(text)):
        path = match.group(1).replace("\\ ", " ").split("#", 1)[0].rstrip(_TRAILING)
        if path and _STARTS.match(path) and path not in found:
            found.append(path)
    return found
