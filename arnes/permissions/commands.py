"""Decisions for shell commands: every part of a compound command is judged, and the whole gets
the strictest answer. A deny on any part denies; an allow must cover every part; what cannot be
looked into asks; redirections are judged as reads and writes of their files by the path rules.
"""

from __future__ import annotations

import glob
import os
import shlex
from pathlib import Path

from arnes.host.paths import absolute
from arnes.permissions.cmdpaths import (
    GLOB_CHARS,
    CommandRules,
    expand_tilde,
    judge,
    listed,
    read,
)
from arnes.permissions.cmdpaths import path_target as path_target  # the corpus test judges paths with it
from arnes.permissions.gitjudge import git_decisions
from arnes.permissions.gitrepo import repository_code
from arnes.permissions.gitroute import host_git_of
from arnes.permissions.readonly import COMPUTED, FILE_ARGS, is_read_only, path_arguments
from arnes.permissions.rules import CommandPattern, RuleError, parse_rule
from arnes.permissions.shell import MOST_COMMAND_CHARS, SHELLS, ShellAnalysis, analyse, too_long
from arnes.permissions.simplecommand import SimpleCommand
from arnes.permissions.types import Decision, DecisionKind, Mode, Target

READS_HERE = FILE_ARGS | {"git"}  # with no path argument, these read the folder they run in
ON_HOST = "it writes the repository, so it runs on the host, not in the sandbox (.git is read-only there), hooks off"


def decide_command(engine: CommandRules, tool: str, command: str, mode: Mode | None = None) -> Decision:
    """`mode`: the one to judge in (a sub-agent's may be stricter than the engine's own)."""
    mode = mode or engine.mode
    if len(command) > MOST_COMMAND_CHARS:  # judged in well under a second up to here; past it, not read
        return Decision("deny", too_long(command), "builtin")
    analysis = analyse(command)
    if analysis.error:
        if mode == "bypass" and engine.has_command_denies():
            return Decision("deny", f"{analysis.error}, so the deny rules cannot be checked", "rule")
        return Decision(
            "ask", f"{analysis.error}; a person has to read it", "mode", unjudged=engine.has_command_denies()
        )
    parts = analysis.commands
    # 1. deny: a rule on any part (as run, or with its wrappers), or a denied path it touches
    for part in parts:
        for words in (part.words, [*part.wrappers, *part.words]) if part.wrappers else (part.words,):
            hit = engine.command_rule("deny", words)
            if hit:
                return _rule(hit.kind, hit.rule.raw, hit.origin)
    folders = directories(engine, analysis)
    opaque = list(analysis.opaque)
    if folders is None and any(p.words and p.words[0] not in ("cd", "pushd", "popd") for p in parts):
        opaque.append("a cd goes to a folder only known when it runs, and the other parts run there")
    judged = _ReadOnly(engine, parts, folders)
    path_decisions = _paths(engine, parts, analysis, folders, judged, mode)
    if not any(d.kind == "deny" for d in path_decisions):  # git is asked only when nothing denies already
        changers = [p for p in parts if not judged(p)]
        hidden_writes = _writes_hidden(engine, analysis, folders or [engine.workspace], mode)
        path_decisions += git_decisions(engine, parts, folders or [engine.workspace], changers, hidden_writes, mode)
    for decision in path_decisions:
        if decision.kind == "deny":
            return decision
    if opaque and mode == "bypass" and engine.has_command_denies():
        # bypass turns asks into allows; a deny rule must not be dodged by what nobody can read
        return Decision("deny", f"cannot be checked against the deny rules: {opaque[0]}", "rule")
    read_only = all(judged(p) for p in parts) and not analysis.writes
    if mode == "plan" and not read_only:  # before ask rules: no "y" runs a writer in plan
        return Decision("deny", "plan mode: only read-only commands run", "mode")
    # 2. ask: a rule on any part, a path that asks, or a part nobody can see into
    for part in parts:
        hit = engine.command_rule("ask", part.words)
        if hit:
            return _rule("ask", hit.rule.raw, hit.origin)
    if opaque:
        return Decision("ask", f"cannot be checked: {opaque[0]}", "mode", unjudged=engine.has_command_denies())
    for decision in path_decisions:
        if decision.kind == "ask":
            return decision
    leak = _searches_hidden(engine, parts)
    if leak:
        return Decision("ask", leak, "rule")
    # 3. allow: every part read-only or covered by an allow rule it cannot sneak past
    uncovered = [p for p in parts if not judged(p) and not _allowed_by_rule(engine, p)]
    if not uncovered:
        if read_only:
            return Decision("allow", "read-only command", "mode", confine=True)
        if analysis.writes and all(judged(p) for p in parts):
            first = engine.target("Bash", Target(absolute(engine.workspace, analysis.writes[0]), "write"), mode)
            return Decision("allow", f"redirection: {first.reason}", first.source, first.rule, first.origin)
        return _covered(engine, parts, judged)
    # git's state-writing commands run on the host (tools/hostgit.py), where the sandbox holds
    # nothing: acceptEdits does not cover them, as it covers no command without a sandbox
    on_host = engine.sandboxed and host_git_of(analysis) is not None
    if (mode == "bypass" or (mode == "acceptEdits" and not on_host)) and engine.sandboxed:
        return Decision("allow", f"{mode}: {ON_HOST if on_host else 'the sandbox holds the perimeter'}", "mode")
    if on_host:
        return Decision("ask", f"{uncovered[0].text}: {ON_HOST}", "mode")
    nested = next((p for p in uncovered if p.nested), None)
    if nested:
        return Decision("ask", f"{nested.text!r} runs inside a substitution, eval or sh -c", "mode")
    why = judged.why.get(id(uncovered[0]))
    return Decision("ask", f"not a read-only command: {uncovered[0].text}{f' ({why})' if why else ''}", "mode")


class _ReadOnly:
    """`is_read_only`, plus what only the workspace can tell: git is read-only only where the
    repository's configuration names no program (gitrepo.py)."""

    def __init__(self, engine: CommandRules, parts: list[SimpleCommand], folders: list[Path] | None):
        self.why: dict[int, str] = {}
        self._answers: dict[int, bool] = {}
        repository: str | None = None
        checked = False
        for part in parts:
            answer = is_read_only(part)
            if answer and part.words and part.words[0] == "git":
                if not checked:  # once per decision, however many git parts
                    repository = next(filter(None, (repository_code(f) for f in folders or [engine.workspace])), None)
                    checked = True
                reason = repository
                if reason:
                    answer = False
                    self.why[id(part)] = reason
            self._answers[id(part)] = answer

    def __call__(self, part: SimpleCommand) -> bool:
        return self._answers.get(id(part), False)


def _allowed_by_rule(engine: CommandRules, part: SimpleCommand) -> bool:
    """Rules cover plain commands only: not inside $(...)/eval/sh -c, not behind a risky variable
    or another user's rights."""
    if part.nested or part.risky_env or part.privileged or (part.unknown_args and not _prefix_rule(engine, part)):
        return False
    return engine.command_rule("allow", part.words) is not None


def _prefix_rule(engine: CommandRules, part: SimpleCommand) -> bool:
    hit = engine.command_rule("allow", part.words)
    return hit is not None and hit.command is not None and hit.command.prefix


def _covered(engine: CommandRules, parts: list[SimpleCommand], judged: _ReadOnly) -> Decision:
    for part in parts:
        if not judged(part):
            hit = engine.command_rule("allow", part.words)
            if hit:
                return _rule("allow", hit.rule.raw, hit.origin)
    return Decision("allow", "read-only command", "mode", confine=True)


def directories(engine: CommandRules, analysis: ShellAnalysis) -> list[Path] | None:
    """Every folder the command's parts may run in: the workspace and where each `cd` may lead
    (each cd may fail, so every subset in order), or None when a cd goes somewhere unknown."""
    folders = [engine.workspace]
    for target in analysis.directories:
        if target is None or (os.environ.get("CDPATH") and not target.startswith(("/", ".", "~"))):
            return None
        reached = []
        for folder in folders:
            path = expand_tilde(target, folder, engine.home)
            if path is None:
                return None
            joined = os.path.join(folder, path)
            # bash's cd folds `..` as written (-L); the kernel follows links (-P): both are judged
            reached += [Path(os.path.realpath(os.path.normpath(joined))), Path(os.path.realpath(joined))]
        folders = list(dict.fromkeys([*folders, *reached]))
        if len(folders) > 16:
            return None
    return folders


def _paths(
    engine: CommandRules,
    parts: list[SimpleCommand],
    analysis: ShellAnalysis,
    folders: list[Path] | None,
    judged: _ReadOnly,
    mode: Mode,
) -> list[Decision]:
    """What the command reads and writes by path, judged by the path rules (non-allows only), from
    every folder it may run in; `..` after a link is resolved as the kernel does."""
    named = {id(p): path_arguments(p) for p in parts if judged(p)}
    reads = list(analysis.reads) + [a for arguments in named.values() for a in arguments]
    if folders is None or len(folders) > 1:
        # after a cd, a search or a listing with no path reads the folder it runs in
        reads += ["." for p in parts if judged(p) and not named[id(p)] and p.words and p.words[0] in READS_HERE]
    if folders is None:
        if reads or analysis.writes or analysis.patterns:
            return [Decision("ask", "a cd goes to a folder only known when it runs, and paths follow it", "mode")]
        folders = [engine.workspace]
    reads = list(dict.fromkeys(reads))  # the same file read by many parts is judged once
    decisions: list[Decision] = []
    for folder in folders:
        for written in analysis.writes:
            decisions.append(judge(engine, folder, written, "write", mode))
        for arg in reads:
            decisions.append(read(engine, folder, arg, mode))
        for pattern in dict.fromkeys(analysis.patterns):
            decisions.append(listed(engine, folder, pattern, mode))
        for part in parts:
            if not judged(part):
                decisions += _denied_writes(engine, folder, part, mode)
    return [d for d in decisions if d.kind != "allow"]


def _denied_writes(engine: CommandRules, folder: Path, part: SimpleCommand, mode: Mode) -> list[Decision]:
    """Arguments of a command that may write which an Edit deny rule covers (`sed -i x .env`);
    patterns are expanded first, so `.g?t/config` is `.git/config`."""
    found = []
    for arg in part.words[1:]:
        if arg.startswith("-") or arg == COMPUTED or not arg:
            continue
        for path in expand(arg, folder):
            decision = judge(engine, folder, path, "write", mode)
            if decision.kind == "deny" and decision.source in ("rule", "builtin"):
                found.append(decision)
    return found


def expand(arg: str, workspace: Path) -> list[str]:
    """Brace and glob expansion as the shell would do it here (and the word itself)."""
    words = _braces(arg)
    out = list(words)
    for word in words:
        if GLOB_CHARS & set(word):
            base = workspace if not word.startswith("/") else Path("/")
            pattern = word if not word.startswith("/") else word[1:]
            out += [str(base / m) for m in glob.glob(pattern, root_dir=base, include_hidden=True)][:200]
    return out


def _braces(word: str) -> list[str]:
    start = word.find("{")
    end = word.find("}", start + 1)
    if start < 0 or end < 0 or "," not in word[start:end]:
        return [word]
    head, body, tail = word[:start], word[start + 1 : end], word[end + 1 :]
    return [w for option in body.split(",") for w in _braces(head + option + tail)][:64]


def _searches_hidden(engine: CommandRules, parts: list[SimpleCommand]) -> str | None:
    """With Read rules hiding files and no sandbox to hide them, searches may show them (git is
    judged apart: gitjudge.py)."""
    if not engine.has_read_rules() or engine.sandboxed:
        return None
    for part in parts:
        name = part.words[0] if part.words else ""
        if name == "rg" or _recursive(name, part.words[1:]):
            return f"{name} searches folders that may hold files a Read rule hides (no sandbox to hide them)"
    return None


def _writes_hidden(engine: CommandRules, analysis: ShellAnalysis, folders: list[Path], mode: Mode) -> bool:
    """Whether a redirection writes a file a Read rule hides (then git would show it changed)."""
    if not engine.has_read_rules():
        return False
    return any(read(engine, folder, written, mode).kind != "allow" for folder in folders for written in analysis.writes)


def _recursive(name: str, args: list[str]) -> bool:
    """grep -r/-R/-d recurse (bundled too), diff -r: they read every file under a folder."""
    if name not in ("grep", "egrep", "fgrep", "diff"):
        return False
    for i, word in enumerate(args):
        if word in ("--recursive", "--dereference-recursive", "--directories=recurse"):
            return True
        if word == "-d" and i + 1 < len(args) and args[i + 1] == "recurse":
            return True
        if word.startswith("-") and not word.startswith("--") and set(word[1:]) & {"r", "R"}:
            return True
    return False


def _rule(kind: DecisionKind, raw: str, origin: str) -> Decision:
    return Decision(kind, f"rule {raw}", "rule", raw, origin)


def suggest_command_rule(command: str) -> str | None:
    """For "always": `Bash(npm test:*)` for a program and its subcommand, else the exact command.

    A prefix of the program alone (`Bash(python:*)` for `python -m unittest`) would allow any
    code at all, so a command whose second word is a flag, or that has one word, is offered as
    written and nothing more.
    """
    analysis = analyse(command)
    if analysis.error or analysis.opaque or len(analysis.commands) != 1 or analysis.writes:
        return None
    cmd = analysis.commands[0]
    words = cmd.words
    if not words or cmd.nested or cmd.privileged or cmd.risky_env or cmd.unknown_args:
        return None
    if len(words) > 1 and not words[1].startswith("-") and words[0] not in SHELLS:
        spec = f"{shlex.join(words[:2])}:*"
    else:
        spec = shlex.join(words)
    rule = f"Bash({spec})"
    try:
        parsed = parse_rule(rule)
    except RuleError:
        return None
    assert parsed.specifier is not None
    pattern = CommandPattern.parse(parsed.specifier)
    return rule if pattern.allows(words) else None  # the rule must read back as this very command


def command_parts(command: str) -> list[str]:
    """What a compound command really runs, one line per part, for the approval prompt.

    Empty for a single plain command: then the command line says it all.
    """
    analysis = analyse(command)
    if analysis.error:
        return [f"cannot be parsed: {analysis.error}"]
    plain = len(analysis.commands) == 1 and not analysis.writes and not analysis.opaque
    if plain and not analysis.commands[0].nested:
        return []
    parts: list[str] = []
    for cmd in analysis.commands:
        text = " ".join(_shown_word(w) for w in [*cmd.env, *cmd.wrappers, *cmd.words])
        parts.append(f"runs {text}" + ("  (as code inside $(...), eval or sh -c)" if cmd.nested else ""))
    parts += [f"writes {target}" for target in analysis.writes]
    parts += [f"cannot see inside: {why}" for why in analysis.opaque]
    return parts


def _shown_word(word: str) -> str:
    """A word as a person reads it: quoted only when spaces or shell characters are in it."""
    if word and not any(ch.isspace() or ch in "'\"\\;&|<>()`" for ch in word):
        return word
    return shlex.quote(word)
