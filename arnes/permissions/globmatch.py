"""Path globs matched in time linear in the path, for rules a backtracking regex would hang on.

A rule is a repository's words: `Read(*a*a*a*a*a*a*a*a*a*a*a*a*b)` against a file named with 60
a's takes Python's `re` longer than the session. The engine keeps joined regexes for the usual
rules (a few stars: fast, and bounded) and gives a rule with more stars to `LinearGlob`, which
runs the glob as a set of positions (a Thompson simulation): O(len(path) x len(glob)), whatever
the glob. Same meaning as rules.py `glob_to_regex`: `*` and `?` stay in a segment, `**/` is any
number of folders, `**` any text, `[...]` a class (never `/`), `\\x` a literal, and what is below a
matching folder matches too.
"""

from __future__ import annotations

from dataclasses import dataclass

# Token kinds
LIT, ONE, CLASS, STAR, ANY, FOLDERS = range(6)
MOST_STARS = 2  # more star runs than this in one rule: LinearGlob, not a regex


@dataclass(frozen=True)
class _Class:
    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]

    def has(self, c: str) -> bool:
        if c == "/":
            return False
        inside = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated


Token = tuple[int, object]


def star_runs(glob: str) -> int:
    """How many runs of `*` a glob holds (an escaped star is not one)."""
    runs, i, prev = 0, 0, False
    while i < len(glob):
        if glob[i] == "\\":
            i, prev = i + 2, False
            continue
        star = glob[i] == "*"
        runs += star and not prev
        prev, i = star, i + 1
    return runs


def needs_linear(glob: str) -> bool:
    """Whether a regex for this glob could take more than linear time on a long path: more than
    MOST_STARS star runs, two `**`, or a `**` that is not a folder step beside another star
    (`**a**b` is quadratic in the path's length, and paths may be 4,000 characters deep)."""
    if glob.endswith("/**"):
        glob = glob[:-3]
    kinds = [kind for kind, _ in tokens(glob, False) if kind in (STAR, ANY, FOLDERS)]
    doubles = sum(kind in (ANY, FOLDERS) for kind in kinds)
    return len(kinds) > MOST_STARS or doubles >= 2 or (ANY in kinds and len(kinds) >= 2)


def _class(body: str, fold: bool) -> _Class:
    negated = body[:1] in ("!", "^")
    body = body[1:] if negated else body
    if fold:
        body = body.casefold()
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            ranges.append((body[i], body[i + 2]))
            i += 3
        else:
            chars.add(body[i])
            i += 1
    return _Class(negated, frozenset(chars), tuple(ranges))


def tokens(glob: str, fold: bool) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out.append((FOLDERS, None))
            i += 3
        elif glob.startswith("**", i):
            out.append((ANY, None))
            i += 2
        elif glob[i] == "*":
            out.append((STAR, None))
            i += 1
        elif glob[i] == "?":
            out.append((ONE, None))
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            out.append((CLASS, _class(glob[i + 1 : end].replace("/", ""), fold)))
            i = end + 1
        elif glob[i] == "\\" and i + 1 < n:
            out.append((LIT, glob[i + 1].casefold() if fold else glob[i + 1]))
            i += 2
        else:
            out.append((LIT, glob[i].casefold() if fold else glob[i]))
            i += 1
    return out


class LinearGlob:
    """`match(path)`: whether the absolute glob covers `path` (or a folder above it)."""

    def __init__(self, absolute_glob: str, ignore_case: bool):
        glob = absolute_glob
        if glob.endswith("/**"):  # `dir/**` covers the folder itself too
            glob = glob[:-3]
        self.fold = ignore_case
        self.tokens = tokens(glob, ignore_case)
        self.pattern = absolute_glob  # for messages
        self._steps: dict[tuple[frozenset[int], str], tuple[frozenset[int], bool]] = {}  # a lazy DFA

    def _closure(self, states: set[int]) -> set[int]:
        todo, seen = list(states), set(states)
        while todo:
            i = todo.pop()
            if 0 <= i < len(self.tokens) and self.tokens[i][0] in (STAR, ANY, FOLDERS) and i + 1 not in seen:
                seen.add(i + 1)
                todo.append(i + 1)
        return seen

    def match(self, path: str) -> bool:
        text = path.casefold() if self.fold else path
        states = frozenset(self._closure({0}))
        for c in text:
            key = (states, c)
            if key not in self._steps:
                if len(self._steps) > 20_000:  # a bound on the memory it keeps
                    self._steps.clear()
                self._steps[key] = self._step(states, c)
            states, below = self._steps[key]
            if below:
                return True
            if not states:
                return False
        return len(self.tokens) in states

    def _step(self, states: frozenset[int], c: str) -> tuple[frozenset[int], bool]:
        """The states after `c`, and whether `c` is a `/` past a full match (below a matching folder)."""
        end = len(self.tokens)
        below = False
        moved: set[int] = set()
        for i in states:
            if i < 0:  # inside a `**/`: any text, done at a `/`
                moved.add(i)
                if c == "/":
                    moved.add(-i)
                continue
            if i == end:
                below = below or c == "/"
                continue
            kind, arg = self.tokens[i]
            if _steps(kind, arg, c):
                moved.add(i + 1)
            elif (kind == STAR and c != "/") or kind == ANY:
                moved.add(i)
            elif kind == FOLDERS:  # `(?:[^/]*/)*`: empty (the closure), or text that ends at a `/`
                moved.add(-(i + 1))
                if c == "/":
                    moved.add(i + 1)
        return frozenset(self._closure(moved)), below


def _steps(kind: int, arg: object, c: str) -> bool:
    """Whether a one-character token takes `c`."""
    if kind == LIT:
        return arg == c
    if kind == ONE:
        return c != "/"
    return kind == CLASS and isinstance(arg, _Class) and arg.has(c)
