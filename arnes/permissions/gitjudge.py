"""git judged by what it would show (docs/shell.md, "git"): the paths its arguments name are read
like `cat`'s, the files its range covers are listed by git itself (gitprobe.py) and held against
the Read rules, and what cannot be told asks while Read rules hide files. The folders it is sent
to (`-C`, `--git-dir`, `--work-tree`) are reads and `--output` is a write, whatever the rules.

A deny or ask found here applies whatever allows the command (the mode, `Bash(git diff:*)`), as a
Read deny applies to `cat .env`: an allow rule says which programs may run, not which files the
agent may see.
"""

from __future__ import annotations

import os
from pathlib import Path

from arnes.permissions.cmdpaths import CommandRules, judge, read
from arnes.permissions.gitprobe import listed
from arnes.permissions.gitshows import shows
from arnes.permissions.readonly import SAFE_ENV
from arnes.permissions.simplecommand import SimpleCommand
from arnes.permissions.types import Decision, Mode, Target


def git_decisions(
    engine: CommandRules, parts: list[SimpleCommand], folders: list[Path], changers: list[SimpleCommand],
    hidden_writes: bool, mode: Mode,
) -> list[Decision]:  # fmt: skip
    """The deny and ask decisions for the git parts of a command, from every folder it may run in.

    `changers`: parts that may change files (not read-only); `hidden_writes`: a redirection writes
    a file a Read rule hides. Either makes git's list stale by the time the command runs."""
    hidden = engine.has_read_rules()
    decisions: list[Decision] = []
    for part in parts:
        if not part.words or part.words[0].rsplit("/", 1)[-1] != "git":
            continue
        view = shows(part.words)
        for folder in folders:
            decisions += [read(engine, folder, place, mode) for place in view.places]
            decisions += [judge(engine, folder, written, "write", mode) for written in view.writes]
            if hidden:
                decisions += [read(engine, folder, path, mode) for path in view.paths]
                decisions += [read(engine, _base(folder, path), path, mode) for path in view.tree_paths]
        if not hidden or not view.shows_content:
            continue
        unread = view.unread or _unmirrored(part, changers, hidden_writes)
        if unread is None and view.probe is not None:
            for folder in folders:
                names = listed(engine.workspace, folder, view.probe)
                if isinstance(names, str):
                    unread = names
                    break
                decisions += _shown(engine, part, names, mode)
        if unread:
            reason = f"git may show files a Read rule hides: {unread}"
            decisions.append(Decision("ask", reason, "rule"))
    return [d for d in decisions if d.kind != "allow"]


def _unmirrored(part: SimpleCommand, changers: list[SimpleCommand], hidden_writes: bool) -> str | None:
    """Why asking git now would not tell what this part shows when it runs."""
    if any(c is not part for c in changers):
        other = next(c for c in changers if c is not part)
        return f"{other.text!r} runs with it and may change what git would show"
    if hidden_writes:
        return "a redirection writes a file a Read rule hides, which may change what git would show"
    if part.unknown_args or part.privileged:
        return "its arguments or its user are only known when it runs"
    odd = [v.split("=", 1)[0] for v in part.env if v.split("=", 1)[0] not in SAFE_ENV]
    return f"{odd[0]} changes what git reads" if odd else None


def _shown(engine: CommandRules, part: SimpleCommand, names: list[str], mode: Mode) -> list[Decision]:
    """The Read rules against the files git listed: the first one hidden decides (deny before ask)."""
    top = engine.workspace  # gitprobe runs only on the workspace's own repository
    found: dict[str, tuple[str, Decision]] = {}
    for name in dict.fromkeys(names):
        decision = engine.target("Bash", Target(Path(os.path.normpath(top / name)), "read"), mode)
        if decision.kind != "allow" and decision.kind not in found:
            found[decision.kind] = (name, decision)
    what = _what(part)
    hint = "name the paths to show, or leave it out with -- . ':!{}'"
    if what == "git stash show":
        hint = "show the other files' changes with git diff stash@{{0}}^ stash@{{0}} -- PATH"
    return [
        Decision(d.kind, f"{what} would show {name} ({d.reason}); {hint.format(name)}", d.source, d.rule, d.origin)
        for name, d in (found[k] for k in ("deny", "ask") if k in found)
    ]


def _what(part: SimpleCommand) -> str:
    words = [w for w in part.words[1:] if not w.startswith("-")][:2]
    if words[:1] == ["stash"]:
        return "git stash show"
    return "git " + (words[0] if words else "")


def _base(folder: Path, path: str) -> Path:
    """Where a `REV:path` is read from: the top of the repository git finds from `folder`, or
    `folder` itself for `REV:./path`."""
    if path.startswith(("./", "../")):
        return folder
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder
