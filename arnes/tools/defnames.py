"""The top-level names a file defines (a document's headings), to notice a Write that throws most away.

A small model asked to add a function to a file Writes a file holding only the new function
(Qwen2.5-Coder-1.5B dropped `title_case` from text.py to add `slugify`). Comparing the names
defined at the top level before and after is cheap and language-light: a few line patterns.
"""

from __future__ import annotations

import re

_PATTERNS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)|^class[ \t]+(\w+)", re.MULTILINE),
    "js": re.compile(
        r"^(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function[ \t]*\*?[ \t]*(\w+)"
        r"|^(?:export[ \t]+)?(?:default[ \t]+)?class[ \t]+(\w+)"
        r"|^(?:export[ \t]+)?(?:const|let|var)[ \t]+(\w+)[ \t]*=[ \t]*(?:async[ \t]*)?(?:\(|function)",
        re.MULTILINE,
    ),
    "go": re.compile(r"^func[ \t]+(?:\([^)]*\)[ \t]*)?(\w+)|^type[ \t]+(\w+)", re.MULTILINE),
    "rust": re.compile(
        r"^(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+)?(?:fn|struct|enum|trait)[ \t]+(\w+)", re.MULTILINE
    ),
    "ruby": re.compile(r"^(?:def|class|module)[ \t]+([\w.]+)", re.MULTILINE),
}
# A document's headings are its names: a small model rewrote a README without its `# app`. The
# heading is kept whole (`# app`), and a fenced block's `# comment` is not one (see below). Read
# line by line: one pattern for the whole heading (`^(#+[ \t]+\S.*?)[ \t]*#*[ \t]*$`) backtracked
# cubically on `# a`, thousands of spaces and a letter (a repository's README took minutes).
_HEADING = re.compile(r"#{1,6}[ \t]+\S")
_LANGUAGE = {
    ".py": "python", ".pyi": "python", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "js",
    ".ts": "js", ".tsx": "js", ".go": "go", ".rs": "rust", ".rb": "ruby",
    ".md": "markdown", ".markdown": "markdown",
}  # fmt: skip


def defined_names(text: str, suffix: str) -> list[str] | None:
    """The names defined at the top level, in order; None when the file is not code we read."""
    language = _LANGUAGE.get(suffix.lower(), "")
    if language == "markdown":
        return list(dict.fromkeys(_headings(text)))
    pattern = _PATTERNS.get(language)
    if pattern is None:
        return None
    names: list[str] = []
    for match in pattern.finditer(text):
        name = next((g for g in match.groups() if g), None)
        if name and name not in names:
            names.append(name)
    return names


def _headings(text: str) -> list[str]:
    """`# Title` for each heading line outside fenced blocks, without closing hashes and blanks."""
    found = []
    fence = ""
    for line in text.split("\n"):
        if fence:
            if line.startswith(fence) and not line[len(fence) :].strip(" \t"):
                fence = ""
            continue
        if line.startswith(("```", "~~~")):
            fence = line[:3]  # a fenced block's `# comment` is not a heading; unclosed, it runs to the end
            continue
        start = _HEADING.match(line)
        if start is None:
            continue
        whole = line.rstrip(" \t")
        bare = whole.rstrip("#").rstrip(" \t")
        found.append(bare if len(bare) >= start.end() else whole[: start.end()])
    return found


def dropped_names(before: str, after: str, suffix: str) -> list[str]:
    """The names a rewrite drops, when it drops most of them (half or more); else []."""
    old = defined_names(before, suffix)
    if not old:
        return []
    new = set(defined_names(after, suffix) or [])
    gone = [name for name in old if name not in new]
    return gone if gone and 2 * len(gone) >= len(old) else []
