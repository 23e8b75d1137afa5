"""Which commands only read: they run without asking in `default` and `plan` (in the spirit of
Codex's safe-command list). Anything not provably read-only is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from arnes.permissions.shell import SimpleCommand

# Commands that never write, whatever their arguments.
PLAIN = frozenset(
    """cat head tail wc pwd echo printf true false grep egrep fgrep which whoami uname id stat file du df
    basename dirname realpath readlink diff cmp nl tr cut column printenv hostname seq test [ type comm
    fold paste rev tac od hexdump strings sha1sum sha256sum sha512sum md5sum cksum jq ls tree cd less
    more expr""".split()
)
GIT_READ = frozenset({"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "describe", "grep",
                      "shortlog", "show-ref", "cat-file", "ls-tree", "reflog"})  # fmt: skip
FIND_WRITES = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_SED_PRINT = re.compile(r"^\d+(,\d+)?p$")


def _positionals(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith("-")]


def _git(words: list[str]) -> bool:
    args = words[1:]
    while args and args[0] in ("--no-pager", "-P"):
        args = args[1:]
    if not args or args[0] not in GIT_READ:
        return False
    risky = ("--output", "--ext-diff", "--textconv", "-o")
    if any(a.startswith(risky) for a in args[1:]):
        return False
    return not (args[0] == "reflog" and len(args) > 1 and args[1] in ("delete", "expire"))


def _sed(words: list[str]) -> bool:
    return len(words) >= 3 and words[1] == "-n" and bool(_SED_PRINT.match(words[2]))


def _find(words: list[str]) -> bool:
    return not any(w in FIND_WRITES for w in words)


def _sort(words: list[str]) -> bool:
    return not any(w == "-o" or w.startswith("--output") or (w.startswith("-o") and len(w) > 2) for w in words)


def _rg(words: list[str]) -> bool:
    return not any(w.startswith(("--pre", "--search-zip")) or w == "-z" for w in words)


def _uniq(words: list[str]) -> bool:
    return len(_positionals(words[1:])) <= 1


def _xxd(words: list[str]) -> bool:
    return "-r" not in words and len(_positionals(words[1:])) <= 1


def _date(words: list[str]) -> bool:
    return not any(w in ("-s", "--set") or w.startswith("--set=") for w in words)


def _tree(words: list[str]) -> bool:
    return "-o" not in words


CHECKS: dict[str, Callable[[list[str]], bool]] = {
    "git": _git,
    "sed": _sed,
    "find": _find,
    "sort": _sort,
    "rg": _rg,
    "uniq": _uniq,
    "xxd": _xxd,
    "date": _date,
    "tree": _tree,
}
# Commands whose positional arguments are files they read (checked against the path rules).
FILE_ARGS = frozenset(
    """cat head tail wc grep egrep fgrep rg ls stat file du diff cmp nl cut od hexdump strings sha1sum
    sha256sum sha512sum md5sum cksum tree tac rev sort uniq less more find cd realpath readlink jq sed
    fold paste comm column xxd""".split()
)


def is_read_only(cmd: SimpleCommand) -> bool:
    if not cmd.words:
        return True
    name = cmd.words[0]
    if name in CHECKS:
        return CHECKS[name](cmd.words)
    return name in PLAIN and not (name == "tree" and "-o" in cmd.words)


def path_arguments(cmd: SimpleCommand) -> list[str]:
    """Arguments of a read-only command that name files or folders it will read."""
    if not cmd.words or cmd.words[0] not in FILE_ARGS:
        return []
    args = cmd.words[1:]
    if cmd.words[0] == "find":
        args = [a for a in args[: next((i for i, a in enumerate(args) if a.startswith("-")), len(args))]]
    return [a for a in args if a and not a.startswith("-") and a != "$?"]
