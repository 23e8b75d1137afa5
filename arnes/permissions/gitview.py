"""The vocabulary of judging git by what it shows: what a command would print of files' contents
(`Shows`, made by gitshows.py) and the names-only run of git that lists those files (`Probe`, run
by gitprobe.py). Its own module so both import it from below."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ProbeKind = Literal["diff", "log", "show", "stash", "grep", "object", "blobs", "tree", "index"]
GLOBS = frozenset("*?[")


@dataclass(frozen=True)
class Probe:
    """Ask git which files the command covers: `diff`, `log` and `show` with their own words and a
    names-only format, `stash` the stash's changes, `grep` the files it searches, `tree` the files
    of a tree (`ls-tree`), `index` the files of the index (`ls-files`); `object` and `blobs` only
    check what kind of object a word names."""

    kind: ProbeKind
    args: list[str] = field(default_factory=list)  # the command's words to keep, in order
    verify: list[str] = field(default_factory=list)  # words whose revisions must be commits (blobs for `blobs`)
    stash: str = ""
    names_only: bool = False  # `show -s`: only check that no revision is a file


@dataclass
class Shows:
    """What a git command would print of files' contents."""

    paths: list[str] = field(default_factory=list)  # files it shows, named from the folder it runs in
    tree_paths: list[str] = field(default_factory=list)  # `REV:path`: from the repository's top
    probe: Probe | None = None
    unread: str | None = None  # why arnes cannot tell which files it shows
    writes: list[str] = field(default_factory=list)  # --output
    places: list[str] = field(default_factory=list)  # -C, --git-dir, --work-tree: folders git reads

    @property
    def shows_content(self) -> bool:
        return bool(self.paths or self.tree_paths or self.probe or self.unread)


def tree_path(word: str) -> str | None:
    """The path of a file of a revision, `REV:path`, `:path` (the index), `:N:path`; None for any
    other word. `:/text` names a commit by its message; `:!x`, `:^x`, `:(magic)x` are pathspecs.
    A `:` inside `@{...}` or `^{...}` (a date, a message search) is part of the revision."""
    if word.startswith(":"):
        rest = word[1:]
        if not rest or rest[0] in "/!^(":
            return None
        if len(rest) >= 2 and rest[0] in "0123" and rest[1] == ":":
            rest = rest[2:]
        return rest
    depth = 0
    for i, ch in enumerate(word):
        if ch == "{" and i and word[i - 1] in "@^":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == ":" and not depth:
            return word[i + 1 :]
    return None


def is_plain_path(word: str) -> bool:
    """A pathspec that names a path as written (no magic, no glob): judged like `cat`'s file."""
    return bool(word) and not word.startswith(":") and not GLOBS & set(word) and word != "$?"
