"""Where each kind of extension file lives (DESIGN §13, §16): the user's own folders first, then the
project's, arnes's own folders before Claude Code's at each level.

Project files are read through `HostFiles` (no link out of the workspace, no file a Read rule
hides), so a repository cannot ship `.arnes/commands/x.md -> ~/.ssh/id_rsa` and have the key
put into a prompt. The user's own folders (`~/.config/arnes/KIND/`, then Claude Code's
`~/.claude/KIND/`) are read as they are: the user's files, trusted like the user's settings.

An earlier location wins a name: the user's `~/.config/arnes/agents/reviewer.md` over a
project's `.arnes/agents/reviewer.md`, and `.arnes/commands/fix.md` over `.claude/commands/fix.md`.
The user's own file comes first because a definition can only narrow: a repository that ships a
file of the same name (or front matter `name: reviewer`) must not replace the user's narrowing
(tools, mode, allowed-tools) with its own wider one. The name that decides is the final one (a
file's front-matter `name` for agents and skills), so `discover` keeps every file, in that order,
and each catalog lets the first take a name and reports the others with `shadowed`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arnes.errors import ConfigError
from arnes.extensions.frontmatter import MAX_BYTES, Document, decode, load_user
from arnes.extensions.plugins import enabled_plugins
from arnes.host.files import HostFiles, Refused
from arnes.permissions.protected import claude_user_dir, codex_user_dir, user_config_dir
from arnes.setting_sources import reads

Kind = Literal["commands", "agents", "skills", "output-styles"]
CODEX_PROMPTS = "prompts:"  # the namespace of ~/.codex/prompts/*.md
NAMESPACE_DEPTH = 3  # folder levels under a command folder: `a/b/c/x.md` is /a:b:c:x
PROJECT_DIRS: dict[Kind, tuple[str, ...]] = {
    "commands": (".arnes/commands", ".claude/commands"),
    "agents": (".arnes/agents", ".claude/agents"),
    "skills": (".arnes/skills", ".claude/skills", ".agents/skills"),
    "output-styles": (".arnes/output-styles", ".claude/output-styles"),
}


@dataclass(frozen=True)
class Found:
    name: str  # the file's stem (a command's with its folders: `tools:x`), or the skill's folder name
    document: Document
    origin: str  # "project" or "user" (a plugin the user installed is theirs)
    namespace: str = ""  # a plugin's `NAME:`, already in `name`; it prefixes a front-matter name too
    plugin_root: Path | None = None  # a plugin's file: the plugin's folder

    def final(self, named: str | None) -> str:
        """The name the catalog uses: a front matter's `named` (in the plugin's namespace), else `name`."""
        return self.namespace + named if named else self.name


@dataclass(frozen=True)
class Refusal:
    path: Path
    why: str  # one line for `arnes doctor` and the start-up warning
    shadowed: bool = False  # readable, but an earlier location's file has its name


def shadowed(path: Path, name: str, winner: Path | str) -> Refusal:
    """The one line for a file whose name an earlier location took (see the module's docstring)."""
    why = (
        f"{path} is not used: {winner} has the name {name!r} and comes first (your own files in "
        "~/.config/arnes/ then ~/.claude/, then the project's .arnes/, then .claude/); rename one"
    )
    return Refusal(path, why, shadowed=True)


def one_warning(what: str, lines: list[str]) -> str | None:
    """The one start-up line for a kind's files that were not used, or used in part (a collection
    copied from Claude Code may hold dozens): the line itself when there is one, else how many
    and where each is named with why."""
    if len(lines) <= 1:
        return lines[0] if lines else None
    return f"{len(lines)} {what} not used, or used in part; `arnes doctor` lists each with why"


def discover(kind: Kind, files: HostFiles, env: dict[str, str] | None = None) -> tuple[list[Found], list[Refusal]]:
    """Every file of `kind` in precedence order (the user's, then each project folder in turn;
    by name within one), and what could not be read. Several may have the same name: the caller
    decides by the final name, the first winning it; `shadowed` says why another is not used."""
    found: list[Found] = []
    refused: list[Refusal] = []
    mine, theirs = reads("user", env), reads("project", env)
    for user in user_folders(kind, env) if mine else []:
        for name, path in _user_entries(kind, user):
            try:
                found.append(Found(name, load_user(path), "user"))
            except ConfigError as exc:
                refused.append(Refusal(path, str(exc)))
    if kind == "commands" and mine:  # Codex's custom prompts, run as Codex runs them: /prompts:NAME
        for name, path in _user_entries(kind, codex_user_dir(env) / "prompts"):
            try:
                found.append(Found(CODEX_PROMPTS + name, load_user(path), "user", CODEX_PROMPTS))
            except ConfigError as exc:
                refused.append(Refusal(path, str(exc)))
    plugins = enabled_plugins(env, files.root)[0] if mine else []
    for plugin in plugins:
        # A --plugin-dir folder is whatever the user pointed at (often the repository's): its
        # prompts are the project's, whose grants (a `model`) wait for trust.
        origin = "project" if plugin.enabled_by == "--plugin-dir" else "user"
        for folder in plugin.folders(kind):
            for name, path in _user_entries(kind, folder):
                try:
                    document = _plugin_file(plugin.root, path)
                    found.append(Found(plugin.namespace + name, document, origin, plugin.namespace, plugin.root))
                except ConfigError as exc:
                    refused.append(Refusal(path, str(exc)))
    project, project_refused = project_files(kind, files) if theirs else ([], [])
    spaces = tuple(plugin.namespace for plugin in plugins)
    for item in [item for item in project if spaces and item.name.startswith(spaces)]:
        project.remove(item)  # `/kit:check` is your plugin's: a repository may not answer to it
        space = item.name.partition(":")[0]
        why = f"{item.document.path}: {item.name} is in the namespace of your plugin {space}; rename it"
        project_refused.append(Refusal(item.document.path, why))
    return found + project, refused + project_refused


def project_files(kind: Kind, files: HostFiles) -> tuple[list[Found], list[Refusal]]:
    """The project's files of `kind`, in precedence order, read as `discover` reads them (the trust
    fingerprint reads their grants through this very function: what it covers is what is used)."""
    found: list[Found] = []
    refused: list[Refusal] = []
    for rel in PROJECT_DIRS[kind]:
        for name, data, path in _project_entries(kind, files, rel, refused):
            try:
                found.append(Found(name, decode(data, path), "project"))
            except ConfigError as exc:
                refused.append(Refusal(path, str(exc)))
    return found, refused


def user_folders(kind: Kind, env: dict[str, str] | None = None) -> list[Path]:
    """The user's folders of `kind`, arnes's own first: it wins a name both have. Skills also come
    from Codex's folders: `~/.agents/skills` (its documented user location) and `~/.codex/skills`
    (`$CODEX_HOME`; where its first releases kept them, still read by Codex)."""
    mine = [user_config_dir(env) / kind, claude_user_dir(env) / kind]
    if kind != "skills":
        return mine
    home = Path(os.path.expanduser((dict(os.environ) if env is None else env).get("HOME", "~")))
    return [*mine, home / ".agents" / "skills", codex_user_dir(env) / "skills"]


def user_skill_folders(env: dict[str, str] | None = None) -> list[Path]:
    """Where the user's own skills live (the sandbox lets commands read them: a skill runs its scripts)."""
    return user_folders("skills", env)


def _project_entries(kind: Kind, files: HostFiles, rel: str, refused: list[Refusal]) -> list[tuple[str, bytes, Path]]:
    if kind == "skills":
        candidates = [(d, f"{rel}/{d}/SKILL.md") for d in subfolders(files.root / rel)]
    else:
        folders = namespaces(files.root, rel) if kind == "commands" else [("", rel)]
        candidates = [
            (prefix + n.removesuffix(".md"), f"{where}/{n}")
            for prefix, where in folders
            for n, _ in files.entries(where, ".md")
        ]
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


def namespaces(root: Path, rel: str, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(name prefix, folder under `root`) of a command folder and the real folders in it, as Claude
    Code namespaces them: `.claude/commands/tools/x.md` is `/tools:x`. Folders starting with a dot
    are left out; nesting stops at NAMESPACE_DEPTH."""
    out = [(prefix, rel)]
    if depth < NAMESPACE_DEPTH:
        for name in subfolders(root / rel):
            if not name.startswith("."):
                out += namespaces(root, f"{rel}/{name}", f"{prefix}{name}:", depth + 1)
    return out


def subfolders(folder: Path) -> list[str]:
    """Real folders (not links) directly in `folder`; HostFiles then judges the file inside."""
    try:
        return sorted(e.name for e in folder.iterdir() if e.is_dir() and not e.is_symlink())
    except OSError:
        return []


def _plugin_file(root: Path, path: Path) -> Document:
    """A plugin's prompt file, read through no link that leads out of the plugin's folder (a
    command linked to ~/.ssh/id_rsa or /proc/self/environ would be read as the user's words)."""
    files = HostFiles(root)  # made real: the folders a manifest names are given real too
    try:
        data = files.read(str(path.relative_to(files.root)), MAX_BYTES + 1)
    except (Refused, ValueError) as exc:
        raise ConfigError(f"{path}: not read: {exc}") from None
    if data is None:
        raise ConfigError(f"{path}: not read: it is gone")
    return decode(data, path)


def _user_entries(kind: Kind, folder: Path) -> list[tuple[str, Path]]:
    if kind == "skills":
        return [(d, folder / d / "SKILL.md") for d in subfolders(folder) if (folder / d / "SKILL.md").is_file()]
    folders = namespaces(folder, ".") if kind == "commands" else [("", ".")]
    out = []
    for prefix, rel in folders:
        try:
            out += sorted((prefix + p.stem, p) for p in (folder / rel).glob("*.md") if p.is_file())
        except OSError:
            continue
    return out


def linked(kind: Kind, files: HostFiles) -> list[Refusal]:
    """The links where a kind's project files live (a folder, or a NAME.md): never read, since one
    could lead to ~/.ssh, and named so the start-up warning and `arnes doctor` can say why."""
    out = []
    for top in PROJECT_DIRS[kind]:
        if (files.root / top).is_symlink():
            out.append(
                Refusal(files.root / top, f"{top} is a link: arnes reads a project's {kind} only from real folders")
            )
            continue
        for _, rel in namespaces(files.root, top) if kind == "commands" else [("", top)]:
            try:
                entries = sorted((files.root / rel).iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink() and entry.name.endswith(".md"):
                    why = (
                        f"{rel}/{entry.name} is a link (to {os.path.realpath(entry)}): arnes reads only real files here"
                    )
                    out.append(Refusal(entry, f"{why}, so no host file reaches a prompt; copy the file instead"))
    return out
