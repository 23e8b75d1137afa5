"""The git configuration commands see in bubblewrap: the user's identity and inert preferences,
never a credential.

The user's own config is where credentials often live: `url."https://oauth2:TOKEN@host/".insteadOf`
for private modules, `http."https://host/".extraHeader = Authorization: Bearer ...`, `credential.*`
helpers, an `include.path` of a file holding more. Shown whole, a repository's test that prints
`~/.gitconfig` hands them to the model, and the self-check runs the tests without asking. A list of
keys to drop would be a pattern again (the lesson of the environment, sandbox/env.py), so commands
get a copy made of the keys a build, a test or an everyday git command needs (`KEPT`), read by git
itself on the host (includes followed), bound read-only at ~/.gitconfig; GIT_CONFIG_GLOBAL names
that copy, so git reads no other file of the user's (the XDG one is folded into the copy). Values
with a user in a URL are left out even there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from arnes.host.git import user_config_file

# Keys kept, `section.name` (git gives section and name in lower case). Identity, line endings,
# how things print and merge: nothing that names a program, a URL or a credential.
KEPT = frozenset({
    b"user.name", b"user.email", b"user.useconfigonly", b"author.name", b"author.email", b"committer.name",
    b"committer.email", b"init.defaultbranch", b"safe.directory",
    b"core.autocrlf", b"core.eol", b"core.safecrlf", b"core.quotepath", b"core.whitespace", b"core.abbrev",
    b"core.excludesfile", b"core.attributesfile", b"core.precomposeunicode", b"core.filemode", b"core.symlinks",
    b"core.ignorecase", b"core.longpaths", b"core.compression", b"core.untrackedcache",
    b"pull.rebase", b"pull.ff", b"push.default", b"push.autosetupremote", b"fetch.prune", b"fetch.prunetags",
    b"merge.conflictstyle", b"merge.ff", b"rebase.autosquash", b"rebase.autostash", b"rebase.updaterefs",
    b"rerere.enabled", b"diff.algorithm", b"diff.renames", b"diff.colormoved", b"diff.context",
    b"diff.indentheuristic", b"diff.mnemonicprefix", b"diff.noprefix", b"status.showuntrackedfiles",
    b"status.short", b"status.branch", b"log.date", b"log.decorate", b"branch.sort", b"tag.sort", b"column.ui",
    b"commit.verbose", b"commit.cleanup", b"protocol.version", b"transfer.fsckobjects", b"fetch.fsckobjects",
    b"http.sslverify", b"http.sslcainfo", b"http.sslcapath", b"http.version", b"feature.manyfiles",
})  # fmt: skip
# Sections kept whole (with their subsections): colours and hints.
KEPT_SECTIONS = frozenset({b"color", b"advice"})
# git-lfs's filter, only as `git lfs install` writes it: a repository with LFS files keeps working.
LFS = {
    b"filter.lfs.clean": b"git-lfs clean -- %f",
    b"filter.lfs.smudge": b"git-lfs smudge -- %f",
    b"filter.lfs.process": b"git-lfs filter-process",
    b"filter.lfs.required": b"true",
}
_URL_WITH_USER = re.compile(rb"[a-z][a-z0-9+.-]*://[^/@\s]*@", re.IGNORECASE)


def global_files(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """The files git reads as the user's own config, in git's order (the later wins)."""
    chosen = environ.get("GIT_CONFIG_GLOBAL", "")
    if chosen:
        return [Path(chosen)] if os.path.isabs(chosen) else []
    xdg = environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else home / ".config"
    return [base / "git" / "config", home / ".gitconfig"]


def kept(key: bytes, value: bytes | None) -> bool:
    if key in LFS:
        return value == LFS[key]
    if value is not None and _URL_WITH_USER.search(value):
        return False
    section, _, rest = key.partition(b".")
    return section in KEPT_SECTIONS or (b"." not in rest and key in KEPT)


def _quoted(value: bytes) -> bytes:
    for raw, escaped in ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"), (b"\t", b"\\t"), (b"\b", b"\\b")):
        value = value.replace(raw, escaped)
    return b'"' + value + b'"'


def redacted(entries: Iterable[tuple[bytes, bytes | None]]) -> bytes:
    """The kept entries in git's file format, one section header each (git allows repeats), in order."""
    lines: list[bytes] = []
    for key, value in entries:
        if not kept(key, value):
            continue
        section, _, rest = key.partition(b".")
        sub, dot, name = rest.rpartition(b".")
        quoted_sub = b' "' + sub.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"' if dot else b""
        lines.append(b"[" + section + quoted_sub + b"]")
        lines.append(b"\t" + name + (b"" if value is None else b" = " + _quoted(value)))
    return b"".join(line + b"\n" for line in lines)


def sandbox_config(home: Path, environ: Mapping[str, str]) -> bytes | None:
    """What commands see as ~/.gitconfig: the kept entries of every file git reads as the user's
    own; None when there is none. A file git does not read (a syntax error) gives nothing."""
    found = [path for path in global_files(home, environ) if path.is_file()]
    if not found:
        return None
    return b"".join(redacted(user_config_file(path) or []) for path in found)
