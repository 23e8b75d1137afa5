"""git's state-writing commands as arnes runs them on the host (docs/shell.md, "git"): `.git` is
read-only inside bubblewrap, and must stay so (docs/redteam/git-writable.md), so the few commands
permissions/gitroute.py lets through (`git add`, `git commit`, `git restore --staged`, `git rm
--cached`, `git reset` of the index, a new branch) run here, outside the sandbox.

Everything git.py does for its read-only commands holds (the workspace's own `.git` folder named
explicitly, the user's GIT_* dropped, no `git` from inside the workspace, fsmonitor, hooks,
pagers, transports and the repository's filter drivers off), and on top:
- no editor runs (`core.editor=:`, git's "keep the text as it is") and nothing is signed
  (`commit.gpgSign=false`; the signing programs are set to `false` as well), so neither a
  repository's `gpg.program` nor its `core.editor` can run;
- the repository's own config may hold only keys known to name no program on these paths (or
  keys the command line overrides); any other key, today's `hook.*` or a driver git adds
  tomorrow, means git is not run, and the reason says which key;
- git writes only inside the workspace's `.git`: it writes some files in place through
  whatever is there (`COMMIT_EDITMSG`, the reflogs in `logs/`), so a `.git` a repository
  shipped with a link in it (`COMMIT_EDITMSG -> ~/.bashrc`: the commit message lands there), a
  hard link out of `objects/`, or a `commondir` (the refs and objects of another folder) is not
  written at all (`contained`);
- a command that reads the working tree is checked first for repositories inside it
  (`work_tree`): `git add` runs `git status` inside a submodule or a nested repository, with that
  repository's own configuration, which nothing here turns off.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arnes.host.git import (
    LFS_INERT,
    SAFE_CONFIG,
    Repository,
    environment,
    no_filters,
    repository_keys,
    run_git,
    unsafe_key,
)

WRITE_SUBCOMMANDS = frozenset({"add", "commit", "restore", "rm", "reset", "switch", "checkout", "branch"})
WRITE_CONFIG = (
    *SAFE_CONFIG,
    "core.editor=:",  # `:` is git's own "no editor": the message is the one given with -m
    "sequence.editor=:",
    "commit.gpgSign=false",  # signing runs gpg.program (or ssh-keygen), which the repository may name
    "tag.gpgSign=false",
    "gpg.program=false",
    "gpg.openpgp.program=false",
    "gpg.x509.program=false",
    "gpg.ssh.program=false",
    "gpg.ssh.defaultKeyCommand=false",
)


# As `git config --name-only` prints them (no subsection above has a capital letter).
_OVERRIDDEN = frozenset(item.split("=", 1)[0].lower() for item in WRITE_CONFIG)
# Sections whose every key is harmless on these paths: names and identities, colours, settings of
# commands that do not run here (fetch, pull, gc, maintenance, rerere), git's own format
# extensions, aliases (a built-in subcommand is never an alias), the signing settings (nothing is
# signed), the filter drivers (each one emptied) and branches' upstreams and descriptions.
_ANY_KEY = frozenset(
    "user author committer color pull fetch extensions index pack feature advice i18n gui rerere gc maintenance "
    "init column alias gpg filter branch".split()
)
# Keys of the other sections, by section; `*.` where the key sits under a subsection. Not
# `core.sparseCheckout`: with it, `checkout -q -b` applies the repository's sparse patterns,
# deleting and checking out working-tree files (a deny rule's, `.arnes/`) on the host.
_KEYS: dict[str, frozenset[str]] = {
    "core": frozenset(
        """repositoryformatversion filemode bare logallrefupdates ignorecase precomposeunicode symlinks autocrlf
        safecrlf eol quotepath abbrev compression loosecompression checkstat trustctime untrackedcache splitindex
        commitgraph multipackindex sharedrepository whitespace longpaths preloadindex fscache""".split()
    ),
    "remote": frozenset(
        """*.url *.fetch *.pushurl *.tagopt *.mirror *.prune *.prunetags *.skipdefaultupdate *.skipfetchall
        *.promisor *.partialclonefilter *.push""".split()
    ),
    "push": frozenset({"default", "autosetupremote", "followtags"}),
    "submodule": frozenset({"*.url", "*.active", "*.path", "*.branch"}),
    "lfs": frozenset(name.removeprefix("lfs.") for name in LFS_INERT),
    "commit": frozenset({"cleanup", "status", "verbose", "template"}),  # -m or --no-edit: no template is read
}


def unknown_key(names: list[str]) -> str | None:
    """The first of the repository's config keys not known to be harmless here, or None."""
    for name in names:
        section, _, rest = name.partition(".")
        sub, _, key = rest.rpartition(".")
        if name in _OVERRIDDEN or section in _ANY_KEY or (f"*.{key}" if sub else key) in _KEYS.get(section, ()):
            continue
        return name
    return None


@dataclass(frozen=True)
class HostRun:
    """A git command ready to run on the host: argv, environment, and the folder it starts in."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


def write_command(repo: Repository, args: list[str]) -> HostRun | str:
    """How to run one state-writing git command on the host (`args` from the subcommand on,
    already read by permissions/gitroute.py), or why arnes does not run it."""
    if not args or args[0] not in WRITE_SUBCOMMANDS:
        raise ValueError(f"arnes runs only {', '.join(sorted(WRITE_SUBCOMMANDS))} this way, not {args[:1]}")
    outside = contained(repo.git_dir)
    if outside is not None:
        return f"{outside}, so git could write outside the workspace; git was not run"
    env = environment(repo)
    names = repository_keys(repo)
    if isinstance(names, str):
        return names
    unsafe = unsafe_key(names)
    if unsafe is not None:
        return f"{unsafe}; git was not run"
    odd = unknown_key(names)
    if odd is not None:
        return (
            f"the repository's config sets {odd}, which arnes does not know to be harmless when git writes the "
            "repository on the host; git was not run"
        )
    no_filters(env, names)
    options = [a for item in WRITE_CONFIG for a in ("-c", item)]
    return HostRun([repo.git, "--no-pager", *options, *args], env, repo.workspace)


def contained(git_dir: Path) -> str | None:
    """Why a write into `git_dir` could land elsewhere, or None: a link anywhere in it, a file
    git writes in place that has another name (a hard link; `objects/` and git-lfs's `lfs/` only
    get new files, and a local clone hard-links objects), something that is neither file nor
    folder (a FIFO would hold git), or a `commondir` that makes another folder the repository.
    The sandbox keeps `.git` read-only, so no command can change this after the check."""
    if os.path.lexists(git_dir / "commondir"):
        return ".git/commondir names another folder as the repository"
    unread: list[OSError] = []
    for root, folders, files in os.walk(git_dir, onerror=unread.append):
        for name in folders + files:
            path = Path(root, name)
            try:
                mode = os.lstat(path)
            except OSError as exc:
                unread.append(exc)
                continue
            shown = f".git/{path.relative_to(git_dir)}"
            if stat.S_ISLNK(mode.st_mode):
                return f"{shown} is a link"
            if not (stat.S_ISDIR(mode.st_mode) or stat.S_ISREG(mode.st_mode)):
                return f"{shown} is not a file or a folder"
            parts = path.relative_to(git_dir).parts  # objects (a submodule's too) and lfs/ only get new files
            in_place = "objects" not in parts and parts[0] != "lfs"
            if stat.S_ISREG(mode.st_mode) and mode.st_nlink > 1 and in_place:
                return f"{shown} has another name elsewhere (a hard link)"
    if unread:
        return f"{unread[0].filename} cannot be read ({unread[0].strerror}), so arnes cannot check where git writes"
    return None


@dataclass(frozen=True)
class WorkTree:
    """What a command that stores files of the working tree would find under its pathspecs."""

    files: list[str]  # changed tracked files, and untracked ones not ignored when asked for
    removed: list[str]  # tracked files gone from the working tree (their removal stores nothing)
    nested: list[str]  # submodules and repositories inside (a folder name ending in /)


def work_tree(repo: Repository, pathspecs: list[str], untracked: bool) -> WorkTree | str:
    """The files under `pathspecs` (the whole tree when empty) that `git add` or `git commit -a`
    would read, listed by git itself from the workspace's top, or why they could not be."""
    lists: list[list[str]] = []
    for which in (["-s"], ["-m", *(["-o", "--exclude-standard"] if untracked else [])], ["-d"]):
        listed = _listed(repo, [*which, "--", *pathspecs])
        if isinstance(listed, str):
            return listed
        lists.append(listed)
    staged, changed, removed = lists
    gitlinks = [entry.partition("\t")[2] + "/" for entry in staged if entry.startswith("160000 ")]
    nested = gitlinks + [name for name in changed if name.endswith("/")]
    files = [name for name in dict.fromkeys(changed) if not name.endswith("/")]
    return WorkTree(files, removed, nested)


def changed_tracked(repo: Repository, pathspecs: list[str], which: Callable[[str], bool]) -> list[str] | str:
    """The tracked files under `pathspecs` that `which` picks and whose working-tree content is
    not their index entry's blob, judged by content alone: `git ls-files -m` trusts the index's
    assume-unchanged and skip-worktree bits, which a repository ships, and `git commit -- PATHS`
    stores those files anyway. The content is read only to hash it, as git would."""
    listed = _listed(repo, ["-s", "--", *pathspecs])
    if isinstance(listed, str):
        return listed
    changed: list[str] = []
    for entry in listed:
        info, _, name = entry.partition("\t")
        mode, blob = info.split()[:2]
        if mode == "160000" or not which(name):
            continue
        if _blob_id(repo.workspace / name, len(blob)) != blob:
            changed.append(name)
    return changed


def _blob_id(path: Path, hex_length: int) -> str | None:
    """The object id git would give the file's content (SHA-1, or SHA-256 in such a repository);
    None when it is neither a file nor a link (gone, a folder, a FIFO: not a blob)."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            data = os.fsencode(os.readlink(path))
        elif stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
        else:
            return None
    except OSError:
        return None
    digest = hashlib.sha256() if hex_length == 64 else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data) + data)
    return digest.hexdigest()


def _listed(repo: Repository, args: list[str]) -> list[str] | str:
    try:
        done = run_git(repo, ["ls-files", "-z", *args])
    except subprocess.TimeoutExpired:
        return "git did not finish listing the files it would read; arnes did not run it"
    if done.returncode != 0:
        said = os.fsdecode(done.stderr).strip().rpartition("\n")[2] or f"exit {done.returncode}"
        return f"git could not list the files it would read ({said}); arnes did not run it"
    return [os.fsdecode(entry) for entry in done.stdout.split(b"\0")[:-1]]
