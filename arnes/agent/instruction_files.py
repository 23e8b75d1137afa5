"""Where instruction files may be read from, and the one judge of each `@path` import.

A repository writes its CLAUDE.md, so `@../../.ssh/id_rsa`, `@/etc/shadow` or `@notes.md` (a link
to the home folder) must not put a host file into the prompt. An import is read only from:
- the workspace, as HostFiles reads it: no link out, nothing a deny or ask Read rule covers;
- the user's own folders (~/.claude, ~/.codex, ~/.config/arnes): Markdown files only, never a
  hidden file (Claude Code keeps its credentials there as `.credentials.json`), no link out of the
  folder, under the same Read rules. A project's file may name only the files directly in those
  folders (`@~/.claude/my-project-notes.md`, as Claude Code's docs suggest); the user's own files
  may name any Markdown file in them. Claude Code's own records (`projects/`, its memory of other
  folders) are never the repository's to read.
Anything else is refused with one line that says why. The parent folders up to the repository root
are read by HostFiles rooted there (no link out of the repository) and only when they are the
user's own (a shared /tmp/.git must not make a stranger's /tmp/AGENTS.md an instruction).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from arnes.host.files import HostFiles, Refused
from arnes.host.nofollow import read_regular
from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.protected import claude_user_dir, codex_user_dir, user_config_dir

FOLDERS = "~/.claude, ~/.codex, ~/.config/arnes"


@dataclass(frozen=True)
class Loaded:
    shown: str  # the name the prompt and the notes use: relative to the workspace, or ~/...
    text: str
    path: Path  # where it was found (not its real path): its imports are relative to this folder
    real: Path  # to read each file once (cycles, CLAUDE.md -> AGENTS.md)
    user: bool  # the user's own file: its imports follow the user's rule
    cut: bool = False  # read up to the limit: there is more (the text may look whole once stripped)


@dataclass(frozen=True)
class UserDirs:
    """The user's folders: arnes's own and the ones Claude Code and Codex keep their files in."""

    home: Path
    claude: Path
    codex: Path
    arnes: Path

    @classmethod
    def of(cls, env: dict[str, str] | None = None) -> UserDirs:
        environ = dict(os.environ) if env is None else env
        home = Path(os.path.expanduser(environ.get("HOME") or "~"))
        return cls(home, claude_user_dir(environ), codex_user_dir(environ), user_config_dir(environ))

    def folders(self) -> tuple[Path, ...]:
        return (self.claude, self.codex, self.arnes)

    def shown(self, path: Path) -> str:
        return f"~/{path.relative_to(self.home)}" if is_inside(self.home, path) and path != self.home else str(path)


def repository_root(workspace: Path) -> Path | None:
    """The nearest folder at or above the workspace with a `.git` (folder or file), else None."""
    for folder in (workspace, *workspace.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


@dataclass(frozen=True)
class Places:
    files: HostFiles  # the workspace, with the session's rules
    user: UserDirs
    limit: int  # bytes read of one file at most

    def _cut(self, data: bytes) -> bool:
        return len(data) >= self.limit

    def user_file(self, path: Path) -> Loaded | None:
        """One of the user's own top files (~/.claude/CLAUDE.md): read as it is, like their settings."""
        try:
            data, _ = read_regular(resolve_real(path), self.limit)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as exc:
            raise Refused(exc.errno or errno.EIO, f"cannot be read ({exc.strerror})") from exc
        return Loaded(self.user.shown(path), _text(data), path, resolve_real(path), True, self._cut(data))

    def workspace_file(self, name: str) -> Loaded | None:
        """A file of the workspace, as HostFiles reads it (Refused: a link out, a Read rule)."""
        data = self.files.read(name, self.limit)
        path = self.files.root / name
        return None if data is None else Loaded(name, _text(data), path, resolve_real(path), False, self._cut(data))

    def parent_file(self, root: HostFiles, folder: Path, name: str) -> Loaded | None:
        """A file of a folder between the repository root and the workspace (outside the workspace)."""
        rel = str((folder / name).relative_to(root.root))
        try:
            if stat.S_ISLNK(os.lstat(folder / name).st_mode):
                # A link here would name a file of the repository outside the workspace (its .env,
                # .git/config), which no Read rule of the workspace covers: only plain files count.
                raise Refused(errno.ELOOP, f"{rel} is a link; a parent folder's instructions are read only as a file")
        except FileNotFoundError:
            return None
        try:
            found = root.read_stat(rel, self.limit)
        except Refused as exc:
            if exc.errno != errno.EXDEV:
                raise
            out = resolve_real(folder / name)
            raise Refused(exc.errno, f"{rel} is a link out of the repository (to {out}), not followed") from exc
        if found is None:
            return None
        data, st = found
        if st.st_uid != os.getuid():
            raise Refused(errno.EPERM, f"{rel} is not yours (another user owns it), so arnes does not read it")
        shown = os.path.relpath(folder / name, self.files.root)
        return Loaded(shown, _text(data), folder / name, resolve_real(folder / name), False, self._cut(data))

    def imported(self, written: str, base: Path, by_user: bool) -> Loaded | None:
        """The file `@written` names from a file in `base` (None: no such file); Refused: not here."""
        expanded = str(self.user.home) + written[1:] if written.startswith("~/") else written
        target = Path(os.path.normpath(base / expanded))
        workspace = self.files.root
        if is_inside(workspace, target):
            return self.workspace_file(str(target.relative_to(workspace)) if target != workspace else ".")
        if not os.path.lexists(target):
            return None  # `@someone` in a parent folder's prose: nothing to refuse
        for folder in self.user.folders():
            for root in dict.fromkeys((folder, resolve_real(folder))):
                if is_inside(root, target) and target != root:
                    return self.in_user_folder(folder, target.relative_to(root), by_user)
        raise Refused(errno.EACCES, f"it is outside the workspace and your folders ({FOLDERS})")

    def in_user_folder(self, folder: Path, rel: Path, by_user: bool) -> Loaded | None:
        if rel.suffix.lower() != ".md":
            raise Refused(errno.EACCES, "only Markdown files (*.md) are imported from your folders")
        if any(part.startswith(".") for part in rel.parts):
            raise Refused(errno.EACCES, "a hidden file or folder in your folders is never imported")
        if not by_user and len(rel.parts) > 1:
            raise Refused(errno.EACCES, "a project's file imports only the Markdown files directly in your folders")
        try:
            data = HostFiles(folder, self.files.rules).read(str(rel), self.limit)
        except Refused as exc:
            if exc.errno != errno.EXDEV:
                raise
            out = resolve_real(folder / rel)
            raise Refused(exc.errno, f"it is a link out of {self.user.shown(folder)} (to {out})") from exc
        if data is None:
            return None
        real = resolve_real(folder / rel)
        if is_inside(resolve_real(folder), real) and real != resolve_real(folder):
            # A link inside the folder is judged by where it leads: `notes.md` -> `.credentials.json` is not Markdown.
            target = real.relative_to(resolve_real(folder))
            if target.suffix.lower() != ".md" or any(part.startswith(".") for part in target.parts):
                raise Refused(
                    errno.EACCES, f"it is a link to {self.user.shown(folder / target)}, not a visible Markdown file"
                )
        return Loaded(
            self.user.shown(folder / rel), _text(data), folder / rel, resolve_real(folder / rel), True, self._cut(data)
        )


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").strip()
