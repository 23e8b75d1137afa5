"""Ask git which files a command would show, before it runs: the same command with a names-only
format (`--name-status -z`), through host/git.py, so no program of the repository runs.

Only git can list what `git diff` or `git log -p` covers (which files changed, in which commits,
under which pathspecs, renamed from where), so git is asked with the command's own revisions,
pathspecs and scope options, in the folder the command runs in. What this run cannot mirror asks:
a revision that is a file or a tree rather than a commit (`git show <blob>` prints the file, and
a names-only run would not say so), another repository on the way, an answer it cannot read, a
run that takes longer than `TIMEOUT`.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from arnes.host.git import Repository, config_value, repository, run_git
from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.gitview import GLOBS, Probe

TIMEOUT = 5.0  # seconds: `git log -p` over a long history may take longer; then it asks
_STATUS = re.compile(r"[ACDMRTUXB]+[0-9]*")
_OBJECT = re.compile(r"\^?[0-9a-f]{40}(?:[0-9a-f]{24})?")
_NAMES = ["--name-status", "-z", "--no-relative", "--no-color"]
_EMPTY_TREE = {"sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
               "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}  # fmt: skip


class Unlisted(Exception):
    """Why arnes cannot tell which files the command would show."""


def listed(workspace: Path, folder: Path, probe: Probe) -> list[str] | str:
    """The files, from the repository's top, whose contents the command may show; or why not known."""
    repo = repository(workspace)
    if isinstance(repo, str):
        return f"arnes cannot ask git which files it would show: {repo}"
    try:
        _same_repository(repo.workspace, folder)
        return _run(repo, folder, probe)
    except Unlisted as exc:
        return str(exc)
    except subprocess.TimeoutExpired:
        return f"git did not list the files it would show within {TIMEOUT:.0f} s"


def _same_repository(top: Path, folder: Path) -> None:
    """The command must run in the workspace's own repository: a folder of it, no `.git` between."""
    real = resolve_real(folder)
    if not is_inside(top, real):
        raise Unlisted(f"it runs in {real}, outside the workspace's repository")
    while real != top:
        if os.path.lexists(real / ".git"):
            raise Unlisted(f"it runs in {real}, another repository inside the workspace")
        real = real.parent


def _run(repo: Repository, folder: Path, probe: Probe) -> list[str]:
    if probe.kind == "object":
        if not any(_are(repo, folder, probe.verify, kind) for kind in ("commit", "tree")):
            raise Unlisted(f"{probe.verify[0]} may be a file's content, and arnes cannot tell which file's")
        return []
    if probe.kind == "blobs":
        if not _are(repo, folder, probe.verify, "blob"):
            raise Unlisted("git diff of revisions' paths that are not all files compares whole trees")
        return []
    if probe.kind == "grep":
        return _grep(repo, folder, probe)
    if probe.kind in ("tree", "index"):  # the files whose object ids it prints
        listing = ["ls-tree", "-r", "--name-only"] if probe.kind == "tree" else ["ls-files", "--cached"]
        found = _git(repo, folder, [*listing, "-z", "--full-name", *probe.args])
        if found.returncode != 0:
            raise Unlisted("git could not list the files whose object ids it would print")
        return [os.fsdecode(name) for name in found.stdout.split(b"\0") if name]
    if (config_value(repo, "diff.submodule", TIMEOUT) or "").lower() == "diff":
        raise Unlisted("diff.submodule=diff in git's configuration shows the files of submodules")
    if probe.kind == "stash":
        return _stash(repo, folder, probe.stash)
    if probe.kind in ("diff", "show"):
        _commits(repo, folder, probe.verify)
        if probe.names_only:
            return []
    if probe.kind == "diff":
        return _names(repo, folder, ["diff", *_NAMES, *probe.args])
    walk = ["--no-walk=unsorted"] if probe.kind == "show" else []
    # -m: merges' changes against each parent; --root: a first commit's files (log.showRoot aside)
    return _names(repo, folder, ["log", *walk, *_NAMES, "--format=", "-m", "--root", *probe.args])


def _git(repo: Repository, folder: Path, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return run_git(repo, args, timeout=TIMEOUT, folder=folder)


def _commits(repo: Repository, folder: Path, words: list[str]) -> None:
    """Every revision among `words` (as git picks them) must be a commit: a file given as a
    revision prints its content, which a names-only run does not list."""
    found = _git(repo, folder, ["rev-parse", "--revs-only", *words])
    lines = os.fsdecode(found.stdout).split()
    if found.returncode != 0 or not all(_OBJECT.fullmatch(line) for line in lines):
        raise Unlisted("git could not read its revisions")
    if not all(_peels(repo, folder, line.lstrip("^"), "commit") for line in lines):
        raise Unlisted("a revision it shows is not a commit (a file's or a tree's content would print whole)")


def _are(repo: Repository, folder: Path, words: list[str], kind: str) -> bool:
    """Whether every word names an object that peels to `kind`."""
    for word in words:
        sha = _resolve(repo, folder, word)
        if sha is None or not _peels(repo, folder, sha, kind):
            return False
    return True


def _resolve(repo: Repository, folder: Path, word: str) -> str | None:
    """The object a word names, or None. (A suffix such as `^{commit}` is put only on the hash git
    gives back: on a word, `stash@{0}^3^{commit}` resolves where `stash@{0}^3` does not.)"""
    found = _git(repo, folder, ["rev-parse", "--verify", "-q", "--end-of-options", word])
    sha = os.fsdecode(found.stdout).strip()
    return sha if found.returncode == 0 and _OBJECT.fullmatch(sha) and not sha.startswith("^") else None


def _peels(repo: Repository, folder: Path, sha: str, kind: str) -> bool:
    return _git(repo, folder, ["rev-parse", "--verify", "-q", f"{sha}^{{{kind}}}"]).returncode == 0


def _names(repo: Repository, folder: Path, args: list[str]) -> list[str]:
    found = _git(repo, folder, args)
    if found.returncode not in (0, 1):
        said = os.fsdecode(found.stderr).strip().rpartition("\n")[2]
        raise Unlisted(f"git could not list the files it would show ({said or f'exit {found.returncode}'})")
    return parse_name_status(found.stdout)


def parse_name_status(output: bytes) -> list[str]:
    """`--name-status -z`: a status, then one path (two for a rename or a copy: both are shown)."""
    fields = [os.fsdecode(f) for f in output.split(b"\0")]
    names: list[str] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if not status:
            i += 1
            continue
        paths = fields[i + 1 : i + 2 + (status[0] in "RC")]
        if not _STATUS.fullmatch(status) or len(paths) != 1 + (status[0] in "RC") or not all(paths):
            raise Unlisted("git's list of files could not be read")
        names += paths
        i += 1 + len(paths)
    return names


def _stash(repo: Repository, folder: Path, stash: str) -> list[str]:
    """`git stash show` is the stash's changes to its base, and (with -u, or stash.showIncludeUntracked)
    the untracked files it holds in a third parent."""
    sha = _resolve(repo, folder, stash)
    if sha is None or not _peels(repo, folder, sha, "commit"):
        raise Unlisted(f"{stash} is not a stash arnes can read")
    names = _names(repo, folder, ["diff", *_NAMES, f"{sha}^1", sha])
    untracked = _resolve(repo, folder, f"{sha}^3")
    if untracked is not None:
        form = os.fsdecode(_git(repo, folder, ["rev-parse", "--show-object-format"]).stdout).strip()
        if form not in _EMPTY_TREE:
            raise Unlisted("the stash's untracked files could not be listed")
        names += _names(repo, folder, ["diff", *_NAMES, _EMPTY_TREE[form], untracked])
    return names


def _grep(repo: Repository, folder: Path, probe: Probe) -> list[str]:
    """The files `git grep` searches: `-l -e ''` matches every file that has a line."""
    cut = probe.args.index("--") if "--" in probe.args else len(probe.args)
    for word in probe.verify:  # git takes a word that is no file as a revision
        if not (GLOBS & set(word) or word.startswith(":") or os.path.lexists(folder / word)):
            raise Unlisted(f"git grep in {word!r}, a revision or a file that is not there")
    paths = [*probe.verify, *probe.args[cut + 1 :]]
    found = _git(repo, folder, ["grep", "-l", "-z", "--full-name", "--no-color", *probe.args[:cut], "-e", "",
                                "--", *paths])  # fmt: skip
    if found.returncode not in (0, 1):
        raise Unlisted("git could not list the files it would search")
    return [os.fsdecode(f) for f in found.stdout.split(b"\0") if f]
