"""What a git command would print of files' contents, read from its words alone.

Read rules hide files, and the sandbox hides them in the working tree; but git keeps every
version of every file in its object database, which no sandbox hides. So a git command is judged
by what it would show: most subcommands show names, states and messages and nothing of a file
(`status`, `add`, `commit`, `switch`, `log` without `-p`); `diff`, `log -p`, `show`, `stash
show`, `grep`, `blame` and `cat-file` show contents, of the files their arguments name or of
every file in their range, which only git can list (gitprobe.py asks it); anything else that may
show a file's content is unread, and asks while Read rules hide files.
"""

from __future__ import annotations

from arnes.permissions.gitgrep import grep_view
from arnes.permissions.gitoptions import DIFF, DIFF_ONLY, LOG, Scanned, Spec, scan
from arnes.permissions.gitview import Probe, Shows, is_plain_path, tree_path
from arnes.permissions.programs import COMPUTED, git_split

__all__ = ["Probe", "Shows", "shows", "tree_path"]

# Subcommands that print no file's content: names, states, hashes, messages. (Reading the working
# tree, as `add` or `commit -F` do, is the sandbox's to hide, as for `cp`.)
NAMES_ONLY = frozenset(
    """add am apply bisect branch check-attr check-ignore check-mailmap check-ref-format checkout cherry
    cherry-pick clean clone column commit commit-graph config count-objects describe fetch fsck gc
    hash-object init ls-files ls-remote ls-tree maintenance merge merge-base mv name-rev notes pack-refs prune
    pull push rebase reflog remote repack reset restore rev-list rev-parse revert rm shortlog show-branch
    show-ref sparse-checkout stage stash status stripspace switch tag var verify-commit verify-pack verify-tag
    version whatchanged worktree""".split()
)
# Of those, the ones that write the repository's files again under new paths (a clone, a worktree, a
# fetch into another repository and its checkout there), where the Read rules that hide them by
# path do not reach: `git clone . copy && cat copy/.env`. A fetch or pull names its source by a
# remote whose URL the repository's own config may point back at the workspace (`insteadOf`), so
# none of them is told apart by its source.
_COPIES = {"clone": (), "fetch": (), "pull": (), "worktree": ("add",), "submodule": ("add", "update")}
# Not on it: plumbing that puts an object under any name (`update-index --cacheinfo`, `read-tree`,
# `mktree`, `commit-tree`, `update-ref`): a hidden file's blob staged as `notes.txt` and checked out.

# Options that make one of them show changes hunk by hunk (or open an editor on them).
_HUNKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "add": ("pie", ("--patch", "--interactive", "--edit")),
    "stage": ("pie", ("--patch", "--interactive", "--edit")),
    "checkout": ("p", ("--patch",)),
    "restore": ("p", ("--patch",)),
    "reset": ("p", ("--patch",)),
    "commit": ("pv", ("--patch", "--interactive", "--verbose")),
    "status": ("v", ("--verbose",)),
    "stash": ("p", ("--patch",)),
}
# Options whose value is a file the command reads and may print back: a commit's message file is
# its summary line (`git commit -F .env` prints `[main 1a2b3c] SECRET=...`), a pathspec file its
# error (`pathspec 'SECRET=...' did not match`).
_PATHSPECS = ("--pathspec-from-file",)
_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "commit": ("Ft", ("--file", "--template", *_PATHSPECS)),
    "tag": ("F", ("--file",)),
    "merge": ("F", ("--file",)),
    "notes": ("F", ("--file",)),
    **dict.fromkeys(("add", "stage", "checkout", "reset", "restore", "rm", "stash"), ("", _PATHSPECS)),
}
# Global options that change nothing about which repository or files (the rest make it unread).
_PLAIN_GLOBALS = frozenset({"--no-pager", "-P", "-p", "--paginate", "--no-optional-locks", "--no-advice",
                            "--no-lazy-fetch"})  # fmt: skip
_PLACES = ("-C", "--git-dir", "--work-tree")


def shows(words: list[str]) -> Shows:
    """What `git ...` (`words`, wrappers peeled) would show of files' contents."""
    _, index = git_split(words)
    sub = words[index] if index < len(words) else None
    view = _view(sub, words[index + 1 :]) if sub is not None else Shows()
    globals_ = words[1:index]
    view.places += _places(globals_)
    odd = [w for w in globals_ if w.startswith("-") and w.split("=", 1)[0] not in _PLAIN_GLOBALS]
    if view.shows_content and odd and view.unread is None:
        view.unread = f"git {odd[0].split('=', 1)[0]} names another repository or configuration"
    if view.shows_content and COMPUTED in words and view.unread is None:
        view.unread = "a word of the git command is only known when it runs"
    return view


def _places(globals_: list[str]) -> list[str]:
    """The folders `-C`, `--git-dir` and `--work-tree` name: git reads there."""
    found = []
    for i, word in enumerate(globals_):
        name, eq, value = word.partition("=")
        if name in _PLACES and eq:
            found.append(value)
        elif word in _PLACES and i + 1 < len(globals_):
            found.append(globals_[i + 1])
    return found


def _view(sub: str, args: list[str]) -> Shows:
    if sub == COMPUTED:
        return Shows(unread="the git subcommand is only known when it runs")
    if sub == "diff":
        return _diff(args)
    if sub == "log":
        return _log(args)
    if sub == "show":
        return _show(args)
    if sub == "grep":
        return grep_view(args)
    if sub in ("blame", "annotate"):
        return Shows(paths=_blamed(args))
    if sub == "cat-file":
        return _cat_file(args)
    if sub == "stash" and args and args[0] in ("show", "list"):
        return _stash_show(args[1:]) if args[0] == "show" else _listed_log("stash list", args[1:])
    if sub in ("reflog", "whatchanged"):
        rest = args[1:] if sub == "reflog" and args and args[0] == "show" else args
        return _listed_log(f"git {sub}", rest)
    if sub in NAMES_ONLY:
        return _names_only(sub, args)
    return Shows(unread=f"arnes does not read what git {sub} shows")


def _object_ids(sub: str, args: list[str]) -> Shows | None:
    """A file's object id is the hash of its content: for a short secret (a PIN, a password of a
    known shape) the id is the secret to anyone who tries the candidates offline. These name files
    with their ids, so they are judged like the files' contents (None: this one prints no ids)."""
    options = (
        [w for w in args[: args.index("--")] if w.startswith("-")]
        if "--" in args
        else [w for w in args if w.startswith("-")]
    )
    if sub == "rev-parse":
        return Shows(tree_paths=[p for w in args if (p := tree_path(w)) is not None])
    if sub == "hash-object":
        if "--stdin-paths" in options:
            return Shows(unread="git hash-object --stdin-paths hashes files named in its input")
        return Shows(paths=[w for w in args if not w.startswith("-") and w != "--"])
    positional = [w for w in args if not w.startswith("-") and w != "--"]
    if sub == "ls-tree" and not any(_long(w, ("--name-only", "--name-status")) for w in options):
        if any(_long(w, ("--format",)) for w in options):
            return Shows(unread="git ls-tree --format may print anything of each file")
        return Shows(probe=Probe("tree", args=positional))  # the files whose ids it prints, held to the rules
    if sub == "ls-files" and any(
        w in ("-s", "-u") or _long(w, ("--stage", "--unmerged", "--format", "--debug", "--resolve-undo"))
        for w in options
    ):
        return Shows(probe=Probe("index", args=["--", *positional]))
    if sub == "rev-list" and any(
        _long(w, ("--objects", "--objects-edge", "--objects-edge-aggressive")) for w in options
    ):
        return Shows(unread="git rev-list --objects prints each file's object id, a hash of its content")
    return None


def _names_only(sub: str, args: list[str]) -> Shows:
    ids = _object_ids(sub, args)
    if ids is not None and ids.shows_content:
        return ids
    if sub in _COPIES and (not _COPIES[sub] or any(w in _COPIES[sub] for w in args[:1])):
        return Shows(unread=f"git {sub} writes the repository's files again under new paths, where the rules that "
                     "hide them do not reach")  # fmt: skip
    letters, longs = _HUNKS.get(sub, ("", ()))
    for word in args:
        if word == "--":
            break
        short = word.startswith("-") and not word.startswith("--")
        if (short and set(word[1:]) & set(letters)) or _long(word, longs):
            return Shows(unread=f"git {sub} {word} shows changes hunk by hunk")
    if sub in ("tag", "branch") and any(w.startswith("--format") and ("%(raw" in w or "%(contents" in w) for w in args):
        return Shows(unread=f"git {sub} --format with %(raw) or %(contents) prints the objects refs point at")
    if sub == "notes" and any(w in ("-C", "-c") or _long(w, ("--reuse-message", "--reedit-message")) for w in args):
        return Shows(unread="git notes -C copies an object, which may be a hidden file's content, into a note")
    if sub == "bisect" and args and args[0] in ("view", "visualize"):
        return Shows(unread="git bisect view runs git log with options arnes does not read here")
    if sub == "config":
        return _config(args)
    letters, longs = _FILES.get(sub, ("", ()))
    return Shows(paths=_values(args, letters, longs))


def _values(args: list[str], letters: str, longs: tuple[str, ...]) -> list[str]:
    """The values of these options, bundled or abbreviated (`-aF msg`, `--fi=msg`). A bundle's
    value may be its tail or the next word: both are taken, since a word judged needlessly is
    harmless and a file missed is not."""
    found = []
    for i, word in enumerate(args):
        if word == "--":
            break
        following = args[i + 1 : i + 2]
        if _long(word, longs):
            found += [word.split("=", 1)[1]] if "=" in word else following
        elif word.startswith("-") and not word.startswith("--") and letters:
            at = min((word.find(c, 1) for c in letters if c in word[1:]), default=-1)
            if at > 0:
                found += [t for t in (word[at + 1 :], *following) if t]
    return [f for f in found if f != "-"]


def _long(word: str, names: tuple[str, ...]) -> bool:
    """A long option or an abbreviation of it (parse-options takes any unambiguous prefix)."""
    given = word.split("=", 1)[0]
    return len(given) > 2 and given.startswith("--") and any(n.startswith(given) for n in names)


def _config(args: list[str]) -> Shows:
    """`git config --file F` reads F; `--blob X` reads an object (a hidden file's, perhaps)."""
    view = Shows(paths=_values(args, "f", ("--file",)))
    for blob in _values(args, "", ("--blob",)):
        path = tree_path(blob)
        if path is None:
            view.unread = "git config --blob reads an object arnes cannot tie to a path"
        else:
            view.tree_paths.append(path)
    return view


def _diff(args: list[str]) -> Shows:
    scanned = scan(args, {**DIFF, **DIFF_ONLY})
    view = Shows(writes=scanned.writes)
    if scanned.unread:
        view.unread = scanned.unread
        return view
    if not scanned.shows_content and "names" in scanned.roles:
        return view
    view.paths += [p for p in scanned.paths if is_plain_path(p)]
    trees = [tree_path(p) for p in scanned.positionals]
    if any(t is not None for t in trees):
        # `git diff A:x B:y` compares two files of revisions: those are judged as paths, and both
        # must be files (a tree's diff shows every file under it)
        if not all(t is not None for t in trees) or scanned.paths:
            view.unread = "git diff mixes a file of a revision with other arguments"
            return view
        view.tree_paths += [t for t in trees if t is not None]
        view.probe = Probe("blobs", verify=scanned.positionals)
        return view
    view.probe = Probe("diff", scanned.kept, verify=_revision_words(scanned))
    return view


def _revision_words(scanned: Scanned) -> list[str]:
    """The words git picks its revisions from, as `git rev-parse --revs-only` wants them."""
    return scanned.positionals + (["--", *scanned.paths] if scanned.dashdash else [])


def _log(args: list[str]) -> Shows:
    scanned = scan(args, LOG)
    view = Shows(writes=scanned.writes, unread=scanned.unread)
    if scanned.unread or not scanned.shows_content:
        return view
    view.paths += [p for p in scanned.paths if is_plain_path(p)]
    view.probe = Probe("log", scanned.kept)
    return view


def _show(args: list[str]) -> Shows:
    """`git show` prints a commit's diff, a tag's message, a tree's names, a file's content."""
    scanned = scan(args, LOG)
    view = Shows(writes=scanned.writes, unread=scanned.unread)
    if scanned.unread:
        return view
    trees = [t for t in (tree_path(p) for p in scanned.positionals) if t is not None]
    view.tree_paths += trees
    revisions = [p for p in scanned.positionals if tree_path(p) is None]
    kept = [w for w in scanned.kept if w not in scanned.positionals or w in revisions]
    view.paths += [p for p in scanned.paths if is_plain_path(p)]
    if revisions or not trees:  # with no revision at all, HEAD
        names_only = not scanned.shows_content and "names" in scanned.roles
        words = revisions + (["--", *scanned.paths] if scanned.dashdash else [])
        view.probe = Probe("show", kept, verify=words, names_only=names_only)
    return view


def _listed_log(what: str, args: list[str]) -> Shows:
    scanned = scan(args, LOG)
    if scanned.unread or scanned.shows_content:
        return Shows(unread=scanned.unread or f"{what} with a diff shows the changes of any file")
    return Shows()


_STASH_SHOW: dict[str, Spec] = {
    **DIFF,
    **dict.fromkeys(("-u", "--include-untracked", "--only-untracked", "--no-include-untracked"), Spec("keep", "none")),
}


def _stash_show(args: list[str]) -> Shows:
    scanned = scan(args, _STASH_SHOW)
    if scanned.unread:
        return Shows(unread=scanned.unread)
    if not scanned.shows_content and "names" in scanned.roles:
        return Shows()  # an explicit format wins over stash.showPatch
    if len(scanned.positionals) > 1 or scanned.paths:
        return Shows(unread="git stash show takes one stash")
    given = scanned.positionals[0] if scanned.positionals else "0"
    return Shows(probe=Probe("stash", stash=f"stash@{{{given}}}" if given.isdigit() else given))


def _blamed(args: list[str]) -> list[str]:
    """Every word of a blame that may name a file: its positionals and file options' values (a
    revision judged as a path is harmless; a file missed would not be)."""
    found = []
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        if not word.startswith("-") and word:
            found.append(word)
        elif name in ("--contents", "--ignore-revs-file", "-S") and not eq and i + 1 < len(args):
            found.append(args[i + 1])
        elif name in ("--contents", "--ignore-revs-file") and eq:
            found.append(value)
    return found


_CAT_NAMES = frozenset(
    "-t -s -e --batch-check --allow-unknown-type --follow-symlinks -Z --buffer --unordered --mailmap --use-mailmap "
    "--no-mailmap --no-use-mailmap".split()
)


def _cat_file(args: list[str]) -> Shows:
    """`-t/-s/-e` and `--batch-check` print types and sizes; `-p X` and `TYPE X` print the object."""
    options = [w for w in args if w.startswith("-")]
    positionals = [w for w in args if not w.startswith("-")]
    if any(o.split("=", 1)[0] not in _CAT_NAMES | {"-p"} for o in options):
        return Shows(unread="git cat-file with these options prints objects arnes cannot tie to paths")
    if "-p" not in options and not positionals[:-1]:
        return Shows()  # -t, -s, -e, --batch-check: types and sizes
    if not positionals:
        return Shows(unread="git cat-file reads the objects to print from its input")
    path = tree_path(positionals[-1])
    if path is not None:
        return Shows(tree_paths=[path])
    return Shows(probe=Probe("object", verify=[positionals[-1]]))
