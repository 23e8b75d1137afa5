"""What shell commands changed in the workspace: a stat snapshot before the first command, compared
with one at the end (inode, size, mtime, mode; never the contents, so it stays cheap).

The file tools log their own writes (ChangeLog); commands write wherever they like, so the summary,
the diff and `files_changed` would miss `pip install` dropping a `.pth` into `.venv` or a command
writing `.envrc`. Inside ignored folders (.venv, node_modules, what .gitignore names) a count is
enough, except for files that run code later (start-up hooks, rc files, git hooks), which are always
named. `.git` internals are skipped but for its config and hooks. A regular file that gained a
setuid or setgid bit loses it here (bubblewrap's seccomp filter refuses the bit in the first place;
with Landlock off this is the only guard, once per session).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from arnes.host.ripgrep import LIST_TIMEOUT, NO_IGNORE_DOT, null_separated, ripgrep

# arnes's own output while it runs (and the .gitignore it writes at start-up): never a command's.
_OWN = frozenset({".arnes/traces", ".arnes/history", ".arnes/teams/runs", ".arnes/checkpoints", ".arnes/.gitignore"})
_IGNORED_NAMES = frozenset({
    ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "site-packages", ".cache", ".gradle", "target", ".next", "dist", "build",
})  # fmt: skip
# Files that run code later when something starts: named even inside ignored folders.
RUNS_CODE_NAMES = (
    "*.pth", "sitecustomize.py", "usercustomize.py", ".envrc", ".env", ".env.*", "conftest.py", "activate",
    "activate.*", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
    ".zprofile", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", "config.fish", ".inputrc", ".npmrc", ".yarnrc",
    ".yarnrc.yml", ".pre-commit-config.yaml", ".gitattributes", ".gitmodules", ".mcp.json", "pip.conf",
)  # fmt: skip
RUNS_CODE_PATHS = (
    ".git/config", ".git/hooks/*", "*/.git/config", "*/.git/hooks/*", ".husky/*", ".githooks/*", ".arnes/*",
    ".claude/*", ".vscode/*", ".devcontainer/*", ".github/workflows/*",
)  # fmt: skip
MOST_FILES = 400_000  # past this many entries the workspace is not watched (said in the summary)
NAME_IGNORED_UP_TO = 20  # changed files .gitignore excludes named one by one; beyond, counted


@dataclass(frozen=True)
class Entry:
    inode: int
    size: int
    mtime_ns: int
    mode: int
    ctime_ns: int = 0  # a rewrite of the same size with its mtime set back still moves the ctime


Tree = dict[str, Entry]


def runs_code(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p) for p in RUNS_CODE_NAMES) or any(
        fnmatch.fnmatchcase(relative, p) for p in RUNS_CODE_PATHS
    )


def walk(workspace: Path, most: int = MOST_FILES) -> Tree | None:
    """Every file under `workspace` by relative path (links not followed); None past `most`."""
    tree: Tree = {}
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = os.scandir(os.path.join(workspace, rel_dir) if rel_dir else workspace)
        except OSError:
            continue
        with entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if rel in _OWN:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if entry.name == ".git":
                        _git_parts(Path(entry.path), rel, tree)
                    else:
                        stack.append(rel)
                    continue
                tree[rel] = Entry(st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns)
                if len(tree) > most:
                    return None
    return tree


def _git_parts(git: Path, rel: str, tree: Tree) -> None:
    """Of a .git folder only what runs code: its config and its hooks."""
    paths = [git / "config"]
    with contextlib.suppress(OSError):
        paths += [git / "hooks" / name for name in os.listdir(git / "hooks")]
    for path in paths:
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            tree[f"{rel}/{path.relative_to(git).as_posix()}"] = Entry(
                st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns
            )


def _listed_by_ripgrep(workspace: Path) -> set[str] | None:
    """The files .gitignore does not exclude (a repository's .ignore/.rgignore do not count), named
    exactly as the tree walk names them (cut at NUL, os.fsdecode): "x\\n.envrc" is one file."""
    argv = [ripgrep(), "--files", "--null", "--hidden", "--no-require-git", NO_IGNORE_DOT, "--glob", "!.git"]
    try:  # bounded: a `.gitignore` a command made a FIFO would hold ripgrep (and arnes) forever
        done = subprocess.run(argv, cwd=workspace, capture_output=True, check=False, timeout=LIST_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(null_separated(done.stdout))


@dataclass
class Report:
    """Changed files to name (each also in `runs_code` if it runs code later) and the rest, counted
    by the ignored folder they are in."""

    named: list[str] = field(default_factory=list)
    runs_code: list[str] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    created: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    stripped: list[str] = field(default_factory=list)
    unwatched: bool = False


def _ignored_group(rel: str, listed: set[str] | None, listed_dirs: set[str]) -> str | None:
    """The ignored folder `rel` is in (or "" for an ignored file at a listed level); None if not ignored."""
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in _IGNORED_NAMES:
            return "/".join(parts[: i + 1])
    if listed is None or rel in listed:
        return None
    for i in range(len(parts) - 1):
        folder = "/".join(parts[: i + 1])
        if folder not in listed_dirs:
            return folder
    return ""


def compare(workspace: Path, before: Tree, after: Tree) -> Report:
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    report = Report(created={p for p in changed if p not in before}, deleted={p for p in changed if p not in after})
    if not changed:
        return report
    listed = _listed_by_ripgrep(workspace)
    listed_dirs = {"/".join(p.split("/")[:i]) for p in (listed or ()) for i in range(1, p.count("/") + 1)}
    by_gitignore: list[tuple[str, str]] = []
    for rel in changed:
        if runs_code(rel):
            report.named.append(rel)
            report.runs_code.append(rel)
            continue
        group = _ignored_group(rel, listed, listed_dirs)
        if group is None:
            report.named.append(rel)
        elif group.rsplit("/", 1)[-1] in _IGNORED_NAMES:
            report.ignored[group] = report.ignored.get(group, 0) + 1  # caches and installs: counted
        else:
            by_gitignore.append((rel, group))
    # The repository's .gitignore decides these: a few are named, so it cannot hide a change.
    if len(by_gitignore) <= NAME_IGNORED_UP_TO:
        report.named += [rel for rel, _ in by_gitignore]
    else:
        for _, group in by_gitignore:
            report.ignored[group or "(ignored files)"] = report.ignored.get(group or "(ignored files)", 0) + 1
    report.named.sort()
    return report


def strip_setid(workspace: Path, before: Tree, after: Tree) -> list[str]:
    """Clear setuid/setgid bits a regular file gained since `before`; the paths it cleared."""
    cleared = []
    for rel, entry in after.items():
        if not stat.S_ISREG(entry.mode) or not entry.mode & 0o6000:
            continue
        old = before.get(rel)
        if old is not None and old.inode == entry.inode and old.mode == entry.mode:
            continue  # it was so before the session: the user's, not a command's
        fd = None
        try:
            fd = os.open(os.path.join(workspace, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            now = os.fstat(fd)
            if stat.S_ISREG(now.st_mode) and now.st_mode & 0o6000:
                os.fchmod(fd, stat.S_IMODE(now.st_mode) & ~0o6000)
                cleared.append(rel)
        except OSError:
            continue
        finally:
            if fd is not None:
                os.close(fd)
    return cleared


class TreeWatch:
    """The workspace as it was before the session's first shell command, and what changed since.

    The first snapshot is taken in a background thread from the start of the session (while the
    model thinks about its first answer), and the first command waits for it: on a tree of 50,000
    files it takes most of a second on a busy machine.
    """

    def __init__(self, workspace: Path, *, early: bool = True, standing: Callable[[], Iterable[Path]] = tuple):
        self.workspace = workspace
        # The sandbox's own empty mount points (features.json kept out while its zygote lives): not a change.
        self._standing = standing
        self._before: Tree | None = None
        self._commands = 0
        self._cached: tuple[int, Report] | None = None
        self._lock = threading.Lock()
        self._first: threading.Thread | None = None
        if early:
            self._first = threading.Thread(target=self._take_first, name="arnes-treewatch", daemon=True)
            self._first.start()

    def _take_first(self) -> None:
        self._before = walk(self.workspace)

    def before_command(self) -> None:
        """Called before every shell command: the first one makes sure the snapshot is there."""
        with self._lock:
            if self._commands == 0:
                if self._first is not None:
                    self._first.join()
                else:
                    self._take_first()
            self._commands += 1

    def report(self) -> Report:
        with self._lock:
            if self._commands == 0:
                return Report()  # no command ran
            if self._cached and self._cached[0] == self._commands:
                return self._cached[1]
            after = walk(self.workspace) if self._before is not None else None
            if self._before is None or after is None:
                return Report(unwatched=True)
            for path in self._standing():
                with contextlib.suppress(ValueError):
                    rel = path.relative_to(self.workspace).as_posix()
                    if rel not in self._before and after.get(rel, Entry(0, 1, 0, 0)).size == 0:
                        after.pop(rel, None)
            stripped = strip_setid(self.workspace, self._before, after)
            if stripped:
                after = walk(self.workspace) or after
            report = compare(self.workspace, self._before, after)
            report.stripped = stripped
            self._cached = (self._commands, report)
            return report
