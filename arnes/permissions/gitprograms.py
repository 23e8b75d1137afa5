"""Programs a git subcommand runs from its own arguments: `git rebase --exec 'make test'`, `git bisect
run ./check.sh`, `git submodule foreach 'cat .env'` run a shell line or a command, and `git clone
--upload-pack=CMD`, `git push --receive-pack=CMD`, `git clone --template=DIR` (its hooks run at
checkout) name one. programs.py hands the lines and commands back to the parser, so deny rules and
Read rules see them, and makes the rest opaque.
"""

from __future__ import annotations

from dataclasses import dataclass, field

COMPUTED = "$?"
# Options whose value is a command git runs through the shell, by subcommand.
_COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "clone": ("--upload-pack", "-u"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
}
_TEMPLATES = ("clone", "init")


@dataclass
class GitPrograms:
    scripts: list[str] = field(default_factory=list)  # shell lines it runs
    commands: list[list[str]] = field(default_factory=list)  # commands it runs, as words
    opaque: list[str] = field(default_factory=list)


def git_programs(sub: str, args: list[str]) -> GitPrograms:
    found = GitPrograms()
    if sub == "rebase":
        found.scripts += _values(args, ("--exec", "-x"))
    elif sub == "bisect" and args[:1] == ["run"] and args[1:]:
        found.commands.append(args[1:])
    elif sub == "submodule" and "foreach" in args:
        rest = [a for a in args[args.index("foreach") + 1 :] if a != "--recursive"]
        if rest:
            found.scripts.append(" ".join(rest))
    for option in _COMMAND_OPTIONS.get(sub, ()):
        found.scripts += _values(args, (option,))
    if sub in _TEMPLATES and _values(args, ("--template",)):
        found.opaque.append(f"git {sub} --template copies hooks that git runs")
    if sub == "clone" and _values(args, ("--config", "-c")):
        found.opaque.append("git clone --config sets the new repository's configuration, which can name programs")
    if any(COMPUTED in s for s in found.scripts):
        found.opaque.append(f"git {sub} runs a command computed at run time")
    return found


def _values(args: list[str], names: tuple[str, ...]) -> list[str]:
    """`--opt=V`, `--opt V`, `-xV`, `-x V` (short names have one letter)."""
    found = []
    for i, word in enumerate(args):
        if word == "--":
            break
        head, eq, value = word.partition("=")
        following = args[i + 1] if i + 1 < len(args) else None
        for name in names:
            if name.startswith("--") and head == name:
                found += [value] if eq else ([following] if following is not None else [])
            elif not name.startswith("--") and word.startswith(name):
                glued = word[len(name) :]
                found += [glued] if glued else ([following] if following is not None else [])
    return found
