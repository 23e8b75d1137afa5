"""Whether a git command run in a folder would run code its repository chose.

A read-only git command (`git status`, `git diff`) still runs programs named in the repository's
own configuration: `core.fsmonitor` on every status, diff drivers' `textconv`, `filter.*.clean`
for changed files, a pager, aliases. A workspace is someone else's code (DESIGN §10), so git counts
as read-only only where the repository's configuration holds nothing but inert keys (an
allow-list), and not at all in a folder laid out as a bare repository (its `config` is the
folder's own) or one whose `.git` is a link. The user's own ~/.gitconfig is theirs, not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

# Keys (lower-case, subsection replaced by `*`) that name no program and no other file to read.
_INERT = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|"
    r"autocrlf|safecrlf|eol|quotepath|abbrev|compression|loosecompression|checkstat|trustctime|untrackedcache|"
    r"splitindex|commitgraph|multipackindex|sharedrepository|whitespace|longpaths|preloadindex|fscache|"
    r"sparsecheckout|sparsecheckoutcone)"
    r"|remote\.\*\.(url|fetch|pushurl|tagopt|mirror|prune|prunetags|skipdefaultupdate|skipfetchall|promisor|"
    r"partialclonefilter|push)"
    r"|branch\.\*\.[a-z0-9-]+"
    r"|(user|author|committer|color|pull|fetch|extensions|index|pack|feature|advice|i18n|gui|rerere|gc|"
    r"maintenance|init|column)\.[a-z0-9.*-]+"
    r"|push\.(default|autosetupremote|followtags)|lfs\.[a-z0-9.*-]+|submodule\.\*\.(url|active|path|branch))$"
)
_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)")


def repository_code(folder: Path) -> str | None:
    """Why git started in `folder` may run a program its repository chose, or None."""
    for candidate in (folder, *folder.parents):
        dotgit = candidate / ".git"
        try:
            if dotgit.is_symlink():
                return f"{dotgit} is a link: its configuration may be anywhere"
            if dotgit.is_file():
                return _gitfile(candidate, dotgit)
            if dotgit.is_dir():
                return _configs(dotgit)
            if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir() and (candidate / "refs").is_dir():
                return f"{candidate} is laid out as a bare repository: git would use its configuration"
        except OSError as exc:
            return f"cannot read {dotgit}: {exc.strerror}"
    return None


def _gitfile(folder: Path, dotgit: Path) -> str | None:
    """A `.git` file (`gitdir: PATH`) points at the repository (worktrees, submodules)."""
    text = dotgit.read_text(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return f"{dotgit} is not a repository pointer git reads"
    return _configs((folder / text[len("gitdir:") :].strip()).resolve())


def _configs(gitdir: Path) -> str | None:
    files = [gitdir / "config", gitdir / "config.worktree"]
    common = gitdir / "commondir"
    if common.is_file():
        files.append((gitdir / common.read_text(errors="replace").strip()).resolve() / "config")
    for file in files:
        if file.is_file():
            key = _code_key(file.read_text(errors="replace"))
            if key:
                return f"{file} sets {key}, which can make git run a program"
    return None


def _code_key(text: str) -> str | None:
    """The first key that is not known to be inert (anything unreadable counts)."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            match = _SECTION.match(line)
            if not match:
                return line
            name, sub, rest = match.group(1).lower(), match.group(2), match.group(3)
            if "." in name:  # [section.sub] is the old form of [section "sub"]
                name, sub = name.split(".", 1)[0], "*"
            section = f"{name}.*" if sub is not None else name
            line = rest.strip()
            if not line or line[0] in "#;":
                continue
        match = _KEY.match(line)
        if not match or not section:
            return line
        key = f"{section}.{match.group(1).lower()}"
        if not _INERT.match(key):
            return key
    return None
