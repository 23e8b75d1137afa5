"""What in a git folder makes git run a program: hooks, config keys, an operation left half done.

A repository's config is trusted by git as the user's own: `core.fsmonitor` runs on `git status`,
`core.pager` at a terminal, `core.hooksPath` moves the hooks, `alias.ci = !cmd` shadows the user's
alias, `include.path` pulls in another file, `remote.*.uploadpack` runs on a fetch... The list of
keys that run something is long and grows with git, so the config is judged by an allow list
("allow strictly"): only keys `git init`, `git clone`, `git config user.*` and `git branch -u`
write are inert; any other key, a line this reader cannot place, a continued line, a link or an
unreadable file counts as running something.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from arnes.host.nofollow import read_regular

INERT: dict[str, frozenset[str]] = {
    "core": frozenset({
        "repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode",
        "symlinks", "autocrlf", "eol", "safecrlf", "quotepath", "sharedrepository",
    }),
    "remote": frozenset({"url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror"}),
    "branch": frozenset({"remote", "merge", "rebase", "pushremote", "description"}),
    "user": frozenset({"name", "email"}),
    "init": frozenset({"defaultbranch"}),
    "extensions": frozenset({"objectformat", "refstorage", "worktreeconfig"}),
    "submodule": frozenset({"url", "active", "branch"}),
    "pull": frozenset({"rebase", "ff"}),
    "push": frozenset({"default", "autosetupremote"}),
    "fetch": frozenset({"prune"}),
}  # fmt: skip
CONFIGS = ("config", "config.worktree")
# An operation in progress: `git rebase --continue` runs a todo list's `exec` lines.
IN_PROGRESS = ("rebase-merge", "rebase-apply", "sequencer")
MOST_CONFIG_BYTES = 1 << 20
ASIDE = ".arnes-disabled"  # what a part renamed aside is called after: NAME.arnes-disabled (-2, -3...)

_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"(?:[^"\\\n]|\\.)*"\s*)?\](.*)')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(=.*)?")


def config_runs_programs(text: str) -> bool:
    """Whether git config text may name a program: anything but INERT keys in plain lines."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith("\\"):
            return True  # a continued value: where the next key starts is git's call, not ours
        if line.startswith("["):
            head = _SECTION.fullmatch(line)
            if head is None:
                return True
            section = head.group(1).split(".", 1)[0].lower()
            line = head.group(2).strip()
        if not line or line[0] in "#;":
            continue
        key = _KEY.fullmatch(line)
        if key is None or key.group(1).lower() not in INERT.get(section, frozenset()):
            return True
    return False


def _config_risky(path: Path) -> bool:
    """Read through no link and never blocking (a FIFO named `config`): what cannot be read counts."""
    try:
        data = read_regular(path, MOST_CONFIG_BYTES + 1)[0]
    except OSError:
        return True
    return len(data) > MOST_CONFIG_BYTES or config_runs_programs(data.decode("utf-8", errors="replace"))


def risky_parts(git_dir: Path, changed: frozenset[str] | None = None) -> list[Path]:
    """The parts of `git_dir` that would run a program, among `changed` (names relative to it,
    as fingerprint() gives them; None: all of them)."""
    found: list[Path] = []

    def wanted(name: str) -> bool:
        return changed is None or name in changed

    hooks = git_dir / "hooks"
    if os.path.islink(hooks) or (os.path.lexists(hooks) and not os.path.isdir(hooks)):
        if wanted("hooks"):
            found.append(hooks)
    else:
        found += [hooks / n for n in _names(hooks) if _hook(n) and wanted(f"hooks/{n}")]
    found += [git_dir / n for n in CONFIGS if os.path.lexists(git_dir / n) and wanted(n) and _config_risky(git_dir / n)]
    found += [git_dir / n for n in IN_PROGRESS if os.path.lexists(git_dir / n) and wanted(n)]
    return found


def _hook(name: str) -> bool:
    """A name git could run as a hook: not a sample, not one already renamed aside."""
    return not name.endswith(".sample") and ASIDE not in name


def _names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def fingerprint(git_dir: Path) -> dict[str, tuple[int, ...]]:
    """The parts that may run programs, by name, with what tells a change (inode, size, times)."""
    names = ["hooks", *CONFIGS, *IN_PROGRESS]
    if os.path.isdir(git_dir / "hooks") and not os.path.islink(git_dir / "hooks"):
        names += [f"hooks/{n}" for n in _names(git_dir / "hooks")]
    seen: dict[str, tuple[int, ...]] = {}
    for name in names:
        try:
            st = os.lstat(git_dir / name)
        except OSError:
            continue
        seen[name] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
    return seen


def changed_parts(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> frozenset[str]:
    return frozenset(name for name, seen in after.items() if before.get(name) != seen)
