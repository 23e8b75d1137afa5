"""The user's record of trusted folders (DESIGN §10): real path -> a hash of the granting files.

A folder is trusted only by the user: `arnes trust`, the interactive prompt, or `--trust` for one
run. The record lives in the user's config folder, never in the workspace, and is keyed by the
folder's real path (a link elsewhere is another folder) and a hash of every file that can grant;
when one of them changes (a `git pull` brought new settings), the folder is untrusted again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from arnes.errors import ConfigError
from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.protected import user_config_dir
from arnes.permissions.trust_scripts import referenced_scripts

SETTINGS = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".arnes/settings.json",
    ".arnes/settings.local.json",
    ".mcp.json",  # starts servers
)
TEAMS = ".arnes/teams"  # team files choose agents, their flags and verify commands
HOOK_DIRS = (".arnes/hooks", ".claude/hooks")  # where hooks keep their scripts: a changed script asks again
# Files of the hook folders whose bytes are hashed (in sorted order); past this many, each further
# file counts by its name, size and modification time (a pull that changes one changes these).
MAX_HOOK_FILES = 1000
MAX_FILE_BYTES = 4 << 20  # a bigger file (or a link to one) counts by its size and time too
Status = Literal["trusted", "changed", "declined", "unknown"]


def granting_files(workspace: Path) -> list[str]:
    """The workspace's files that can grant, relative, in a fixed order.

    The hook folders are walked without following links, every name sorted before anything is
    cut: a link (to a file, or to a folder inside the workspace, which is walked too) is an entry
    of its own, hashed by its target text and its target's bytes. The scripts the settings'
    hooks and MCP servers name elsewhere in the workspace come last (trust_scripts.py)."""
    names = [n for n in SETTINGS if (workspace / n).is_symlink() or _grants(workspace / n)]
    teams = workspace / TEAMS
    if teams.is_dir():
        names += sorted(f"{TEAMS}/{p.name}" for p in teams.glob("*.toml") if p.is_file())
    root = resolve_real(workspace)
    for folder in HOOK_DIRS:
        names += _tree(workspace, root, folder, set())
    taken = set(names)
    names += [n for n in referenced_scripts(workspace, [n for n in SETTINGS if n in taken]) if n not in taken]
    return names


def _grants(path: Path) -> bool:
    """A settings file, but an empty Claude Code one: it grants nothing and is read as none (the
    sandbox's stand-in for a missing one is such a file while a session runs)."""
    if not path.is_file():
        return False
    return path.parent.name != ".claude" or path.stat().st_size > 0


def _tree(workspace: Path, root: Path, rel: str, seen: set[Path]) -> list[str]:
    """`rel` and what lies under it, sorted: files, links, and the contents of a linked folder that
    is inside the workspace (each real folder once, so a link loop ends)."""
    path = workspace / rel
    if path.is_symlink():
        out = [rel]
        if not path.is_dir():
            return out
    elif path.is_dir():
        out = []
    else:
        return [rel] if path.is_file() else []
    real = resolve_real(path)
    if not is_inside(root, real) or real in seen:
        return out
    seen.add(real)
    try:
        children = sorted(os.listdir(path))
    except OSError:
        return out
    for child in children:
        out += _tree(workspace, root, f"{rel}/{child}", seen)
    return out


def fingerprint(workspace: Path) -> str:
    """A hash over the names and contents of the granting files (none at all is a hash too)."""
    digest = hashlib.sha256()
    hooks = 0
    for name in granting_files(workspace):
        in_hooks = any(name.startswith(f"{folder}/") or name == folder for folder in HOOK_DIRS)
        hooks += in_hooks
        digest.update(name.encode() + b"\0" + _content(workspace / name, full=not in_hooks or hooks <= MAX_HOOK_FILES))
    return "sha256:" + digest.hexdigest()


def _content(path: Path, full: bool) -> bytes:
    """What stands for one file: a link's target text, then the bytes of the regular file it
    leads to (or its size and time when it is big or past the cap)."""
    parts = []
    try:
        if path.is_symlink():
            parts.append(b"link:" + os.fsencode(os.readlink(path)))
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            parts.append(b"not a file")
        elif full and info.st_size <= MAX_FILE_BYTES:
            parts.append(hashlib.sha256(path.read_bytes()).digest())
        else:
            parts.append(f"size:{info.st_size} mtime:{info.st_mtime_ns}".encode())
    except OSError as exc:
        parts.append(f"<unreadable: {exc.strerror}>".encode())
    return b"\0".join(parts)


@dataclass(frozen=True)
class Record:
    trusted: bool  # False: the user said no at the prompt (it asks again when the files change)
    hash: str
    at: str


@dataclass(frozen=True)
class TrustStore:
    path: Path

    @classmethod
    def default(cls, env: dict[str, str] | None = None) -> TrustStore:
        return cls(user_config_dir(env) / "trust.json")

    def records(self) -> dict[str, Record]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: cannot be read ({exc}); delete it and trust your folders again") from exc
        try:
            return {str(k): Record(bool(v["trusted"]), str(v["hash"]), str(v["at"])) for k, v in raw["folders"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{self.path}: not a trust record (missing {exc}); delete it and trust again") from exc

    def status(self, workspace: Path) -> Status:
        record = self.records().get(key(workspace))
        if record is None:
            return "unknown"
        if record.hash != fingerprint(workspace):
            return "changed"
        return "trusted" if record.trusted else "declined"

    def record(self, workspace: Path, trusted: bool, digest: str | None = None) -> None:
        """Remember the answer for the granting files as they are now (or as `digest` says they were)."""
        records = self.records()
        at = datetime.now(UTC).isoformat(timespec="seconds")
        records[key(workspace)] = Record(trusted, digest or fingerprint(workspace), at)
        self._save(records)

    def revoke(self, workspace: Path) -> bool:
        records = self.records()
        if records.pop(key(workspace), None) is None:
            return False
        self._save(records)
        return True

    def _save(self, records: dict[str, Record]) -> None:
        from arnes.host.atomic import atomic_write

        data = {"version": 1, "folders": {k: asdict(r) for k, r in sorted(records.items())}}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
        except OSError as exc:
            raise ConfigError(
                f"{self.path}: cannot record trust ({exc.strerror or exc}); make its folder writable, "
                "or use --trust for one run"
            ) from exc


def key(workspace: Path) -> str:
    return os.path.realpath(workspace)
