"""Whether a git command run in a folder would run code its repository chose.

A read-only git command (`git status`, `git diff`) still runs programs named in the repository's
own configuration: `core.fsmonitor` on every status, diff drivers' `textconv`, `filter.*.clean`
for changed files, a pager, aliases. A workspace is someone else's code (DESIGN §10), so git counts
as read-only only where the repository's configuration holds nothing but inert keys (an
allow-list), and not at all in a folder laid out as a bare repository (its `config` is the
folder's own) or one whose `.git` is a link. The user's own ~/.gitconfig is theirs, not checked.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from arnes.host.git import LFS_INERT
from arnes.safe import one_line

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
    r"|push\.(default|autosetupremote|followtags)|submodule\.\*\.(url|active|path|branch))$"
)
_SECTION = re.compile(r'^\[[ \t]*([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\]|\\.)*)")?[ \t]*\][ \t]*(.*)$')
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)[ \t]*(=|$)")
# Control characters other than tab and newline (a lone \r too), C1 controls with \x85, and the
# Unicode line and paragraph separators: where Python and git would read a line differently.
_ODD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def repository_code(folder: Path) -> str | None:
    """Why git started in `folder` may run a program its repository chose, or None.

    The reason names paths the repository chose: it comes back on one line with every control
    character and undecodable byte written out, fit for a prompt, a trace and the model."""
    reason = _reason(folder)
    return None if reason is None else one_line(reason)


def _reason(folder: Path) -> str | None:
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
    """A `.git` file (`gitdir: PATH`) points at the repository (worktrees, submodules).

    Read as git reads it (read_gitfile_gently): the prefix is exactly "gitdir: ", only trailing
    LF and CR are cut, and the path is bytes (os.fsdecode keeps a name that is not UTF-8). A
    pointer to no folder cannot be judged, so it counts as code rather than as a clean config.
    """
    data = dotgit.read_bytes()
    if not data.startswith(b"gitdir: "):
        return f"{dotgit} is not a repository pointer git reads"
    target = _pointed(folder, data[len(b"gitdir: ") :])
    if not target.is_dir():
        return f"{dotgit} points at {target}, which is not a folder arnes can check"
    return _configs(target)


def _pointed(base: Path, data: bytes) -> Path:
    """The folder a `.git` file or `commondir` names, relative to `base` (git strips only LF, CR)."""
    return (base / os.fsdecode(data.rstrip(b"\r\n"))).resolve()


def _configs(gitdir: Path) -> str | None:
    files = [gitdir / "config", gitdir / "config.worktree"]
    common = gitdir / "commondir"
    if common.is_file():
        shared = _pointed(gitdir, common.read_bytes())
        if not shared.is_dir():
            return f"{common} points at {shared}, which is not a folder arnes can check"
        files.append(shared / "config")
    for file in files:
        if file.is_file():
            reason = _code_key(file.read_bytes())
            if reason:
                return f"{file} {reason}"
    return None


def _code_key(data: bytes) -> str | None:
    """Why the config may make git run a program: the first key not known to be inert, or what
    this reader cannot judge (anything unreadable counts), or None.

    Lines are cut where git cuts them, at LF alone (git reads CR LF as LF). Whatever git and
    this reader could disagree on is refused rather than judged: bytes that are not UTF-8, any
    other control character or Unicode line break (Python's splitlines/strip would cut or trim
    there, git does not), and a line ending in a backslash (git continues the value on the next
    line, so what looks like a new section may be part of a value).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "holds bytes that are not UTF-8, so arnes cannot judge it as git reads it"
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # git skips a BOM and reads CRLF as LF
    odd = _ODD.search(text)
    if odd:
        return f"holds U+{ord(odd.group()):04X}, a line break or control character arnes cannot judge as git reads it"
    section = ""
    for raw in text.split("\n"):
        if raw.endswith("\\"):
            return "continues a line with a backslash, so arnes cannot judge where git's value ends"
        line = raw.strip(" \t")  # git's isspace, not Python's wider one
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            match = _SECTION.match(line)
            if not match:
                return _unjudged(line)
            name, sub, rest = match.group(1).lower(), match.group(2), match.group(3)
            if "." in name:  # [section.sub] is the old form of [section "sub"]
                name, sub = name.split(".", 1)[0], "*"
            section = f"{name}.*" if sub is not None else name
            line = rest.strip(" \t")
            if not line or line[0] in "#;":
                continue
        match = _KEY.match(line)
        if not match or not section:
            return _unjudged(line)
        key = f"{section}.{match.group(1).lower()}"
        if not (_INERT.match(key) or key in LFS_INERT):
            return f"sets {key}, which can make git run a program"
    return None


def _unjudged(line: str) -> str:
    return f"holds a line arnes cannot judge ({line[:60]!r}), so git may read a key that runs a program"
