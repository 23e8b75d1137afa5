"""`git grep` read as git 2.39 reads it: its pattern, the files it names, and what it searches.

Every line it prints is a line of a file it searched, and even `-l`, `-c` or `-q` tell something
of those files' contents; so what counts is the files it searches, not the ones that match. Those
are listed by git itself (gitprobe.py, `git grep -l -e ''` over the same files). Searches of
revisions, of submodules and outside the index (`--no-index`) are not read here and ask.
"""

from __future__ import annotations

from arnes.permissions.gitview import Probe, Shows

# parse-options: long options may be abbreviated, short ones bundled (`-in`), values glued (`-C3`).
_FLAGS = frozenset(
    """--cached --untracked --exclude-standard --no-exclude-standard -v --invert-match -i --ignore-case -I -w
    --word-regexp -a --text --no-textconv -r --recursive --no-recursive -E --extended-regexp -G --basic-regexp
    -F --fixed-strings -P --perl-regexp -n --line-number --column -h -H --full-name -l --files-with-matches
    --name-only -L --files-without-match -z --null -o --only-matching -c --count --no-color --break --heading
    -p --show-function -W --function-context --and --or --not --all-match -q --quiet --no-index
    --recurse-submodules --textconv --no-recurse-submodules""".split()
)
_VALUES = frozenset(
    """-e -f --max-depth --threads -A --after-context -B --before-context -C --context -m --max-count""".split()
)
_OPTIONAL = frozenset({"--color", "-O", "--open-files-in-pager"})
_SCOPE = frozenset({"--cached", "--untracked", "--exclude-standard", "--no-exclude-standard", "--max-depth", "-r",
                    "--recursive", "--no-recursive"})  # fmt: skip
_ASK = {
    "--no-index": "git grep --no-index searches every file of the folder, hidden ones too",
    "--recurse-submodules": "git grep --recurse-submodules searches other repositories",
    "--textconv": "git grep --textconv runs the repository's conversion programs",
    "-O": "git grep -O opens the files it found in a program",
    "--open-files-in-pager": "git grep -O opens the files it found in a program",
}
_LONGS = sorted(n for n in _FLAGS | _VALUES | _OPTIONAL if n.startswith("--"))


def grep_view(args: list[str]) -> Shows:
    view = Shows()
    kept: list[str] = []
    positionals: list[str] = []
    pattern_given = False
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            kept += args[i:]
            break
        if not word.startswith("-") or word == "-":
            positionals.append(word)
            i += 1
            continue
        if word[1:].isdigit():  # -3: three lines of context
            i += 1
            continue
        options = _read_option(args, i)
        if options is None:
            view.unread = f"arnes does not read the git grep option {word}"
            return view
        taken, found = options
        for name, value in found:
            if name in _ASK:
                view.unread = _ASK[name]
                return view
            if name in ("-e", "-f"):
                pattern_given = True
            if name == "-f" and value is not None:
                view.paths.append(value)
            if name in _SCOPE:
                kept += [name] if value is None else [f"{name}={value}"]
        i += taken
    # without -e the first is the pattern; with it, ( and ) group patterns: --and ( -e a -e b )
    positionals = [p for p in positionals if p not in ("(", ")")] if pattern_given else positionals[1:]
    view.probe = Probe("grep", kept, verify=positionals)
    return view


def _read_option(args: list[str], i: int) -> tuple[int, list[tuple[str, str | None]]] | None:
    """(words taken, [(option, value)]) for the option at `i`, or None: not read."""
    word = args[i]
    if word.startswith("--"):
        given, eq, value = word.partition("=")
        name = given if given in _FLAGS | _VALUES | _OPTIONAL else _abbreviated(given)
        if name is None:
            return None
        if name in _FLAGS:
            return (1, [(name, None)]) if not eq else None
        if name in _OPTIONAL or eq:
            return 1, [(name, value if eq else None)]
        return (2, [(name, args[i + 1])]) if i + 1 < len(args) else None
    found: list[tuple[str, str | None]] = []
    for j in range(1, len(word)):
        name = "-" + word[j]
        rest = word[j + 1 :]
        if name in _VALUES:
            if rest:
                return 1, [*found, (name, rest)]
            return (2, [*found, (name, args[i + 1])]) if i + 1 < len(args) else None
        if name in _OPTIONAL:
            return 1, [*found, (name, rest or None)]
        if name not in _FLAGS:
            return None
        found.append((name, None))
    return 1, found


def _abbreviated(given: str) -> str | None:
    """The one long option `given` abbreviates (git refuses an ambiguous one, and so does this)."""
    matches = [n for n in _LONGS if n.startswith(given)]
    return matches[0] if len(matches) == 1 else None
