"""Permission rules `Tool` or `Tool(specifier)`, parsed strictly: a typo must not become a no-op."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

RuleKind = Literal["allow", "ask", "deny"]
KNOWN_TOOLS = (
    "Read", "Glob", "Grep", "Write", "Edit", "ReadDoc", "Bash", "BashOutput", "KillShell", "Delegate", "LSP",
    "TodoWrite", "NotebookEdit", "ExitPlanMode", "ListMcpResourcesTool", "ReadMcpResourceTool",
)  # fmt: skip
# mcp__NAME (every tool of a server), mcp__NAME__TOOL, mcp__NAME__* (DESIGN §13); no specifier.
MCP_RULE = re.compile(r"^mcp__[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*(?:__(?:\*|[A-Za-z0-9_-]+))?$")
_RULE = re.compile(r"^(?P<tool>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be parsed; the message says why and how to write it."""


@dataclass(frozen=True)
class SourcedRule:
    """A rule with the list it is in and where it came from ("session", "flag" or a settings file)."""

    kind: RuleKind
    rule: str
    source: str


@dataclass(frozen=True)
class Rule:
    tool: str
    specifier: str | None
    raw: str

    def __str__(self) -> str:
        return self.raw


def parse_rule(raw: str) -> Rule:
    text = raw.strip()
    if text.startswith("mcp__"):
        if not MCP_RULE.match(text):
            raise RuleError(
                f"{raw!r} is not an MCP rule; write mcp__SERVER, mcp__SERVER__TOOL or mcp__SERVER__* "
                "(no parentheses: an MCP rule covers whole calls)"
            )
        return Rule(text, None, text)
    match = _RULE.match(text)
    if not match:
        raise RuleError(f"{raw!r} is not a rule; write Tool or Tool(specifier), e.g. Read(**/.env*)")
    tool, spec = match.group("tool"), match.group("spec")
    if tool not in KNOWN_TOOLS:
        raise RuleError(f"{raw!r} names an unknown tool {tool!r}; tools are {', '.join(KNOWN_TOOLS)}")
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise RuleError(f"{raw!r} has an empty specifier; write {tool} alone to cover every call")
        if spec.count("(") != spec.count(")"):
            raise RuleError(f"{raw!r} has unbalanced parentheses")
        if tool == "Bash":
            if spec == "*":  # Claude Code: Bash(*) is Bash, every command
                return Rule(tool, None, text)
            CommandPattern.parse(spec)
    return Rule(tool, spec, text)


def glob_to_regex(pattern: str) -> str:
    """Gitignore-style glob -> regex body: `*` stays within a segment, `**` crosses `/`.

    The result also matches anything below a matching folder, so `secrets` and `secrets/**`
    both cover `secrets/key.pem`, and a folder rule covers every file in it.
    """
    if pattern.endswith("/**"):  # `dir/**` covers the folder itself too: nothing inside is searchable
        pattern = pattern[:-3]
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape("["))
                i += 1
                continue
            body = pattern[i + 1 : end].replace("\\", "\\\\").replace("/", "")
            if body.startswith(("!", "^")):  # a negated class matches no `/` either: it stays in a segment
                body = "^/" + body[1:]
            out.append("[" + body + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out) + "(?:/.*)?"


def anchor(specifier: str, workspace: str, home: str) -> str:
    """The absolute glob a path specifier stands for: relative ones at the workspace root."""
    spec = specifier.rstrip("/") or "/"
    if spec.startswith("~/") or spec == "~":
        return home.rstrip("/") + spec[1:]
    if spec.startswith("/"):
        return spec
    if spec.startswith("./"):
        spec = spec[2:]
    return workspace.rstrip("/") + "/" + spec


def path_regex(specifier: str, workspace: str, home: str) -> str:
    absolute_glob = anchor(specifier, workspace, home)
    body = glob_to_regex(absolute_glob.lstrip("/"))
    return "/" + body


@dataclass(frozen=True)
class CommandPattern:
    """A Bash specifier, as Claude Code reads it: `npm test` (exactly that), `git commit:*` (that
    prefix, at a word boundary), or a pattern with `*` anywhere (`npm run *`, `git * main`,
    `* --version`): `*` stands for any text, and a trailing ` *` may also stand for nothing, so
    `ls *` matches `ls` and `ls -la` but not `lsof`. `\\*` is a literal star."""

    words: tuple[str, ...]
    prefix: bool
    glob: str | None = None  # the specifier, when it holds a wildcard

    @classmethod
    def parse(cls, specifier: str) -> CommandPattern:
        prefix = specifier.endswith(":*")
        body = specifier[:-2] if prefix else specifier
        if ":*" in body:
            raise RuleError(f"Bash({specifier}): `:*` works only at the end; write `*` where any text may stand")
        glob = specifier if not prefix and _has_wildcard(body) else None
        try:
            words = tuple(shlex.split(body.replace("\\*", "*"))) if glob is None else _glob_words(body)
        except ValueError as exc:
            raise RuleError(f"Bash({specifier}) is not a command: {exc}") from exc
        if not words or (glob is not None and not glob.strip(" *")):
            raise RuleError(f"Bash({specifier}) names no command (write Bash alone to cover every command)")
        return cls(words, prefix, glob)

    @property
    def name(self) -> str:
        """The command this rule is about, or `*` when its first word holds a wildcard."""
        first = self.words[0]
        return "*" if self.glob is not None and "*" in first.replace("\\*", "") else first

    def allows(self, words: list[str]) -> bool:
        """Strict: the same words in the same order (an allow is never widened); a wildcard
        rule matches the command's words joined by one space, as Claude Code matches its text."""
        if self.glob is not None:
            return self._literal.fullmatch(" ".join(words))
        n = len(self.words)
        return tuple(words[:n]) == self.words and (self.prefix or len(words) == n)

    def denies(self, words: list[str]) -> bool:
        """Generous: the rule's plain words lead the command and its flags appear anywhere,
        however they are ordered or bundled (`rm -rf`, `rm -fr`, `rm -r -f` alike)."""
        return bool(words) and self.denies_split(split_command(words), words)

    @cached_property
    def _wanted(self) -> tuple[list[str], set[str]]:
        if self.glob is not None:  # the literal flags must all appear; the rest is a glob of plain words
            plain, flags = _split_flags(list(self.words))
            return plain, {f for f in flags if "*" not in f}
        return _split_flags(_canonical(list(self.words)))

    @cached_property
    def _literal(self) -> _Glob:
        return _glob_regex(self.glob or "")

    @cached_property
    def _plain(self) -> _Glob:
        return _glob_regex(" ".join(self._wanted[0]))

    def denies_split(self, command: tuple[list[str], set[str]], words: list[str] | None = None) -> bool:
        """`denies` on a command already split by `split_command` (once for all the rules). A
        wildcard rule denies what it matches as written, and also the command with its flags in
        any order or bundle: `rm -rf *` denies `rm -fr build` and `/bin/rm -r -f build`."""
        want_plain, want_flags = self._wanted
        plain, flags = command
        if self.glob is not None:
            if words is not None and self._literal.fullmatch(" ".join(words)):
                return True
            return want_flags <= flags and self._plain.fullmatch(" ".join(plain))
        if self.prefix or want_flags:
            return plain[: len(want_plain)] == want_plain and want_flags <= flags
        return plain == want_plain and not flags


def _has_wildcard(body: str) -> bool:
    return "*" in body.replace("\\*", "")


def _glob_words(body: str) -> tuple[str, ...]:
    """A wildcard specifier's words: split at spaces (quotes kept as written, like Claude Code)."""
    return tuple(word for word in body.split(" ") if word)


@dataclass(frozen=True)
class _Glob:
    """A `*` glob matched in linear time, never by a backtracking regex (a rule is a repository's
    words: `*a*a*a*...b` against a long command must not hang the gate)."""

    pieces: tuple[str, ...]  # the literal text between the stars
    short: tuple[str, ...] | None = None  # the glob without its trailing ` *`, which may be nothing

    def fullmatch(self, text: str) -> bool:
        return _glob_fits(self.pieces, text) or (self.short is not None and _glob_fits(self.short, text))


def _glob_fits(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` is pieces[0] * pieces[1] * ... pieces[-1]: for a glob of `*` alone, the
    leftmost fit of each middle piece is always a right one, so one pass decides."""
    if len(pieces) == 1:
        return text == pieces[0]
    head, *middle, tail = pieces
    if len(text) < len(head) + len(tail) or not text.startswith(head) or not text.endswith(tail):
        return False
    at, end = len(head), len(text) - len(tail)
    for piece in middle:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _glob_regex(glob: str) -> _Glob:
    """`*` any text (`\\*` a star); a trailing ` *` may also be nothing; spaces match one space."""
    star = "\0"  # an escaped star, kept out of the split
    body = " ".join(glob.split()).replace("\\*", star)

    def pieces(text: str) -> tuple[str, ...]:
        return tuple(p.replace(star, "*") for p in text.split("*"))

    return _Glob(pieces(body), pieces(body[:-2]) if body.endswith(" *") else None)


def split_command(words: list[str]) -> tuple[list[str], set[str]]:
    """A command as deny rules see it: its name without a folder, global options dropped, and
    its words parted into plain words and single flags, each flag by its one name."""
    return _split_flags(_canonical([words[0].rsplit("/", 1)[-1], *words[1:]]))


# Flags that are one flag by several names (`rm -R`, `-r`, `--recursive`): a deny rule written
# with one name denies the others. Deny generously; an allow is never widened by this.
FLAG_NAMES: dict[str, dict[str, str]] = {
    "rm": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d", "--interactive": "-i"},
    "cp": {"-R": "-r", "--recursive": "-r", "--force": "-f"},
    "mv": {"--force": "-f"},
    "ln": {"--force": "-f", "--symbolic": "-s"},
    "chmod": {"--recursive": "-R"},
    "chown": {"--recursive": "-R"},
    "chgrp": {"--recursive": "-R"},
    "git": {"--force": "-f"},
}


# Options before a subcommand that take a value: dropped so `git -C . push` is still `git push`.
GLOBAL_OPTIONS = {"git": {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}}


def _canonical(words: list[str]) -> list[str]:
    options = GLOBAL_OPTIONS.get(words[0]) if words else None
    if not options:
        return words
    out, i = [words[0]], 1
    while i < len(words) and words[i].startswith("-"):
        key = words[i].split("=", 1)[0]
        if key in options and "=" not in words[i]:
            i += 2
            continue
        i += 1  # a flag without a value (--no-pager, --bare, ...) or --opt=value
    return out + words[i:]


def _split_flags(words: list[str]) -> tuple[list[str], set[str]]:
    plain: list[str] = []
    flags: set[str] = set()
    for word in words:
        if word.startswith("--") and len(word) > 2:
            flags.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1 and not word[1:].isdigit():
            flags.update(f"-{ch}" for ch in word[1:])
        else:
            plain.append(word)
    names = FLAG_NAMES.get(words[0].rsplit("/", 1)[-1] if words else "", {})
    return plain, {names.get(flag, flag) for flag in flags}
