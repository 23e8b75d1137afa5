"""Which commands only read: they run without asking in `default` and `plan` (in the spirit of
Codex's safe-command list). Anything not provably read-only is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from arnes.permissions.simplecommand import SimpleCommand

# Commands that only read, audited option by option (tests/test_readonly_audit.py holds each
# entry's writing, executing and file-reading options). Not here: `env`/`printenv` (they print the
# secrets in the environment), `hostname` (`hostname NAME` renames the machine), `less`/`more`
# (`!cmd`, `v`, `-o FILE` and LESSOPEN run or write; a pager is no use without a terminal).
PLAIN = frozenset(
    """cat head tail wc pwd echo printf true false grep egrep fgrep which whoami uname id stat file du df
    basename dirname realpath readlink diff cmp nl tr cut column seq test [ type comm fold paste rev tac od
    hexdump strings sha1sum sha256sum sha512sum md5sum cksum jq ls tree cd expr""".split()
)
GIT_READ = frozenset({"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "describe", "grep",
                      "shortlog", "show-ref", "cat-file", "ls-tree", "reflog"})  # fmt: skip
FIND_WRITES = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_SED_PRINT = re.compile(r"^\d+(,\d+)?p$")


def _positionals(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith("-") or w == "-"]  # a lone `-` is stdin/stdout


def long_option(word: str, *names: str) -> bool:
    """GNU tools take any unambiguous prefix of a long option: `--outp=x` is `--output=x`."""
    if not word.startswith("--") or len(word) < 3:
        return False
    given = word[2:].split("=", 1)[0]
    return any(name[2:].startswith(given) for name in names)


def git_subcommand(words: list[str]) -> str | None:
    args = words[1:]
    while args and args[0] in ("--no-pager", "-P"):
        args = args[1:]
    return args[0] if args else None


def _git(words: list[str]) -> bool:
    """A git command that shows, never writes or runs: no global options but --no-pager (`-C`,
    `-c`, `--git-dir` change which repository and which configuration run), none of the options
    that write a file or run a program. The repository's own configuration is checked apart
    (commands.py), because it can name programs (core.fsmonitor, diff drivers) for any of these."""
    args = words[1:]
    while args and args[0] in ("--no-pager", "-P"):
        args = args[1:]
    if args and args[0] == "branch":
        return _git_branch_list(args[1:])
    if not args or args[0] not in GIT_READ:
        return False
    risky_long = ("--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--no-index", "--filters")
    if any(a.startswith(("-o", "-O")) or long_option(a, *risky_long) for a in args[1:]):
        return False
    return not (args[0] == "reflog" and len(args) > 1 and args[1] not in ("show", "exists", "list"))


_BRANCH_FLAGS = frozenset("-a --all -r --remotes -v -vv --verbose -l --list --show-current -i --ignore-case "
                          "--no-color --no-column --omit-empty".split())  # fmt: skip
_BRANCH_VALUES = frozenset({"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort"})
_BRANCH_EQ = frozenset({"--color", "--column", "--abbrev"})


def _git_branch_list(args: list[str]) -> bool:
    """`git branch` that lists: only listing options (not `--format`: its atoms print objects), and
    names only as patterns after `--list`; any other word creates, moves or deletes a branch."""
    listing = any(a in ("-l", "--list") for a in args)
    i = 0
    while i < len(args):
        word = args[i]
        name, eq, _ = word.partition("=")
        if name in _BRANCH_VALUES and not eq:
            i += 1  # its value is the next word
        elif not (word in _BRANCH_FLAGS or name in _BRANCH_VALUES or (name in _BRANCH_EQ and eq)) and (
            word.startswith("-") or not listing
        ):
            return False
        i += 1
    return True


def _sed(words: list[str]) -> bool:
    """Only `sed -n N[,M]p FILE...`: any other script or option may write (w, -i) or run (e)."""
    if len(words) < 3 or words[1] != "-n" or not _SED_PRINT.match(words[2]):
        return False
    return not any(w.startswith("-") for w in words[3:])


def _find(words: list[str]) -> bool:
    return not any(w in FIND_WRITES for w in words)


def _short(word: str, letter: str) -> bool:
    """A short option in a bundle: `-mo` has `-o`."""
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


def _sort(words: list[str]) -> bool:
    """-o writes, --compress-program runs, -T writes temporary files in any folder."""
    return not any(
        _short(w, "o") or _short(w, "T") or long_option(w, "--output", "--compress-program", "--temporary-directory")
        for w in words[1:]
    )


def _no_v(words: list[str]) -> bool:
    """printf -v / test -v take a variable name that bash evaluates (`a[$(cmd)]`)."""
    return not any(w.startswith("-v") for w in words[1:])


def _rg(words: list[str]) -> bool:
    """--pre and --hostname-bin run a program; -z runs decompressors."""
    return not any(
        long_option(w, "--pre", "--pre-glob", "--search-zip", "--hostname-bin") or _short(w, "z") for w in words[1:]
    )


def _uniq(words: list[str]) -> bool:
    return len(_positionals(words[1:])) <= 1


def _xxd(words: list[str]) -> bool:
    return not any(w.startswith("-r") for w in words[1:]) and len(_positionals(words[1:])) <= 1


def _date(words: list[str]) -> bool:
    return not any(_short(w, "s") or long_option(w, "--set") for w in words[1:])


def _tree(words: list[str]) -> bool:
    """-o writes the listing; -R with -H writes an index file into every folder."""
    return not any(w in ("-o", "-R") or _short(w, "o") or _short(w, "R") for w in words[1:])


def _file(words: list[str]) -> bool:
    """-C compiles a magic file, writing NAME.mgc."""
    return not any(_short(w, "C") or long_option(w, "--compile") for w in words[1:])


def _checksum(words: list[str]) -> bool:
    """-c reads a list of files and reads every file it names (outside ones too)."""
    return not any(_short(w, "c") or long_option(w, "--check") for w in words[1:])


# jq built-ins that read the environment (secrets) or files named in the program.
_JQ_READS = re.compile(r"\b(env|input_filename|import|include|\$__loc__|\$ENV|get_search_list)\b|\$ENV")


def _jq(words: list[str]) -> bool:
    """`env`/`$ENV` print the environment; `import`/`include`/-L read modules from any folder."""
    if any(w.startswith("-L") or long_option(w, "--library-path") for w in words[1:]):
        return False
    return not any(_JQ_READS.search(w) for w in words[1:])


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
    "file": _file,
    "jq": _jq,
    **dict.fromkeys(("sha1sum", "sha256sum", "sha512sum", "md5sum", "cksum"), _checksum),
    "printf": _no_v,
    "test": _no_v,
    "[": _no_v,
}
# Variables that only change formatting may stand before a read-only command; any other
# (GIT_CONFIG_*, PATH, LESSOPEN, GIT_EXTERNAL_DIFF, ...) can make it run something.
SAFE_ENV = frozenset({"LC_ALL", "LANG", "LANGUAGE", "TZ", "NO_COLOR", "COLUMNS", "LINES", "TERM"})
# Commands whose positional arguments are files they read (checked against the path rules).
FILE_ARGS = frozenset(
    """cat head tail wc grep egrep fgrep rg ls stat file du diff cmp nl cut od hexdump strings sha1sum
    sha256sum sha512sum md5sum cksum tree tac rev sort uniq less more find cd realpath readlink jq sed
    fold paste comm column xxd""".split()
)


def is_read_only(cmd: SimpleCommand) -> bool:
    if not cmd.words:
        return not cmd.wrappers  # a bare `env` prints the environment
    if cmd.privileged or cmd.unknown_args or any(v.split("=", 1)[0] not in SAFE_ENV for v in cmd.env):
        return False  # another user, arguments nobody can see (xargs), or a variable that changes it
    name = cmd.words[0]
    if name in CHECKS:
        return CHECKS[name](cmd.words)
    return name in PLAIN


# Options whose value is a file the command reads.
FILE_OPTIONS: dict[str, frozenset[str]] = {
    "grep": frozenset({"-f", "--file", "--exclude-from"}),
    "egrep": frozenset({"-f", "--file", "--exclude-from"}),
    "fgrep": frozenset({"-f", "--file", "--exclude-from"}),
    "rg": frozenset({"-f", "--file", "--ignore-file"}),
    "wc": frozenset({"--files0-from"}),
    "du": frozenset({"--files0-from", "-X", "--exclude-from"}),
    "sort": frozenset({"--files0-from", "--random-source"}),
    "diff": frozenset({"--from-file", "--to-file", "-X", "--exclude-from"}),
    "hexdump": frozenset({"-f", "--format-file"}),
    "git": frozenset({"--contents", "--ignore-revs-file", "--exclude-from", "-X"}),
    "date": frozenset({"-f", "--file", "-r", "--reference"}),
    "jq": frozenset({"-f", "--from-file"}),
    "stat": frozenset(),
    "find": frozenset({"-files0-from"}),
    "file": frozenset({"-f", "-m", "--files-from", "--magic-file"}),
}
COMPUTED = "$?"  # how the parser marks a word whose value is only known at run time


def path_arguments(cmd: SimpleCommand) -> list[str]:
    """What a read-only command will read: its file arguments and the files its options name.

    A word computed at run time comes back as COMPUTED, so the caller can ask about it.
    """
    if not cmd.words:
        return []
    name, args = cmd.words[0], cmd.words[1:]
    options = FILE_OPTIONS.get(name, frozenset())
    longs = [o for o in options if o.startswith("--")]
    shorts = [o for o in options if not o.startswith("--")]
    found: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.split("=", 1)[0] in options or long_option(word, *longs):
            if "=" in word:
                found.append(word.split("=", 1)[1])
            elif i + 1 < len(args):
                found.append(args[i + 1])
                i += 1
        elif attached := next((o for o in shorts if word.startswith(o) and len(word) > len(o)), None):
            found.append(word[len(attached) :])  # -fFILE
        i += 1
    if name == "jq":  # --slurpfile/--rawfile NAME FILE: two values
        found += [args[i + 2] for i, a in enumerate(args[:-2]) if long_option(a, "--slurpfile", "--rawfile")]
    if name == "strings":  # @FILE: options read from a file (and shown back in errors)
        found += [a[1:] for a in args if a.startswith("@")]
    if name == "git":
        found += _git_paths(cmd.words)
    if name in ("test", "["):
        found += _test_paths(args)
    if name in FILE_ARGS:
        positional = args
        if name == "find":
            positional = args[: next((i for i, a in enumerate(args) if a.startswith("-")), len(args))]
        found += [a for a in positional if a and (not a.startswith("-") or a == COMPUTED)]
    return found


# `test`/`[` operators whose operand is a file: asking about it tells whether it exists.
TEST_FILE_OPERATORS = frozenset("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S".split())


def _test_paths(args: list[str]) -> list[str]:
    """The files `test`/`[` looks at: the operand of each file operator, both sides of -nt/-ot/-ef."""
    found = []
    for i, word in enumerate(args):
        if word in TEST_FILE_OPERATORS and word != "-t" and i + 1 < len(args) and args[i + 1] != "]":
            found.append(args[i + 1])
        elif word in ("-nt", "-ot", "-ef") and 0 < i < len(args) - 1:
            found += [args[i - 1], args[i + 1]]
    return found


def _git_paths(words: list[str]) -> list[str]:
    """git diff with a path outside the repository compares files (as --no-index): its words are
    judged as paths; so are blame -S and grep -f, which read a file."""
    sub = git_subcommand(words)
    args = words[words.index(sub) + 1 :] if sub in words else []
    found = []
    for i, word in enumerate(args):
        if word in ("-S", "-f") and sub in ("blame", "grep") and i + 1 < len(args):
            found.append(args[i + 1])
        elif sub == "grep" and word.startswith("-f") and len(word) > 2:
            found.append(word[2:])
        elif sub == "diff" and (not word.startswith(("-", ":")) or word == COMPUTED) and not set("*?[") & set(word):
            found.append(word)  # a pathspec's glob or magic is git's: what it covers is git's to list
    return found
