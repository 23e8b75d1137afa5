"""The instructions a session starts with, gathered as Claude Code and Codex gather theirs (DESIGN §16).

In this order (a model weighs what comes later, and later is closer to the work):
1. the user's own: `~/.codex/AGENTS.md` (its `AGENTS.override.md` first, as Codex reads it), then
   `~/.claude/CLAUDE.md`;
2. the project's, from the repository root down to the workspace: in each folder AGENTS.override.md,
   else AGENTS.md, else Codex's fallback names, else CLAUDE.md, else .claude/CLAUDE.md (one of them:
   CLAUDE.md is often AGENTS.md again; but a CLAUDE.md that imports AGENTS.md is read after it,
   for its own lines), then CLAUDE.local.md.
   Nothing above the repository root; with no repository, the workspace alone. A sub-folder's
   files wait until a file under it is touched (`folder_instructions`, agent/rule_delivery.py).
Claude Code's rules without `paths:` join at its places (agent/rules.py): `~/.claude/rules/` after
~/.claude/CLAUDE.md, the workspace's `.claude/rules/` after its AGENTS.md/CLAUDE.md and before its
CLAUDE.local.md; rules with `paths:` are kept aside for the loop (`Gathered.scoped`), as many as
rule_globs.MAX_WEIGHT allows in all (every file tool call is matched against them).
Each file is followed by what it imports (`@path`, agent/imports.py), depth first, every file once
(a cycle ends where it started). Where each may come from is agent/instruction_files.py's rule.
All of it stops at 32 KiB, Codex's budget (less for a small window); the cut is marked and named.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from arnes.agent.imports import MAX_DEPTH, import_paths
from arnes.agent.instruction_files import Loaded, Places, UserDirs, repository_root
from arnes.agent.rule_globs import MAX_WEIGHT
from arnes.agent.rules import Rule, find_rules
from arnes.extensions.codex_config import codex_config
from arnes.host.files import HostFiles, Refused
from arnes.host.git import repository, run_git
from arnes.host.paths import is_inside
from arnes.safe import one_line
from arnes.setting_sources import reads

CAP = 32 * 1024  # bytes of instructions in the first message at most
MAX_FILES = 64  # files read at most, imports included: a fan of imports cannot make a start slow
# In each folder the first of these that is there; Codex's fallback names (~/.codex/config.toml)
# go after AGENTS.md, as Codex looks for them.
OVERRIDE_NAME, AGENTS_NAME, CLAUDE_NAME = "AGENTS.override.md", "AGENTS.md", "CLAUDE.md"
PROJECT_NAMES = (OVERRIDE_NAME, AGENTS_NAME, CLAUDE_NAME, ".claude/CLAUDE.md")
LOCAL_NAME = "CLAUDE.local.md"
PROJECT_HEADER = "The project's {} (its own rules; follow them):"
LOCAL_HEADER = "Your notes for this project, {} (follow them):"
USER_HEADER = "Your own instructions, {} (for every project; follow them):"
USER_RULE_HEADER = "Your own rule, {} (for every project; follow it):"
PROJECT_RULE_HEADER = "The project's rule, {} (follow it):"


def _personal(root: Path, folder: Path) -> bool:
    """Whether `folder`'s CLAUDE.local.md is the user's own: Claude Code's personal file, which git
    ignores. One that git tracks or does not ignore, or one with no repository to ask, came with
    the folder: it is the project's, and is not presented as the user's words."""
    repo = repository(root)
    if isinstance(repo, str):
        return False
    try:
        done = run_git(repo, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", LOCAL_NAME],
                       folder=folder)  # fmt: skip
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.split(b"\0")[0] == LOCAL_NAME.encode()


def cap_for(window: int, most: int | None = None) -> int:
    """32 KiB (`most`: Codex's project_doc_max_bytes instead), or about a quarter of a small model's
    window (4 bytes a token): a bigger budget must still leave the model room to work."""
    return max(1024, min(most or CAP, window))


@dataclass(frozen=True)
class Section:
    header: str
    text: str
    shown: str
    cut: bool = False  # the file is longer than what was read: cut, however short the text looks


@dataclass
class _Walk:
    places: Places
    notes: list[str]
    sections: list[Section] = field(default_factory=list)
    scoped: list[Rule] = field(default_factory=list)  # rules with `paths:`, for the loop to send
    weight: int = 0  # of the scoped rules' globs: what matching them costs per character of a path
    seen: set[Path] = field(default_factory=set)
    stopped: bool = False  # MAX_FILES reached: said once
    names: tuple[str, ...] = PROJECT_NAMES

    def __post_init__(self) -> None:
        if not reads("user"):  # Codex's fallback names are the user's settings
            return
        codex = codex_config(self.places.user.codex)
        self.notes += codex.notes
        self.names = (OVERRIDE_NAME, AGENTS_NAME, *codex.fallbacks, CLAUDE_NAME, ".claude/CLAUDE.md")

    def user_level(self) -> None:
        if not reads("user"):
            return
        dirs, read = self.places.user, self.places.user_file
        header = USER_HEADER
        override, codex, claude = dirs.codex / "AGENTS.override.md", dirs.codex / "AGENTS.md", dirs.claude / "CLAUDE.md"
        before = len(self.sections)
        self._add(partial(read, override), dirs.shown(override), header)
        if len(self.sections) == before:  # Codex reads AGENTS.md only when the override says nothing
            self._add(partial(read, codex), dirs.shown(codex), header)
        self._add(partial(read, claude), dirs.shown(claude), header)
        self._rules(True, USER_RULE_HEADER)

    def project(self) -> None:
        workspace = self.places.files.root
        root = repository_root(workspace) or workspace
        top = HostFiles(root, self.places.files.rules)  # no link out of the repository
        for folder in [root / rel for rel in reversed(workspace.relative_to(root).parents)] + [workspace]:
            self.folder(root, top, folder)

    def folder(self, root: Path, top: HostFiles, folder: Path) -> None:
        """One folder's files: a parent's (read as the repository's), the workspace's, or a sub-folder's."""
        workspace = self.places.files.root
        main = next((name for name in self.names if os.path.lexists(folder / name)), None)
        # CLAUDE.md beside AGENTS.md is read too when it imports it: "AGENTS.md, and for Claude
        # these lines more" (the import itself is skipped: AGENTS.md was read just before).
        also = CLAUDE_NAME if main == AGENTS_NAME else None
        theirs = [name for name in (main, also) if name is not None] if reads("project") else []
        for name in [*theirs, LOCAL_NAME]:
            if name == LOCAL_NAME:
                if folder == workspace and reads("project"):
                    self._rules(False, PROJECT_RULE_HEADER)  # Claude Code's place: before CLAUDE.local.md
                if not reads("local"):
                    continue
            if not os.path.lexists(folder / name):
                continue
            header = LOCAL_HEADER if name == LOCAL_NAME and _personal(root, folder) else PROJECT_HEADER
            wanted = _imports_agents if name is also else None
            shown = os.path.relpath(folder / name, workspace)
            if is_inside(workspace, folder):
                self._add(partial(self.places.workspace_file, shown), shown, header, wanted)
            else:
                self._add(partial(self.places.parent_file, top, folder, name), shown, header, wanted)

    def _rules(self, user: bool, header: str) -> None:
        room = MAX_FILES - len(self.seen)
        if room <= 0 or self.stopped:
            return
        found = find_rules(self.places, self.notes, user=user, most=room)
        for rule in found:
            if rule.paths is not None:
                self.seen.add(rule.loaded.real)
                if self.weight + rule.paths.weight > MAX_WEIGHT:
                    why = f"the 'paths' globs of the rules come to more than {MAX_WEIGHT} alternatives and classes"
                    self.notes.append(f"{rule.shown} left out: {why}; use fewer or simpler globs")
                    continue
                self.weight += rule.paths.weight
                self.scoped.append(rule)
            else:
                self._take(rule.loaded, header)

    def _add(
        self, load: Callable[[], Loaded | None], shown: str, header: str, wanted: Callable[[Loaded], bool] | None = None
    ) -> None:
        try:
            loaded = load()
        except Refused as exc:
            self.notes.append(f"{shown} left out of the prompt: {exc.strerror}")
            return
        if loaded is not None and (wanted is None or wanted(loaded)):
            self._take(loaded, header)

    def _take(self, loaded: Loaded, header: str) -> None:
        if loaded.real in self.seen:
            return
        self.seen.add(loaded.real)
        if loaded.text:  # a name holding a line break would write a header of its own: escaped
            self.sections.append(Section(header.format(one_line(loaded.shown)), loaded.text, loaded.shown, loaded.cut))
        self._imports(loaded, 1)

    def _imports(self, importer: Loaded, depth: int) -> None:
        for written in import_paths(importer.text):
            if self.stopped or len(self.seen) >= MAX_FILES:
                if not self.stopped:
                    why = f"{MAX_FILES} instruction files at most"
                    self.notes.append(f"{importer.shown}: @{written} and later imports not read ({why})")
                self.stopped = True
                return
            try:
                found = self.places.imported(written, importer.path.parent, importer.user)
            except Refused as exc:
                self.notes.append(f"{importer.shown}: @{written} not imported: {exc.strerror}")
                continue
            if found is None or found.real in self.seen:
                continue  # no such file (`@someone` in prose), or read already
            if depth > MAX_DEPTH:
                self.notes.append(f"{importer.shown}: @{written} not imported: imports go {MAX_DEPTH} deep at most")
                continue
            self.seen.add(found.real)
            if found.text:
                header = f"{found.shown} (imported by {importer.shown}):"
                self.sections.append(Section(header, found.text, found.shown, found.cut))
            self._imports(found, depth + 1)


def _imports_agents(loaded: Loaded) -> bool:
    return any(os.path.normpath(written) == AGENTS_NAME for written in import_paths(loaded.text))


def gather(files: HostFiles, notes: list[str], *, user: UserDirs | None = None, cap: int = CAP) -> str:
    """The instructions for the first message (empty when there are none); what was left out goes to `notes`."""
    return render(collect(files, notes, user=user, cap=cap), cap, notes)


@dataclass(frozen=True)
class Gathered:
    sections: list[Section]  # for the first message, in order
    scoped: list[Rule]  # rules with `paths:`: sent with the first file tool result that touches a match


def collect(files: HostFiles, notes: list[str], *, user: UserDirs | None = None, cap: int = CAP) -> list[Section]:
    """Every instruction file that has something to say, in order (for `arnes doctor` too)."""
    return collect_all(files, notes, user=user, cap=cap).sections


def collect_all(files: HostFiles, notes: list[str], *, user: UserDirs | None = None, cap: int = CAP) -> Gathered:
    """The sections and the path-scoped rules, found in one walk (so one set of notes)."""
    walk = _Walk(Places(files, user or UserDirs.of(), cap + 1), notes)
    walk.user_level()
    walk.project()
    return Gathered(walk.sections, walk.scoped)


def render(sections: list[Section], cap: int, notes: list[str]) -> str:
    """The sections in order, cut at `cap` bytes; the cut file is marked and named in a note."""
    parts: list[str] = []
    used = 0
    size = f"{cap / 1024:g} KiB"
    for i, section in enumerate(sections):
        data = section.text.encode("utf-8")
        room = cap - used
        if len(data) <= room and not section.cut:
            parts.append(f"{section.header}\n{section.text}")
            used += len(data)
            continue
        later = len(sections) - i - 1
        if room > 0:
            cut = data[:room].decode("utf-8", errors="ignore")
            parts.append(f"{section.header}\n{cut}\n[{section.shown} cut here: the instructions stop at {size}; "
                         "Read it for the rest]")  # fmt: skip
            what = f"{section.shown} cut" + (f", {later} later file(s) left out" if later else "")
        else:
            what = f"{section.shown} and {later} later file(s) left out" if later else f"{section.shown} left out"
        notes.append(f"the instructions stop at {size}: {what}")
        break
    return "\n\n".join(parts)


def folder_instructions(files: HostFiles, folder: str, *, user: UserDirs | None = None, cap: int = CAP) -> str:
    """The instruction files of a folder below the workspace, for when a file under it is first touched.

    Claude Code reads a sub-folder's CLAUDE.md on demand; the same files, imports and cut as at
    the start, one folder at a time (what is left out is left out in silence: the model did not
    ask for these files).
    """
    notes: list[str] = []
    walk = _Walk(Places(files, user or UserDirs.of(), cap + 1), notes)
    workspace = files.root
    path = workspace / folder
    if path == workspace or not is_inside(workspace, path):
        return ""
    walk.folder(repository_root(workspace) or workspace, files, path)
    return render(walk.sections, cap, notes)


def scoped_rules(files: HostFiles, user: UserDirs | None = None) -> list[Rule]:
    """The rules with `paths:` (the first message's notes already named what was left out)."""
    return collect_all(files, [], user=user).scoped
