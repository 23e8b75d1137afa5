"""The `paths:` globs of Claude Code's rule files, matched as Claude Code matches them.

A glob is matched against a file's path relative to the workspace, with `/` between folders:
`*` is any run of characters but `/`, `?` one of them, `[abc]` a class (`[!abc]` its opposite,
`[a-z]` a range), `**` any number of folders (`src/**/*.ts` matches `src/a.ts` and
`src/x/y/a.ts`), and `{ts,tsx}` the alternatives, nested as needed. `*.md` matches at the top
only: `**/*.md` is at any depth. A leading `./` or `/` means the workspace itself. No library here
does this (fnmatch lets `*` cross folders and knows no braces), and the rules are small enough to
write down.

The repository writes these globs and every Read is matched against them, so matching must not be
a place to stop arnes. A rule's globs are compiled when it is read (`Globs.of`; one that cannot be
is a `GlobError` and the rule is left out) into one automaton that is run over all its states at
once, a few integer operations per character of the path (bit-parallel, as in grep's shift-and):
nothing backtracks, so `*a*a*a…c` costs what `*.md` costs, and a match takes time linear in the
path. A glob is at most MAX_CHARS long and opens at most MAX_ALTERNATIVES alternatives; what a
match costs grows with `Globs.weight`, and agent/instructions.py caps the weight of a session's rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

MAX_CHARS = 256  # one written glob
MAX_ALTERNATIVES = 256  # `{a,b}{c,d}...` grows fast: a rule file cannot make every Read slow
MAX_WEIGHT = 512  # `Globs.weight` of all the rules of a session (real ones weigh a few each)


class GlobError(ValueError):
    """A glob that cannot be compiled; the message says what to fix."""


def expand_braces(pattern: str) -> list[str]:
    """`src/**/*.{ts,tsx}` -> [`src/**/*.ts`, `src/**/*.tsx`]; a brace without a comma is itself.
    More than MAX_ALTERNATIVES is a GlobError."""
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
            raise GlobError(f"its braces make more than {MAX_ALTERNATIVES} alternatives")
    return out


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


@dataclass(frozen=True)
class _Class:
    """`[...]`: its characters and ranges, or (`negate`) everything else; never `/`."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    negate: bool

    def has(self, char: str) -> bool:
        inside = char in self.chars or any(low <= char <= high for low, high in self.ranges)
        return char != "/" and inside != self.negate


@dataclass(frozen=True)
class Automaton:
    """Brace-free globs side by side as one automaton over their tokens: a set bit of a state is
    "a glob's tokens before this one have matched". Each glob has a bit where it starts and one
    past its last token where it has matched whole (nothing leads on from there to the next
    glob's tokens). Each kind of token is a mask of the bits it sits at."""

    start: int
    accept: int
    literal: dict[str, int]  # a character: the tokens that are that character
    one: int  # `?`: one character but `/`
    classes: tuple[tuple[_Class, int], ...]  # `[...]`, each at its bit
    star: int  # `*`: any run of characters but `/` (none too)
    any: int  # `**` at the end: any run of characters (none too)
    entry: int  # `**/` is four tokens, `(?:[^/]+/)*`: an entry that matches no character, from
    back: int  # which no folder skips past the rest (`? * /`), and the bit after them leads back to it

    def match(self, path: str) -> bool:
        state = self._close(self.start)
        by_class: dict[str, int] = {}
        for char in path:
            if not state:
                return False
            ones = self.literal.get(char, 0)
            loops = self.any
            if char != "/":
                if char not in by_class:
                    by_class[char] = sum(bit for cls, bit in self.classes if cls.has(char))
                ones |= self.one | by_class[char]
                loops |= self.star
            state = self._close(((state & ones) << 1) | (state & loops))
        return bool(state & self.accept)

    def _close(self, state: int) -> int:
        """Add the states reached without a character: past a `*` or `**` that matches nothing."""
        while True:  # a few rounds: the compiler puts no two `*` nor two `**/` in a row
            skip = state & (self.star | self.any | self.entry)
            more = state | skip << 1 | (state & self.entry) << 4 | (state & self.back) >> 4
            if more == state:
                return state
            state = more


def compile_globs(patterns: Iterable[str]) -> Automaton:
    """Brace-free globs (the caller expands braces); GlobError when a class cannot be read."""
    bits = _Bits()
    for pattern in patterns:
        _compile_into(bits, pattern)
    return bits.automaton()


def _compile_into(bits: _Bits, pattern: str) -> None:
    glob = pattern.removeprefix("./").lstrip("/")
    bits.begin()
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            after = glob[i + 2 : i + 3]
            if at_start and after == "/":
                bits.folders()  # `**/`: no folder, or any number of them
                i += 3
            elif at_start and after == "":
                bits.add("any")  # `dir/**`: everything under it
                i += 2
            else:
                bits.add("star")  # `a**b` is `a*b`
                i += 2
        elif char == "*":
            bits.add("star")
            i += 1
        elif char == "?":
            bits.add("one")
            i += 1
        elif char == "[" and (close := _class_end(glob, i)) is not None:
            bits.add_class(_class(glob[i + 1 : close]))
            i = close + 1
        else:
            bits.add_literal(char)
            i += 1
    bits.end()


def _class_end(glob: str, start: int) -> int | None:
    """Where `[...]` opened at `start` closes (a `]` first in the class is part of it), or None."""
    i = start + 1
    if glob[i : i + 1] in ("!", "^"):
        i += 1
    if glob[i : i + 1] == "]":
        i += 1
    close = glob.find("]", i)
    return None if close < 0 or "/" in glob[start:close] else close


def _class(body: str) -> _Class:
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if low > high:
                raise GlobError(f"the class range {low}-{high} runs backwards (write {high}-{low})")
            ranges.append((low, high))
            i += 3
        else:
            chars.add(body[i])
            i += 1
    return _Class(frozenset(chars), tuple(ranges), negate)


class _Bits:
    """The masks of globs being compiled, one token at a time."""

    def __init__(self) -> None:
        self.size = 0
        self.literal: dict[str, int] = {}
        self.kinds: dict[str, int] = {"start": 0, "accept": 0, "one": 0, "star": 0, "any": 0, "entry": 0, "back": 0}
        self.classes: list[tuple[_Class, int]] = []
        self.last = ""  # the kind of the token before: `**` after `*` adds nothing

    def begin(self) -> None:
        self.kinds["start"] |= 1 << self.size
        self.last = ""

    def end(self) -> None:
        self.kinds["accept"] |= 1 << self.size
        self.size += 1  # a bit no token sits at: nothing shifts from one glob into the next

    def add(self, kind: str) -> None:
        if kind == "star" and self.last == "star":
            return
        self.kinds[kind] |= 1 << self.size
        self._next(kind)

    def folders(self) -> None:
        if self.last == "folders":  # `**/**/` is `**/`
            return
        self.add("entry")
        self.add("one")
        self.add("star")
        self.add_literal("/")
        self.kinds["back"] |= 1 << self.size
        self.last = "folders"

    def add_literal(self, char: str) -> None:
        self.literal[char] = self.literal.get(char, 0) | 1 << self.size
        self._next("literal")

    def add_class(self, cls: _Class) -> None:
        self.classes.append((cls, 1 << self.size))
        self._next("class")

    def _next(self, kind: str) -> None:
        self.size += 1
        self.last = kind

    def automaton(self) -> Automaton:
        k = self.kinds
        masks = (k["one"], tuple(self.classes), k["star"], k["any"], k["entry"], k["back"])
        return Automaton(k["start"], k["accept"], self.literal, *masks)


@dataclass(frozen=True)
class Globs:
    """A rule's globs, compiled once (when the rule is read), matched on every file tool call."""

    written: tuple[str, ...]
    alternatives: int  # after braces are expanded
    automaton: Automaton

    @classmethod
    def of(cls, globs: Iterable[str]) -> Globs:
        """GlobError (naming the glob) when one is too long, opens too many alternatives or has a bad class."""
        written = tuple(globs)
        expanded: list[str] = []
        for glob in written:
            if len(glob) > MAX_CHARS:
                raise GlobError(f"the glob {glob[:40]!r}... is longer than {MAX_CHARS} characters")
            try:
                mine = expand_braces(glob)
                compile_globs(mine)  # each glob on its own first: an error names it
            except GlobError as exc:
                raise GlobError(f"the glob {glob!r}: {exc}") from None
            expanded += mine
        return cls(written, len(expanded), compile_globs(expanded))

    @property
    def weight(self) -> int:
        """What a match costs per character of the path: one per alternative and one per class."""
        return self.alternatives + len(self.automaton.classes)

    def match(self, rel: str) -> bool:
        """Whether the workspace-relative path `rel` is one these globs name."""
        return self.automaton.match(rel.replace("\\", "/").removeprefix("./"))


def matches(globs: Iterable[str], rel: str) -> bool:
    """`Globs.of(globs).match(rel)`, for a glob read once (a rule compiles its globs when read)."""
    return Globs.of(globs).match(rel)
