"""Decisions for shell commands: every part of a compound command is judged, and the whole gets
the strictest answer. A deny on any part denies; an allow must cover every part; what cannot be
looked into asks; redirections are judged as reads and writes of their files by the path rules.
"""

from __future__ import annotations

import glob
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from arnes.permissions.paths import absolute
from arnes.permissions.readonly import COMPUTED, git_subcommand, is_read_only, path_arguments
from arnes.permissions.rules import CommandPattern, RuleError, parse_rule
from arnes.permissions.shell import SHELLS, ShellAnalysis, SimpleCommand, analyse
from arnes.permissions.types import Decision, DecisionKind, Target

if TYPE_CHECKING:
    from arnes.permissions.engine import RuleEngine

GLOB_CHARS = set("*?[{")
# git commands that only show names and states, never file contents (which may be denied ones)
GIT_NAMES_ONLY = frozenset({"status", "ls-files", "rev-parse", "describe", "show-ref"})


def decide_command(engine: RuleEngine, tool: str, command: str) -> Decision:
    analysis = analyse(command)
    if analysis.error:
        if engine.mode == "bypass" and engine.has_command_denies():
            return Decision("deny", f"{analysis.error}, so the deny rules cannot be checked", "rule")
        return Decision("ask", f"{analysis.error}; a person has to read it", "mode")
    parts = analysis.commands
    # 1. deny: a rule on any part (as run, or with its wrappers), or a denied path it touches
    for part in parts:
        for words in (part.words, [*part.wrappers, *part.words]):
            hit = engine.command_rule("deny", words)
            if hit:
                return _rule(hit.kind, hit.rule.raw, hit.origin)
    path_decisions = _paths(engine, parts, analysis)
    for decision in path_decisions:
        if decision.kind == "deny":
            return decision
    if analysis.opaque and engine.mode == "bypass" and engine.has_command_denies():
        # bypass turns asks into allows; a deny rule must not be dodged by what nobody can read
        return Decision("deny", f"cannot be checked against the deny rules: {analysis.opaque[0]}", "rule")
    read_only = all(is_read_only(p) for p in parts) and not analysis.writes
    if engine.mode == "plan" and not read_only:  # before ask rules: no "y" runs a writer in plan
        return Decision("deny", "plan mode: only read-only commands run", "mode")
    # 2. ask: a rule on any part, a path that asks, or a part nobody can see into
    for part in parts:
        hit = engine.command_rule("ask", part.words)
        if hit:
            return _rule("ask", hit.rule.raw, hit.origin)
    if analysis.opaque:
        return Decision("ask", f"cannot be checked: {analysis.opaque[0]}", "mode")
    for decision in path_decisions:
        if decision.kind == "ask":
            return decision
    leak = _may_show_hidden(engine, parts)
    if leak:
        return Decision("ask", leak, "rule")
    # 3. allow: every part read-only or covered by an allow rule it cannot sneak past
    uncovered = [p for p in parts if not is_read_only(p) and not _allowed_by_rule(engine, p)]
    if not uncovered:
        if read_only:
            return Decision("allow", "read-only command", "mode", confine=True)
        if analysis.writes and all(is_read_only(p) for p in parts):
            first = engine.target("Bash", Target(absolute(engine.workspace, analysis.writes[0]), "write"))
            return Decision("allow", f"redirection: {first.reason}", first.source, first.rule, first.origin)
        return _covered(engine, parts)
    if engine.mode in ("acceptEdits", "bypass") and engine.sandboxed:
        return Decision("allow", f"{engine.mode}: the sandbox holds the perimeter", "mode")
    nested = next((p for p in uncovered if p.nested), None)
    if nested:
        return Decision("ask", f"{nested.text!r} runs inside a substitution, eval or sh -c", "mode")
    return Decision("ask", f"not a read-only command: {uncovered[0].text}", "mode")


def _allowed_by_rule(engine: RuleEngine, part: SimpleCommand) -> bool:
    """Rules cover plain commands only: not inside $(...)/eval/sh -c, not behind a risky variable
    or another user's rights."""
    if part.nested or part.risky_env or part.privileged or (part.unknown_args and not _prefix_rule(engine, part)):
        return False
    return engine.command_rule("allow", part.words) is not None


def _prefix_rule(engine: RuleEngine, part: SimpleCommand) -> bool:
    hit = engine.command_rule("allow", part.words)
    return hit is not None and hit.command is not None and hit.command.prefix


def _covered(engine: RuleEngine, parts: list[SimpleCommand]) -> Decision:
    for part in parts:
        if not is_read_only(part):
            hit = engine.command_rule("allow", part.words)
            if hit:
                return _rule("allow", hit.rule.raw, hit.origin)
    return Decision("allow", "read-only command", "mode", confine=True)


def _paths(engine: RuleEngine, parts: list[SimpleCommand], analysis: ShellAnalysis) -> list[Decision]:
    """What the command reads and writes by path, judged by the path rules (non-allows only)."""
    decisions: list[Decision] = []
    named = bool(analysis.writes or analysis.reads) or any(path_arguments(p) for p in parts if is_read_only(p))
    if analysis.changes_directory and named:
        decisions.append(Decision("ask", "a cd makes its relative paths point somewhere else", "mode"))
    for written in analysis.writes:
        decisions.append(engine.target("Bash", Target(absolute(engine.workspace, written), "write")))
    for read in analysis.reads:
        decisions.append(_read(engine, read))
    for part in parts:
        if is_read_only(part):
            decisions += [_read(engine, arg) for arg in path_arguments(part)]
        else:
            decisions += _denied_writes(engine, part)
    return [d for d in decisions if d.kind != "allow"]


def _read(engine: RuleEngine, arg: str) -> Decision:
    if arg == COMPUTED or "$" in arg:
        return Decision("ask", "reads a path only known when it runs", "mode")
    if "{" in arg:
        return Decision("ask", f"{arg!r} expands to paths nobody has seen yet", "mode")
    if GLOB_CHARS & set(arg):
        if engine.has_read_rules():
            return Decision("ask", f"{arg!r} may match a file a Read rule hides", "rule")
        arg = _fixed_folder(arg)
    decision = engine.target("Bash", Target(absolute(engine.workspace, arg or "."), "read"))
    if decision.kind == "allow" and decision.source != "rule":
        return Decision("allow", decision.reason, decision.source)
    return decision


def _fixed_folder(pattern: str) -> str:
    """The folder a glob cannot leave: `/e*/passwd` stays under `/`, `src/*.py` under `src`."""
    cut = min((i for i, ch in enumerate(pattern) if ch in GLOB_CHARS), default=len(pattern))
    prefix = pattern[:cut]
    if "/" not in prefix:
        return "/" if pattern.startswith("/") else "."
    return prefix.rsplit("/", 1)[0] or "/"


def _denied_writes(engine: RuleEngine, part: SimpleCommand) -> list[Decision]:
    """Arguments of a command that may write which an Edit deny rule covers (`sed -i x .env`);
    patterns are expanded first, so `.g?t/config` is `.git/config`."""
    found = []
    for arg in part.words[1:]:
        if arg.startswith("-") or arg == COMPUTED or not arg:
            continue
        for path in expand(arg, engine.workspace):
            decision = engine.target("Bash", Target(absolute(engine.workspace, path), "write"))
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


def _may_show_hidden(engine: RuleEngine, parts: list[SimpleCommand]) -> str | None:
    """With Read rules hiding files and no sandbox to hide them, searches and git may show them."""
    if not engine.has_read_rules():
        return None
    for part in parts:
        name = part.words[0] if part.words else ""
        if name == "git" and git_subcommand(part.words) not in GIT_NAMES_ONLY:
            return "git can show the contents of files a Read rule hides (history, other revisions)"
        if engine.sandboxed:
            continue
        recursive = name == "rg" or _recursive(name, part.words[1:])
        if recursive:
            return f"{name} searches folders that may hold files a Read rule hides (no sandbox to hide them)"
    return None


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
