"""How a shell command's words are judged as paths: the seam to the rule engine (`CommandRules`)
and the reads and writes of one word from one folder, as the kernel will open it. Shared by the
command judge (commands.py) and git's (gitjudge.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from arnes.permissions.readonly import COMPUTED
from arnes.permissions.rules import CommandPattern, Rule, RuleKind
from arnes.permissions.types import Access, Decision, Mode, Target

GLOB_CHARS = set("*?[{")


class RuleHit(Protocol):
    """The Bash rule a command part matched, as the engine found it."""

    @property
    def kind(self) -> RuleKind: ...
    @property
    def rule(self) -> Rule: ...
    @property
    def origin(self) -> str: ...
    @property
    def command(self) -> CommandPattern | None: ...


class CommandRules(Protocol):
    """What judging a command asks of the rule engine (engine.py's `RuleEngine`). A protocol, so
    the engine calls this judge and the judge never imports the engine back."""

    @property
    def workspace(self) -> Path: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def home(self) -> Path: ...
    @property
    def sandboxed(self) -> bool: ...
    def command_rule(self, kind: RuleKind, words: list[str]) -> RuleHit | None: ...
    def has_read_rules(self) -> bool: ...
    def has_command_denies(self) -> bool: ...
    def target(self, tool: str, target: Target, mode: Mode | None = None) -> Decision: ...


def expand_tilde(word: str, cwd: Path, home: Path) -> str | None:
    """Tilde expansion as bash does it: `~` $HOME, `~+` $PWD, `~user` that user's home; `~-`
    ($OLDPWD) is unknown here."""
    if not word.startswith("~"):
        return word
    head, sep, rest = word.partition("/")
    if head == "~":
        return str(home) + sep + rest
    if head == "~+":
        return str(cwd) + sep + rest
    if head == "~-":
        return None
    return os.path.expanduser(word)


def path_target(engine: CommandRules, folder: Path, arg: str, access: Access) -> Target | None:
    """The path a command's word names, from `folder`, as the kernel will open it (None: unknown)."""
    expanded = expand_tilde(arg, folder, engine.home)
    if expanded is None:
        return None
    joined = os.path.join(folder, expanded)
    # `..` after a link is resolved as the kernel does (physically); without `..` the engine's
    # own resolution below the workspace gives the same answer, faster
    real = Path(os.path.realpath(joined)) if ".." in expanded else None
    return Target(Path(os.path.normpath(joined)), access, real=real)


def judge(engine: CommandRules, folder: Path, arg: str, access: Access, mode: Mode) -> Decision:
    target = path_target(engine, folder, arg, access)
    if target is None:
        return Decision("ask", f"{arg!r} names a folder only known when it runs", "mode")
    return engine.target("Bash", target, mode)


def read(engine: CommandRules, folder: Path, arg: str, mode: Mode) -> Decision:
    if arg == COMPUTED or "$" in arg:
        return Decision("ask", "reads a path only known when it runs", "mode")
    if "{" in arg:
        return Decision("ask", f"{arg!r} expands to paths nobody has seen yet", "mode")
    if GLOB_CHARS & set(arg):
        if engine.has_read_rules():
            return Decision("ask", f"{arg!r} may match a file a Read rule hides", "rule")
        arg = fixed_folder(arg)
    decision = judge(engine, folder, arg or ".", "read", mode)
    if decision.kind == "allow" and decision.source != "rule":
        return Decision("allow", decision.reason, decision.source)
    return decision


def listed(engine: CommandRules, folder: Path, pattern: str, mode: Mode) -> Decision:
    """A pattern the shell expands lists the folder it stays in, whatever the program (`echo
    /srv/*`, `for f in ~/*`): a read of that folder, judged like `ls` of it."""
    if pattern == COMPUTED or "$" in pattern:
        return Decision("ask", f"{pattern!r} lists a folder only known when it runs", "mode")
    decision = judge(engine, folder, fixed_folder(pattern), "read", mode)
    if decision.kind == "allow" and decision.source != "rule":
        return Decision("allow", decision.reason, decision.source)
    return decision


def fixed_folder(pattern: str) -> str:
    """The folder a glob cannot leave: `/e*/passwd` stays under `/`, `src/*.py` under `src`."""
    cut = min((i for i, ch in enumerate(pattern) if ch in GLOB_CHARS), default=len(pattern))
    prefix = pattern[:cut]
    if "/" not in prefix:
        return "/" if pattern.startswith("/") else "."
    return prefix.rsplit("/", 1)[0] or "/"
