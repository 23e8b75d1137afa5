"""The `paths:` globs of Claude Code's rule files, matched as Claude Code matches them.

A glob is matched against a file's path relative to the workspace, with `/` between folders:
`*` is any run of characters but `/`, `?` one of them, `[abc]` a class (`[!abc]` its opposite),
`**` any number of folders (`src/**/*.ts` matches `src/a.ts` and `src/x/y/a.ts`), and `{ts,tsx}`
the alternatives, nested as needed. `*.md` matches at the top only: `**/*.md` is at any depth.
A leading `./` or `/` means the workspace itself. No library here does this (fnmatch lets `*`
cross folders and knows no braces), and the rules are small enough to write down.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

MAX_ALTERNATIVES = 256  # `{a,b}{c,d}...` grows fast: a rule file cannot make every Read slow


def expand_braces(pattern: str) -> list[str]:
    """`src/**/*.{ts,tsx}` -> [`src/**/*.ts`, `src/**/*.tsx`]; a brace without a comma is itself."""
    out: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop(0)
        found = _first_group(current)
        if found is None:
            out.append(current)
        else:
            start, end, options = found
            todo[:0] = [current[:start] + option + current[end + 1 :] for option in options]
        if len(out) + len(todo) > MAX_ALTERNATIVES:
            break
    return out[:MAX_ALTERNATIVES]


def _first_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first `{...}` with a comma at its own level: where it starts, ends, and its options."""
    for start, char in enumerate(pattern):
        if char != "{":
            continue
        depth, commas = 0, [start]
        for end in range(start, len(pattern)):
            if pattern[end] == "{":
                depth += 1
            elif pattern[end] == "}":
                depth -= 1
                if depth == 0:
                    if len(commas) == 1:
                        break  # `{x}`: no alternatives, a literal brace
                    bounds = [*commas, end]
                    return start, end, [pattern[a + 1 : b] for a, b in pairwise(bounds)]
            elif pattern[end] == "," and depth == 1:
                commas.append(end)
    return None


def compile_glob(pattern: str) -> re.Pattern[str]:
    """One brace-free glob as a regular expression over the whole relative path (`re` caches it)."""
    glob = pattern.removeprefix("./").lstrip("/")
    parts: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            after = glob[i + 2 : i + 3]
            if at_start and after == "/":
                parts.append("(?:[^/]+/)*")  # `**/`: no folder, or any number of them
                i += 3
                continue
            if at_start and after == "":
                parts.append(".*")  # `dir/**`: everything under it
                i += 2
                continue
            parts.append("[^/]*")  # `a**b` is `a*b`
            i += 2
        elif char == "*":
            parts.append("[^/]*")
            i += 1
        elif char == "?":
            parts.append("[^/]")
            i += 1
        elif char == "[" and (close := _class_end(glob, i)) is not None:
            body = glob[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            parts.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = close + 1
        else:
            parts.append(re.escape(char))
            i += 1
    return re.compile("".join(parts), re.DOTALL)


def _class_end(glob: str, start: int) -> int | None:
    """Where `[...]` opened at `start` closes (a `]` first in the class is part of it), or None."""
    i = start + 1
    if glob[i : i + 1] in ("!", "^"):
        i += 1
    if glob[i : i + 1] == "]":
        i += 1
    close = glob.find("]", i)
    return None if close < 0 or "/" in glob[start:close] else close


def matches(globs: Iterable[str], rel: str) -> bool:
    """Whether the workspace-relative path `rel` is one any of `globs` names."""
    path = rel.replace("\\", "/").removeprefix("./")
    return any(compile_glob(one).fullmatch(path) for glob in globs for one in expand_braces(glob))
