"""Where git keeps copies of files' contents inside a repository, which no Read rule names.

The working tree's `.env` is hidden by the Read rules, but git keeps every stored version of it
in `objects/` (zlib-compressed), git-lfs and git-annex keep plain copies in `lfs/` and `annex/`, a
stopped rebase keeps the patch being applied in `rebase-merge/` or `rebase-apply/`, rerere keeps
both sides of a conflict in `rr-cache/`, and git-crypt keeps its key in `git-crypt/`. While Read
rules hide files, nothing but git reads these (git's own commands are judged by what they would
show: gitjudge.py); the rest of `.git` (HEAD, config, refs, logs, hooks) is metadata and stays
readable.
"""

from __future__ import annotations

from pathlib import Path

STORES = frozenset({"objects", "lfs", "annex", "rebase-merge", "rebase-apply", "rr-cache", "git-crypt"})
MESSAGE = (
    "{path} is where git keeps copies of files' contents, those your Read rules hide too; read the "
    "repository through git commands, which arnes checks for what they would show"
)


def named_store(path: str) -> str | None:
    """The store a path names under a `.git` folder (`/ws/.git/lfs/objects/41/0f/...` -> `/ws/.git/lfs`),
    by its words alone: cheap enough for every hit of a search."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part == ".git":
            for j in range(i + 1, len(parts)):
                if parts[j] in STORES:
                    return "/".join(parts[: j + 1])
    return None


def git_store(path: str) -> str | None:
    """`named_store`, or the object store of a bare repository or a git folder by another name
    (`backup.git/objects/...`: an `objects` folder beside a HEAD file)."""
    named = named_store(path)
    if named is not None:
        return named
    place = Path(path)
    for folder in (place, *place.parents):
        if folder.name in STORES and (folder.parent / "HEAD").is_file():
            return str(folder)
    return None
