"""Which git commands arnes runs on the host instead of in the sandbox (docs/shell.md, "git").

Inside bubblewrap the workspace's `.git` is read-only, and must stay so (docs/redteam/git-writable.md),
so `git add` and `git commit` fail there. A few state-writing commands are run on the host instead,
through host/git.py's runner, which keeps every program the repository could name out
(tools/hostgit.py). Which commands may take that route is read here from the parsed command, and
strictly: the whole line is one plain `git` command (no list, pipe, `&`, redirection, variable in
front, wrapper, global option, word computed when it runs or `~` bash would expand), with a
subcommand below and only the options listed for it, spelled out in full (git's abbreviations of
long options are not taken). Anything else is None and runs in the sandbox as it always did.

The commands change the index, HEAD and refs, never a file of the working tree: `restore` only
with `--staged`, `rm` only with `--cached`, `reset` only the index (to HEAD), and a new branch only
at HEAD (`switch -c NAME`, `checkout -b NAME`; `git branch NAME START` only makes the ref).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from arnes.permissions.programs import COMPUTED
from arnes.permissions.shell import ShellAnalysis, analyse

# none: reads no file of the working tree; tracked: may store changed tracked files (`add -u`,
# `commit -a`, `commit PATHS`); new: untracked ones too (`add`).
Scan = Literal["none", "tracked", "new"]


@dataclass(frozen=True)
class HostGit:
    """A git command that runs on the host: its words from the subcommand on, and which files of
    the working tree it may store in the repository (under `pathspecs`; none: the whole tree)."""

    args: tuple[str, ...]
    scans: Scan = "none"
    pathspecs: tuple[str, ...] = ()

    @property
    def subcommand(self) -> str:
        return self.args[0]


def host_git(command: str) -> HostGit | None:
    return host_git_of(analyse(command))


def host_git_of(analysis: ShellAnalysis) -> HostGit | None:
    """The command as the host route runs it, or None when it is not one of those (it then runs
    in the sandbox)."""
    if analysis.error or analysis.opaque or not analysis.simple or len(analysis.commands) != 1:
        return None
    if analysis.writes or analysis.reads or analysis.patterns or analysis.changes_directory:
        return None
    cmd = analysis.commands[0]
    if cmd.words[:1] != ["git"] or cmd.wrappers or cmd.env or cmd.nested or cmd.unknown_args:
        return None
    if len(cmd.words) < 2 or any(w == COMPUTED or _tilde(w) for w in cmd.words):
        return None
    sub, rest = cmd.words[1], cmd.words[2:]
    grammar = _GRAMMARS.get(sub)
    parsed = _parse(rest, grammar.options) if grammar is not None else None
    if grammar is None or parsed is None:
        return None
    route = grammar.check(parsed)
    if route is None:
        return None
    scans, pathspecs = route
    return HostGit((sub, *rest), scans, tuple(pathspecs))


def git_writes(command: str) -> bool:
    """Whether some part of the command is a git subcommand the host route serves (a failure in
    the sandbox then says how the route is taken)."""
    analysis = analyse(command)
    return any(c.words[:1] == ["git"] and c.words[1:2] and c.words[1] in _GRAMMARS for c in analysis.commands)


def _tilde(word: str) -> bool:
    """bash expands an unquoted `~` at a word's start and after `=` or `:` in an assignment-like
    word; the words here are already unquoted, so any such `~` makes the command not routed."""
    return word.startswith("~") or "=~" in word or ":~" in word


@dataclass
class _Parsed:
    options: dict[str, list[str | None]] = field(default_factory=dict)  # option's name -> its values
    before: list[str] = field(default_factory=list)  # words that are not options, before `--`
    after: list[str] = field(default_factory=list)  # the words after `--`
    dashdash: bool = False

    @property
    def positionals(self) -> list[str]:
        return self.before + self.after

    def value(self, name: str) -> str | None:
        """The value of an option given exactly once, else None."""
        values = self.options.get(name, [])
        return values[0] if len(values) == 1 else None


@dataclass(frozen=True)
class _Options:
    flags: dict[str, str]  # each spelling (`-a`, `--all`) -> the option's name
    values: dict[str, str]  # options that take a value (the next word, `--x=V`, or glued `-mV`)


def _spellings(*groups: str) -> dict[str, str]:
    """`"-a --all"` -> {"-a": "all", "--all": "all"}: each group spells one option, named by its last spelling."""
    return {word: group.split()[-1].lstrip("-") for group in groups for word in group.split()}


def _parse(args: list[str], options: _Options) -> _Parsed | None:
    """The words as git's parse-options reads them (options anywhere before `--`, short ones
    bundled, a value glued or in the next word), or None at any word it does not know."""
    out = _Parsed()
    i = 0
    while i < len(args):
        word = args[i]
        if out.dashdash or not word.startswith("-") or word == "-":
            (out.after if out.dashdash else out.before).append(word)
        elif word == "--":
            out.dashdash = True
        elif word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in options.flags and not eq:
                out.options.setdefault(options.flags[name], []).append(None)
            elif name in options.values and (eq or i + 1 < len(args)):
                if not eq:
                    i += 1
                    value = args[i]
                out.options.setdefault(options.values[name], []).append(value)
            else:
                return None
        else:
            taken = _bundle(word, args[i + 1 : i + 2], options, out)
            if taken is None:
                return None
            i += taken
        i += 1
    return out


def _bundle(word: str, following: list[str], options: _Options, out: _Parsed) -> int | None:
    """A short option or a bundle of them (`-qa`, `-am MSG`, `-mMSG`); how many words after it
    it took, or None."""
    for at in range(1, len(word)):
        spelling = "-" + word[at]
        if spelling in options.flags:
            out.options.setdefault(options.flags[spelling], []).append(None)
            continue
        if spelling not in options.values:
            return None
        glued = word[at + 1 :]
        if not glued and not following:
            return None
        out.options.setdefault(options.values[spelling], []).append(glued or following[0])
        return 0 if glued else 1
    return 0


Checked = tuple[Scan, list[str]] | None


@dataclass(frozen=True)
class _Grammar:
    options: _Options
    check: Callable[[_Parsed], Checked]


def _paths(words: list[str]) -> bool:
    return bool(words) and all(words)  # git refuses an empty pathspec; `-` is a file's name here


def _add(p: _Parsed) -> Checked:
    if any(v not in ("+x", "-x") for v in p.options.get("chmod", [])):
        return None
    every = "all" in p.options or "update" in p.options
    if not (_paths(p.positionals) or (every and not p.positionals)):
        return None
    return ("tracked" if "update" in p.options and "all" not in p.options else "new"), p.positionals


def _commit(p: _Parsed) -> Checked:
    amend, no_edit = "amend" in p.options, "no-edit" in p.options
    if "message" not in p.options and not (amend and no_edit):
        return None  # git would open an editor for the message
    if (no_edit or "reset-author" in p.options) and not amend:
        return None
    if p.positionals and not _paths(p.positionals):
        return None
    return ("tracked" if "all" in p.options or p.positionals else "none"), p.positionals


def _restore(p: _Parsed) -> Checked:
    return ("none", p.positionals) if "staged" in p.options and _paths(p.positionals) else None


def _rm(p: _Parsed) -> Checked:
    return ("none", p.positionals) if "cached" in p.options and _paths(p.positionals) else None


def _reset(p: _Parsed) -> Checked:
    """`git reset [-q] [HEAD] [[--] PATHS]`: the index back to HEAD; any other revision would
    move the branch, and a first word that is not HEAD could be one."""
    if p.dashdash:
        if p.before not in ([], ["HEAD"]) or (p.after and not _paths(p.after)):
            return None
        return "none", p.after
    if p.before[:1] not in ([], ["HEAD"]) or (p.before[1:] and not _paths(p.before[1:])):
        return None
    return "none", p.before[1:]


def _new_branch(option: str) -> Callable[[_Parsed], Checked]:
    """`switch -c NAME` / `checkout -b NAME`: a branch at HEAD, nothing else (a start point would
    check out other files)."""

    def check(p: _Parsed) -> Checked:
        name = p.value(option)
        if name is None or name.startswith("-") or p.positionals or p.dashdash:
            return None
        return "none", []

    return check


def _branch(p: _Parsed) -> Checked:
    """`git branch NAME [START]` makes a ref; with no name it lists (read-only, in the sandbox)."""
    return ("none", []) if 1 <= len(p.before) <= 2 and not p.dashdash else None


_QUIET = "-q --quiet"
_ADD_FLAGS = (
    "-A --all|-u --update|-v --verbose|-n --dry-run|-N --intent-to-add|--ignore-errors|--no-all|--ignore-removal"
)
_COMMIT_FLAGS = (
    "-a --all|-q --quiet|-s --signoff|-n --no-verify|--allow-empty|--allow-empty-message|--amend|--no-edit|"
    "--reset-author|--no-gpg-sign"
)
_RM_FLAGS = "--cached|-r|-q --quiet|-n --dry-run|-f --force|--ignore-unmatch"
_GRAMMARS: dict[str, _Grammar] = {
    "add": _Grammar(_Options(_spellings(*_ADD_FLAGS.split("|")), _spellings("--chmod")), _add),
    "commit": _Grammar(
        _Options(_spellings(*_COMMIT_FLAGS.split("|")), _spellings("-m --message", "--author", "--date")), _commit
    ),
    "restore": _Grammar(_Options(_spellings("-S --staged", _QUIET), {}), _restore),
    "rm": _Grammar(_Options(_spellings(*_RM_FLAGS.split("|")), {}), _rm),
    "reset": _Grammar(_Options(_spellings(_QUIET), {}), _reset),
    "switch": _Grammar(_Options(_spellings(_QUIET), _spellings("-c --create")), _new_branch("create")),
    "checkout": _Grammar(_Options(_spellings(_QUIET), _spellings("-b")), _new_branch("b")),
    "branch": _Grammar(_Options({}, {}), _branch),
}
