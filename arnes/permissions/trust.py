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
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from arnes.errors import ConfigError
from arnes.permissions.protected import user_config_dir

SETTINGS = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".arnes/settings.json",
    ".arnes/settings.local.json",
    ".mcp.json",  # starts servers
)
TEAMS = ".arnes/teams"  # team files choose agents, their flags and verify commands
HOOK_DIRS = (".arnes/hooks", ".claude/hooks")  # where hooks keep their scripts: a changed script asks again
MAX_HOOK_FILES = 200
Status = Literal["trusted", "changed", "declined", "unknown"]


def granting_files(workspace: Path) -> list[str]:
    """The workspace's files that can grant, relative, in a fixed order."""
    names = [n for n in SETTINGS if (workspace / n).is_file()]
    teams = workspace / TEAMS
    if teams.is_dir():
        names += sorted(f"{TEAMS}/{p.name}" for p in teams.glob("*.toml") if p.is_file())
    for folder in HOOK_DIRS:
        root = workspace / folder
        if root.is_dir() and not root.is_symlink():
            found = (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
            names += sorted(str(p.relative_to(workspace)) for _, p in zip(range(MAX_HOOK_FILES), found, strict=False))
    return names


def fingerprint(workspace: Path) -> str:
    """A hash over the names and bytes of the granting files (none at all is a hash too)."""
    digest = hashlib.sha256()
    for name in granting_files(workspace):
        try:
            data = (workspace / name).read_bytes()
        except OSError as exc:
            data = f"<unreadable: {exc.strerror}>".encode()
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return "sha256:" + digest.hexdigest()


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
        from arnes.tools.filestate import atomic_write

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
