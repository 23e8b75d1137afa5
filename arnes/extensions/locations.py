"""Where each kind of extension file lives (DESIGN §13), arnes's own folders before Claude Code's.

Project files are read through `HostFiles` (no link out of the workspace, no file a Read rule
hides), so a repository cannot ship `.arnes/commands/x.md -> ~/.ssh/id_rsa` and have the key
put into a prompt. The user's own folder (`~/.config/arnes/KIND/`) is read as it is.

An earlier location wins a name: `.arnes/commands/fix.md` over `.claude/commands/fix.md`, and
the project over the user (the project knows its own commands best).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arnes.errors import ConfigError
from arnes.extensions.frontmatter import MAX_BYTES, Document, decode, load_user
from arnes.host.files import HostFiles, Refused
from arnes.permissions.protected import user_config_dir

Kind = Literal["commands", "agents", "skills"]
PROJECT_DIRS: dict[Kind, tuple[str, ...]] = {
    "commands": (".arnes/commands", ".claude/commands"),
    "agents": (".arnes/agents", ".claude/agents"),
    "skills": (".arnes/skills", ".claude/skills", ".agents/skills"),
}


@dataclass(frozen=True)
class Found:
    name: str  # the file's stem, or the skill's folder name
    document: Document
    origin: str  # "project" or "user"


@dataclass(frozen=True)
class Refusal:
    path: Path
    why: str  # one line for `arnes doctor` and the start-up warning


def discover(kind: Kind, files: HostFiles, env: dict[str, str] | None = None) -> tuple[list[Found], list[Refusal]]:
    """Every file of `kind`, first location winning each name, and what could not be read."""
    found: dict[str, Found] = {}
    refused: list[Refusal] = []
    for rel in PROJECT_DIRS[kind]:
        for name, data, path in _project_entries(kind, files, rel, refused):
            if name in found:
                continue
            try:
                found[name] = Found(name, decode(data, path), "project")
            except ConfigError as exc:
                refused.append(Refusal(path, str(exc)))
    user = user_config_dir(env) / kind
    for name, path in _user_entries(kind, user):
        if name in found:
            continue
        try:
            found[name] = Found(name, load_user(path), "user")
        except ConfigError as exc:
            refused.append(Refusal(path, str(exc)))
    return sorted(found.values(), key=lambda f: f.name), refused


def _project_entries(kind: Kind, files: HostFiles, rel: str, refused: list[Refusal]) -> list[tuple[str, bytes, Path]]:
    if kind == "skills":
        candidates = [(d, f"{rel}/{d}/SKILL.md") for d in _subfolders(files.root / rel)]
    else:
        candidates = [(n.removesuffix(".md"), f"{rel}/{n}") for n, _ in files.entries(rel, ".md")]
    out = []
    for name, file_rel in candidates:
        try:
            data = files.read(file_rel, MAX_BYTES + 1)
        except Refused as exc:
            refused.append(Refusal(files.root / file_rel, f"{file_rel}: {exc.strerror}"))
            continue
        if data is not None:
            out.append((name, data, files.root / file_rel))
    return out


def _subfolders(folder: Path) -> list[str]:
    """Real folders (not links) directly in `folder`; HostFiles then judges the file inside."""
    try:
        return sorted(e.name for e in folder.iterdir() if e.is_dir() and not e.is_symlink())
    except OSError:
        return []


def _user_entries(kind: Kind, folder: Path) -> list[tuple[str, Path]]:
    if kind == "skills":
        return [(d, folder / d / "SKILL.md") for d in _subfolders(folder) if (folder / d / "SKILL.md").is_file()]
    try:
        return sorted((p.stem, p) for p in folder.glob("*.md") if p.is_file())
    except OSError:
        return []
