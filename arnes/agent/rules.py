"""Claude Code's modular rules: `~/.claude/rules/**/*.md` (yours) and `.claude/rules/**/*.md` (the project's).

A rule file without `paths:` in its front matter is an instruction like CLAUDE.md (agent/instructions.py
puts it in the first message); one with `paths:` (a glob or a list of them, agent/rule_globs.py) waits
until a file tool touches a file it names (agent/rule_delivery.py). Each file is read as its
CLAUDE.md neighbour is (agent/instruction_files.py): the project's through HostFiles (the Read rules,
no link out of the workspace), yours as Markdown only, no hidden file or folder, no link out of
~/.claude. Files come sorted by path, so the prompt is the same from run to run (a cached prefix).
A `paths:` that cannot be read leaves the rule out with a note: a rule meant for some files must not
become an instruction for every file. So does a glob that cannot be compiled (a class `[z-a]`, one
too long, braces that open too many alternatives; agent/rule_globs.py): globs are compiled here,
when the rule is read, so matching one on a file tool call cannot fail.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from arnes.agent.instruction_files import Loaded, Places
from arnes.agent.rule_globs import GlobError, Globs
from arnes.errors import ConfigError
from arnes.extensions.frontmatter import parse
from arnes.host.files import Refused
from arnes.host.ripgrep import printable
from arnes.safe import one_line

RULES = Path("rules")  # under ~/.claude
PROJECT_RULES = Path(".claude") / "rules"


@dataclass(frozen=True)
class Rule:
    loaded: Loaded  # its text is the body, without the front matter
    paths: Globs | None  # None: for every file

    @property
    def shown(self) -> str:
        return self.loaded.shown

    @property
    def globs(self) -> tuple[str, ...]:
        """The globs as written (empty: for every file)."""
        return self.paths.written if self.paths is not None else ()


def find_rules(places: Places, notes: list[str], *, user: bool, most: int) -> list[Rule]:
    """Your rules (`user`) or the project's, sorted by path; each one refused is one note."""
    top = places.user.claude / RULES if user else places.files.root / PROJECT_RULES
    found: list[Rule] = []
    paths = _rule_paths(top)
    if len(paths) > most:
        where = places.user.shown(top) if user else str(PROJECT_RULES)
        notes.append(f"{where}: {len(paths) - most} rule file(s) not read (too many instruction files)")
    for rel in paths[:most]:
        shown = places.user.shown(top / rel) if user else str(PROJECT_RULES / rel)
        if not printable(rel.as_posix()):  # it would be written into the prompt as a header
            notes.append(f"{one_line(shown)} left out of the prompt: its name holds a line break or control character")
            continue
        try:
            if user:
                loaded = places.in_user_folder(places.user.claude, RULES / rel, True)
            else:
                loaded = places.workspace_file(str(PROJECT_RULES / rel))
        except Refused as exc:
            notes.append(f"{shown} left out of the prompt: {exc.strerror}")
            continue
        if loaded is not None:
            rule = _parsed(loaded, notes)
            found += [rule] if rule is not None else []
    return found


def _rule_paths(top: Path) -> list[Path]:
    """The `.md` files under `top`, relative to it; hidden files and folders and linked folders skipped."""
    if not os.path.isdir(top):
        return []
    paths: list[Path] = []
    for folder, dirs, files in os.walk(top):  # links to folders are not walked into
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        here = Path(folder).relative_to(top)
        paths += [here / f for f in files if not f.startswith(".") and f.lower().endswith(".md")]
    return sorted(paths, key=lambda p: p.as_posix())


def _parsed(loaded: Loaded, notes: list[str]) -> Rule | None:
    try:
        doc = parse(loaded.text, Path(loaded.shown))
    except ConfigError as exc:
        notes.append(f"{loaded.shown} left out: {exc}")
        return None
    value = doc.meta.get("paths")
    if value is None:
        return Rule(dataclasses.replace(loaded, text=doc.body.strip()), None)
    if isinstance(value, str) and value.strip():
        globs = (value.strip(),)
    elif isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        globs = tuple(v.strip() for v in value)
    else:
        why = "its front matter 'paths' must be a glob or a list of globs (e.g. paths: [\"src/**/*.ts\"])"
        notes.append(f"{loaded.shown} left out: {why}; until then it applies to no file")
        return None
    try:
        paths = Globs.of(globs)
    except GlobError as exc:
        notes.append(f"{loaded.shown} left out: {exc}; fix its 'paths' (until then it applies to no file)")
        return None
    return Rule(dataclasses.replace(loaded, text=doc.body.strip()), paths)
