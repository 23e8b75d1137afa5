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
from typing import TYPE_CHECKING, Literal

from arnes.errors import ConfigError
from arnes.extensions.locations import PROJECT_DIRS
from arnes.host.paths import is_inside, resolve_real
from arnes.nesting import json_loads
from arnes.permissions.protected import claude_user_dir, user_config_dir
from arnes.permissions.trust_frontmatter import frontmatter_grants
from arnes.permissions.trust_scripts import Uncoverable, referenced_scripts

if TYPE_CHECKING:
    from arnes.extensions.plugins import Plugin

SETTINGS = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".arnes/settings.json",
    ".arnes/settings.local.json",
    ".mcp.json",  # starts servers
)
TEAMS = ".arnes/teams"  # team files choose agents, their flags and verify commands
HOOK_DIRS = (".arnes/hooks", ".claude/hooks")  # where hooks keep their scripts: a changed script asks again
# A project's output styles write arnes's own instructions (extensions/output_styles.py): hashed whole.
STYLE_DIRS = PROJECT_DIRS["output-styles"]
# Every granting file is hashed whole. A folder whose hook folders hold more files than this, or
# whose granting files come to more bytes, cannot be trusted as it is (Uncoverable, one line with
# the fix): trust is never given to a part of what can run.
MAX_HOOK_FILES = 2000
MAX_HASH_BYTES = 256 << 20
_CHUNK = 1 << 20
Status = Literal["trusted", "changed", "declined", "unknown"]


def granting_files(workspace: Path) -> list[str]:
    """The workspace's files that can grant, relative, in a fixed order.

    The hook folders are walked without following links, every name sorted: a link (to a file, or
    to a folder inside the workspace, which is walked too) is an entry of its own, hashed by its
    target text and its target's bytes. Then the workspace files that the hooks and MCP servers of
    the project's settings, and of your own, name (trust_scripts.py). Past MAX_HOOK_FILES in the
    hook folders: Uncoverable."""
    names = [n for n in SETTINGS if (workspace / n).is_symlink() or _grants(workspace / n)]
    teams = workspace / TEAMS
    if teams.is_dir():
        names += sorted(f"{TEAMS}/{p.name}" for p in teams.glob("*.toml") if p.is_file())
    root = resolve_real(workspace)
    hooks: list[str] = []
    from arnes.extensions.plugins import enabled_plugins

    plugins = enabled_plugins(None, workspace)[0]  # read once: their styles and their hooks and servers
    for folder in (*HOOK_DIRS, *STYLE_DIRS, *_plugin_styles(plugins, root)):
        hooks += _tree(workspace, root, folder, set(), hooks)
    names += hooks
    taken = set(names)
    settings = [workspace / n for n in SETTINGS if n in taken]
    settings += [claude_user_dir() / "settings.json", user_config_dir() / "settings.json"]
    for name in referenced_scripts(workspace, settings, _plugin_blocks(plugins)):
        if name in taken:
            continue
        if (workspace / name).is_dir():  # a folder run as a program (through a link too: _tree walks it)
            found = [n for n in _tree(workspace, root, name, set(), names) if not _cached(n)]
        else:
            found = [name]
        names += [n for n in found if n not in taken]
        taken.update(found)
    return names


def _plugin_styles(plugins: list[Plugin], root: Path) -> list[str]:
    """The output-style folders of the plugins on here that lie inside the workspace (a
    `--plugin-dir` of the repository's own): a style writes arnes's instructions, as the project's
    own `.claude/output-styles` do, and is hashed the same way."""
    found: list[str] = []
    for plugin in plugins:
        for folder in plugin.folders("output-styles"):
            if is_inside(root, folder):
                found.append(str(folder.relative_to(root)))
    return found


def _plugin_blocks(plugins: list[Plugin]) -> list[tuple[str, object]]:
    """The hooks and servers of the Claude Code plugins on here, shaped as settings: a plugin hook
    of yours that runs a workspace file runs the repository's file, as your own hook would."""
    blocks: list[tuple[str, object]] = []
    for plugin in plugins:
        # A language server's block has the shape of an MCP server's (command, args).
        for key, part in (("hooks", plugin.hooks), ("mcpServers", plugin.servers), ("mcpServers", plugin.lsp_servers)):
            try:
                found = part()
            except ConfigError:  # does not parse: it runs nothing either (config.py says so)
                continue
            if found is not None:
                blocks.append((found[0], {key: found[1]}))
    return blocks


def _cached(name: str) -> bool:
    """What an interpreter writes as it runs (bytecode): hashing it would ask again after every run."""
    return "/__pycache__/" in f"/{name}/" or name.endswith((".pyc", ".pyo"))


def _grants(path: Path) -> bool:
    """A settings file, but an empty Claude Code one: it grants nothing and is read as none (the
    sandbox's stand-in for a missing one is such a file while a session runs)."""
    if not path.is_file():
        return False
    return path.parent.name != ".claude" or path.stat().st_size > 0


def _tree(workspace: Path, root: Path, rel: str, seen: set[Path], before: list[str]) -> list[str]:
    """`rel` and what lies under it, sorted: files, links, and the contents of a linked folder that
    is inside the workspace (each real folder once, so a link loop ends). `before`: the entries
    already found, which count towards the cap."""
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
        out += _tree(workspace, root, f"{rel}/{child}", seen, before + out)
        if len(before) + len(out) > MAX_HOOK_FILES:
            raise Uncoverable(
                f"{root} cannot be trusted as it is: its hook and output-style folders hold more than "
                f"{MAX_HOOK_FILES} files, more than arnes hashes, and a hook may run any of them; keep only what "
                "hooks run in .claude/hooks/ and .arnes/hooks/, or use --trust for one run"
            )
    return out


def fingerprint(workspace: Path) -> str:
    """A hash over the names and whole contents of the granting files, then the granting keys of
    the project's command and agent files (trust_frontmatter.py); none at all is a hash too."""
    digest = hashlib.sha256()
    budget = [MAX_HASH_BYTES]  # this call's own count: no state outlives it
    root = resolve_real(workspace)
    for name in granting_files(workspace):
        digest.update(name.encode() + b"\0" + _content(root / name, root, budget))
    for line in frontmatter_grants(workspace):
        digest.update(b"front matter\0" + line.encode("utf-8", errors="surrogateescape") + b"\0")
    return "sha256:" + digest.hexdigest()


def _content(path: Path, root: Path, budget: list[int]) -> bytes:
    """What stands for one file: a link's target text, where the name leads when a link on the
    way sends it elsewhere, then the hash of all the bytes of the regular file it leads to."""
    parts = []
    try:
        if path.is_symlink():
            parts.append(b"link:" + os.fsencode(os.readlink(path)))
        real = resolve_real(path)
        if real != Path(os.path.abspath(path)):
            parts.append(b"real:" + os.fsencode(real.relative_to(root) if is_inside(root, real) else real))
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            parts.append(b"not a file")
        else:
            parts.append(_hash(path, root, budget))
    except OSError as exc:
        parts.append(f"<unreadable: {exc.strerror}>".encode())
    return b"\0".join(parts)


def _hash(path: Path, root: Path, budget: list[int]) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise Uncoverable(
                    f"{root} cannot be trusted as it is: its settings, hook folders and the scripts they "
                    f"name come to more than {MAX_HASH_BYTES >> 20} MiB, more than arnes hashes; keep data "
                    "out of .claude/hooks/ and .arnes/hooks/, or use --trust for one run"
                )
            digest.update(chunk)
    return digest.digest()


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
            raw = json_loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:  # not UTF-8, not JSON, nested too deep
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
