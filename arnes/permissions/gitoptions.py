"""The options of git's diff, log and show, as git 2.39 reads them: which take a value, and what
each does to what the command prints. gitshows.py reads a command with them to tell what it
shows, and to make the names-only run that asks git which files that is (gitprobe.py).

A word is read exactly as git reads it or not at all: an option missing here, or one that
takes its value in a way not listed (`--format x`, a bundle `-ps`), makes the command unread, and
an unread git command that may show a file's content asks. A value taken for a path would
narrow the run that finds the files, and a hidden file could slip through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# content: prints files' contents (or searches them); names: a names-only output format;
# drop: changes only how things are printed (left out of the names-only run); keep: changes
# which commits or files are shown (kept in it); ask: arnes cannot tell what it shows; write: a file.
Role = Literal["content", "names", "drop", "keep", "ask", "write"]
# none: a flag; sep: a value after `=` or as the next word (a short option's also glued: -S<x>);
# eq: an optional value, only after `=` (a short option's only glued: -M50%).
Arity = Literal["none", "sep", "eq"]


@dataclass(frozen=True)
class Spec:
    role: Role
    arity: Arity


def _specs(arity: Arity, role: Role, names: str) -> dict[str, Spec]:
    return dict.fromkeys(names.split(), Spec(role, arity))


DIFF: dict[str, Spec] = {
    **_specs(
        "none",
        "content",
        """-p -u --patch --patch-with-raw --patch-with-stat -W --function-context --binary
        --check -c --cc --combined-all-paths --pickaxe-all --pickaxe-regex""",
    ),
    **_specs("eq", "content", "-U --unified --word-diff --color-words"),
    **_specs("sep", "content", "--word-diff-regex -S -G"),
    **_specs(
        "none",
        "names",
        """-s --no-patch --raw --compact-summary --numstat --shortstat --cumulative --summary
        --name-only --name-status --quiet""",
    ),
    **_specs("eq", "names", "--stat -X --dirstat --dirstat-by-file"),
    **_specs("sep", "names", "--stat-width --stat-name-width --stat-count --stat-graph-width"),
    **_specs(
        "none",
        "drop",
        """-z --exit-code --no-color --no-color-moved --no-color-moved-ws --full-index -D
        --irreversible-delete -a --text --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w
        --ignore-all-space --ignore-blank-lines --no-ext-diff --no-textconv --no-prefix --default-prefix
        --indent-heuristic --no-indent-heuristic --minimal --patience --histogram --no-relative""",
    ),
    **_specs("eq", "drop", "--color --color-moved --abbrev --ignore-submodules --relative"),
    **_specs(
        "sep",
        "drop",
        """--output-indicator-new --output-indicator-old --output-indicator-context --anchored
        --diff-algorithm --ws-error-highlight --src-prefix --dst-prefix --line-prefix --inter-hunk-context
        --color-moved-ws -I --ignore-matching-lines --rotate-to --skip-to --find-object -O""",
    ),
    **_specs("none", "keep", "-R --no-renames --rename-empty --no-rename-empty --ita-invisible-in-index"),
    **_specs("none", "keep", "--ita-visible-in-index"),
    **_specs("eq", "keep", "-B --break-rewrites -M --find-renames -C --find-copies"),
    **_specs("sep", "keep", "--diff-filter -l"),
    **_specs("none", "ask", "--find-copies-harder --ext-diff --textconv --no-index"),
    **_specs("eq", "ask", "--submodule"),
    **_specs("sep", "write", "--output"),
}
# `git diff` alone: which sides are compared.
DIFF_ONLY: dict[str, Spec] = _specs("none", "keep", "--cached --staged --merge-base -0 -1 -2 -3 --base --ours --theirs")
# Options of the revision walk (log, show) and of how commits are printed.
REVISIONS: dict[str, Spec] = {
    **_specs("none", "content", "--dd --remerge-diff"),
    **_specs("sep", "content", "--diff-merges"),
    **_specs(
        "none",
        "drop",
        """-m --no-diff-merges --oneline --graph --abbrev-commit --no-abbrev-commit
        --relative-date --source --no-decorate --clear-decorations --log-size --show-linear-break --no-notes
        --standard-notes --no-standard-notes --mailmap --use-mailmap --no-mailmap --no-use-mailmap --show-signature
        --no-show-signature --parents --children --left-right --no-expand-tabs""",
    ),
    **_specs("eq", "drop", "--format --pretty --decorate --notes --show-notes --expand-tabs"),
    **_specs("sep", "drop", "--date --encoding --decorate-refs --decorate-refs-exclude"),
    **_specs(
        "none",
        "keep",
        """--all --reflog --alternate-refs --single-worktree --ignore-missing --bisect --not
        --first-parent --exclude-first-parent-only --merges --no-merges --no-min-parents --no-max-parents
        --cherry-pick --cherry-mark --left-only --right-only --cherry --walk-reflogs -g --merge --boundary
        --simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges --do-walk
        --reverse --topo-order --date-order --author-date-order --follow --full-diff --all-match --invert-grep
        -i --regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P --perl-regexp""",
    ),
    **_specs("eq", "keep", "--branches --tags --remotes --ancestry-path --no-walk --min-parents --max-parents"),
    **_specs(
        "sep",
        "keep",
        """-n --max-count --skip --since --after --until --before --since-as-filter --author
        --committer --grep --grep-reflog --glob --exclude --exclude-hidden --max-age --min-age""",
    ),
    **_specs("none", "ask", "--stdin"),
    **_specs("sep", "ask", "-L"),
}
LOG = {**DIFF, **REVISIONS}


@dataclass
class Scanned:
    """A command's arguments read with a table."""

    kept: list[str] = field(default_factory=list)  # for the names-only run: kept options and positionals, in order
    positionals: list[str] = field(default_factory=list)  # words that are not options, before `--`
    paths: list[str] = field(default_factory=list)  # the words after `--`
    dashdash: bool = False
    roles: set[Role] = field(default_factory=set)
    writes: list[str] = field(default_factory=list)
    unread: str | None = None  # why arnes cannot read it

    @property
    def shows_content(self) -> bool:
        return "content" in self.roles


def scan(args: list[str], table: dict[str, Spec]) -> Scanned:
    out = Scanned()
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            out.paths, out.dashdash = args[i + 1 :], True
            out.kept += args[i:]
            break
        if not word.startswith("-") or word == "-" or word[1:].isdigit():
            if word.startswith("-"):  # -N: at most N commits (log), a stage (diff)
                out.kept.append(word)
            else:
                out.positionals.append(word)
                out.kept.append(word)
            i += 1
            continue
        taken, value = _option(args, i, table)
        if taken == 0:
            out.unread = f"arnes does not read the git option {word}"
            return out
        spec = table[_name(word)]
        out.roles.add(spec.role)
        if spec.role == "ask":
            out.unread = f"arnes does not follow {_name(word)}"
            return out
        if spec.role == "write" and value is not None:
            out.writes.append(value)
        if spec.role == "keep":
            out.kept += args[i : i + taken]
        i += taken
    return out


def _name(word: str) -> str:
    return word.split("=", 1)[0] if word.startswith("--") else word[:2]


def _option(args: list[str], i: int, table: dict[str, Spec]) -> tuple[int, str | None]:
    """How many words the option at `i` takes (0: not one git reads this way) and its value."""
    word = args[i]
    spec = table.get(_name(word))
    if spec is None:
        return 0, None
    if word.startswith("--"):
        _, eq, value = word.partition("=")
        if eq:
            return (1, value) if spec.arity != "none" else (0, None)
    else:
        glued = word[2:]
        if glued:
            return (1, glued) if spec.arity != "none" else (0, None)
    if spec.arity == "sep":
        return (2, args[i + 1]) if i + 1 < len(args) else (0, None)
    return 1, None
