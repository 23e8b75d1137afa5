"""Skills (DESIGN §13): folders holding a SKILL.md, whose body the model loads when it needs it.

Up front the model sees only each skill's name and a one-line description, in the first user
message (the system prompt and the tool schemas stay the same bytes in every workspace, so a
server's prefix cache hits). The `Skill` tool returns the body and the paths of the files beside
it. A skill is prompt text and its `allowed-tools` can only narrow (skill_scope.py), so skills
load in an untrusted folder too; project files are read through HostFiles (locations.py), so no
link puts a host file into a prompt, and the files beside SKILL.md are read with Read, under the
same gate as any other file.

Where they come from, first winning a name (the name in the front matter, else the folder's):
the user's `~/.config/arnes/skills/`, `~/.claude/skills/`, then Codex's `~/.agents/skills/` and
`~/.codex/skills/` (a repository must not replace the user's skill and its allowed-tools), the
project's `.arnes/skills/`, `.claude/skills/`, `.agents/skills/`, then the
skills arnes ships (bundled/).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from arnes.errors import ConfigError
from arnes.extensions.frontmatter import Document, load_user
from arnes.extensions.locations import Found, Refusal, discover, shadowed
from arnes.extensions.placeholders import substitute
from arnes.extensions.skill_scope import ActiveSkills
from arnes.host.files import HostFiles
from arnes.host.paths import is_inside, resolve_real
from arnes.permissions.engine import RuleEngine, folder_read_rule
from arnes.permissions.rules import RuleError, parse_rule
from arnes.safe import one_line
from arnes.tools.base import ToolError

BUNDLED = Path(__file__).parent / "bundled" / "skills"
NAME = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:)?[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # `plugin:` for a plugin's
DESCRIPTION_CAP = 160  # characters of a description in the list: a few tokens each
LIST_CAP = 40  # skills named in the first message; the rest are named by an unknown-name answer
FILES_CAP = 50  # files beside SKILL.md listed by the tool


@dataclass(frozen=True)
class SkillDef:
    name: str
    description: str
    body: str
    folder: Path  # absolute; inside the workspace for a project skill
    origin: str  # project | user | bundled
    allowed_tools: tuple[str, ...] | None  # None: the skill does not narrow
    real: Path  # the folder's real path at discovery: a later swap for a link is refused at load
    user_invocable: bool = True  # runs as `/name` (Claude Code's `user-invocable: false` says no)
    model_invocable: bool = True  # listed to and loaded by the model (`disable-model-invocation: true` says no)


def discover_skills(files: HostFiles, env: dict[str, str] | None = None) -> tuple[list[SkillDef], list[Refusal]]:
    """Every usable skill, and one line for each that was refused (for doctor and a warning)."""
    found, refused = discover("skills", files, env)
    taken = {f.name for f in found}
    for folder in _bundled_folders():
        if folder.name not in taken:
            try:
                found.append(Found(folder.name, load_user(folder / "SKILL.md"), "bundled"))
            except ConfigError as exc:
                refused.append(Refusal(folder / "SKILL.md", str(exc)))
    skills: dict[str, SkillDef] = {}
    for item in found:
        document = item.document
        try:
            skill = _skill(item, document, item.origin)
        except ConfigError as exc:
            refused.append(Refusal(document.path, str(exc)))
            continue
        if skill.name in skills:
            other = skills[skill.name].folder
            refused.append(shadowed(document.path, skill.name, other / "SKILL.md"))
            continue
        skills[skill.name] = skill
    return sorted(skills.values(), key=lambda s: s.name), refused


def _bundled_folders() -> list[Path]:
    try:
        return sorted(p for p in BUNDLED.iterdir() if (p / "SKILL.md").is_file())
    except OSError:
        return []


def _skill(item: Found, doc: Document, origin: str) -> SkillDef:
    name = item.final(doc.text("name"))
    if ":" in name and not item.namespace:
        raise ConfigError(
            f"{doc.path}: name {name!r} holds ':', which only a plugin's skills have (plugin:skill); rename it"
        )
    if not NAME.fullmatch(name):
        raise ConfigError(f"{doc.path}: name {name!r} must be letters, digits, '-', '_' or '.' (at most 64)")
    description = doc.text("description")
    if not description:
        raise ConfigError(
            f"{doc.path}: no 'description' in the front matter; add a line 'description: what it is for "
            "and when to use it' (the model picks skills by it)"
        )
    allowed = doc.names("allowed-tools")
    for entry in allowed or []:
        try:
            parse_rule(entry)
        except RuleError as exc:
            raise ConfigError(f"{doc.path}: allowed-tools: {exc}") from None
    body = doc.body.strip()
    if not body:
        raise ConfigError(f"{doc.path}: SKILL.md has no instructions after its front matter; write them")
    folder = doc.path.parent
    narrowing = tuple(allowed) if allowed is not None else None
    invocable = (doc.text("user-invocable") or "true").lower() != "false"
    model = not _flag(doc, "disable-model-invocation")
    return SkillDef(name, description, body, folder, origin, narrowing, resolve_real(folder), invocable, model)


def _flag(doc: Document, key: str) -> bool:
    """A yes/no key. A value that is neither refuses the skill: `disable-model-invocation` keeps a
    skill (a deploy) from the model, and a misspelt "ture" must not quietly hand it back."""
    value = (doc.text(key) or "false").lower()
    if value in {"true", "yes", "on"}:
        return True
    if value in {"false", "no", "off"}:
        return False
    raise ConfigError(f"{doc.path}: front matter '{key}' must be true or false, got {one_line(value)[:40]!r}")


@dataclass
class SkillCatalog:
    """The skills of one workspace, discovered once (at the first use) and shared with sub-agents."""

    files: HostFiles
    env: dict[str, str] | None = None
    _found: tuple[list[SkillDef], list[Refusal]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _load(self) -> tuple[list[SkillDef], list[Refusal]]:
        with self._lock:
            if self._found is None:
                self._found = discover_skills(self.files, self.env)
            return self._found

    def skills(self) -> list[SkillDef]:
        return self._load()[0]

    def refused(self) -> list[Refusal]:
        return self._load()[1]

    def model_skills(self) -> list[SkillDef]:
        """The skills the model may know of: a `disable-model-invocation` one is the user's alone,
        so neither its name nor its description reaches a prompt."""
        return [s for s in self.skills() if s.model_invocable]

    def get(self, name: str) -> SkillDef | None:
        return next((s for s in self.skills() if s.name == name), None)

    def summary(self, *, bundled: bool = True) -> str:
        """The list for the first user message: one short line a skill. `bundled=False` (a small
        window) leaves arnes's own skills out: a small model calls them for tasks they do not fit
        (a coding task became `Skill features-json`); they still load by name."""
        skills = [s for s in self.model_skills() if bundled or s.origin != "bundled"]
        if not skills:
            return ""
        lines = [f"- {s.name}: {_short(s.description)}" for s in skills[:LIST_CAP]]
        if len(skills) > LIST_CAP:
            lines.append(f"- ... and {len(skills) - LIST_CAP} more (call Skill with any name to list them)")
        return "Skills (call Skill with the name when a task matches one):\n" + "\n".join(lines)


def _short(text: str) -> str:
    line = one_line(text)
    return line if len(line) <= DESCRIPTION_CAP else line[: DESCRIPTION_CAP - 3] + "..."


@dataclass
class SkillLoader:
    """What the Skill tool does for one session: the body, the files, the narrowing, the allowance."""

    catalog: SkillCatalog
    engine: RuleEngine
    active: ActiveSkills
    session_id: str = ""  # ${CLAUDE_SESSION_ID} in a skill's body
    _allowed_folders: set[Path] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self, name: str, *, by_user: bool = False, arguments: str | None = None) -> str:
        """The prompt of a skill; `by_user` when the user ran it as `/name`, the only way a
        `disable-model-invocation` skill runs (its placeholders are then the command expansion's,
        commands.py `expand`). The model's call fills them here, with its `arguments`."""
        skill = self.catalog.get(name.strip())
        if skill is None or not (by_user or skill.model_invocable):
            names = ", ".join(s.name for s in self.catalog.model_skills()) or "none"
            if skill is not None:
                raise ToolError(
                    f"Skill {skill.name!r} is one only the user may run (its SKILL.md says "
                    f"disable-model-invocation: true), so it is not loaded. Do not do its steps another way; "
                    f"if it is needed, tell the user to run /{skill.name} themselves. Skills you may load: {names}."
                )
            raise ToolError(f"No skill {name!r}. Available skills: {names}. Call Skill again with one of these names.")
        where = self._readable(skill)
        files = beside(skill.real, self.engine)
        body, used = skill.body, False
        if not by_user:
            variables = {"CLAUDE_SKILL_DIR": str(skill.real), "CLAUDE_SESSION_ID": self.session_id}
            body, used = substitute(body, arguments or "", skill=True, variables=variables)
        parts = [f"Skill {skill.name} ({skill.origin}, {where}/SKILL.md):", body]
        if files:
            shown = "\n".join(f"- {where}/{f}" for f in files[:FILES_CAP])
            more = f"\n- ... {len(files) - FILES_CAP} more" if len(files) > FILES_CAP else ""
            parts.append(f"Files of this skill (Read them when the instructions point to them):\n{shown}{more}")
        if skill.allowed_tools is not None:
            self.active.narrow(skill.name, skill.allowed_tools)
            listed = ", ".join(skill.allowed_tools) or "no tools"
            parts.append(f"Until this task ends you may call only: {listed} (and Skill).")
        if arguments and arguments.strip() and not used:
            parts.append(f"ARGUMENTS: {arguments}")
        return "\n\n".join(parts)

    def _readable(self, skill: SkillDef) -> str:
        """The folder as the model should name it; a user's or bundled one outside the workspace
        becomes readable.

        A project skill never brings a grant: its files are in the workspace and go through the
        gate like any other. The folder must still be the one found at the start (a command in
        the sandbox may have swapped it for a link to the home folder since): a folder whose real
        path moved, or that is now a link, is refused rather than listed or opened. The allowance
        of a user's or bundled skill is an allow rule for exactly the real folder found at the
        start, added to the engine: a deny or ask rule still wins, and a link inside the folder
        to elsewhere matches it only as written, not as its real path, so it still asks."""
        root = self.engine.workspace
        real = resolve_real(skill.folder)
        moved = skill.folder.is_symlink() or real != skill.real
        if moved or (skill.origin == "project" and not is_inside(root, real)):
            raise ToolError(
                f"The folder of skill {skill.name} ({skill.folder}) changed since the session started "
                "(it is now a link or leads elsewhere), so it is not loaded. Go on without it and tell "
                "the user to check that folder."
            )
        if is_inside(root, real):
            return str(real.relative_to(root)) or "."
        rule = folder_read_rule(real)
        with self._lock:
            if rule is not None and real not in self._allowed_folders:
                self._allowed_folders.add(real)
                self.engine.add_rule("allow", rule, f"skill {skill.name}")
        return str(real)


def beside(folder: Path, engine: RuleEngine) -> list[str]:
    """Regular files under the skill's folder, reached through no link, that no rule hides.

    Each file's real path must stay under the folder (a sub-folder swapped for a link while
    this walks is not followed into, and a project skill lists no name from outside)."""
    out: list[str] = []
    root = folder  # a real path (the one found at discovery): not re-resolved here
    for top, dirs, names in os.walk(folder, followlinks=False):
        here = Path(top)
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink() and not d.startswith("."))
        for name in sorted(names):
            path = here / name
            rel = str(path.relative_to(folder))
            if rel == "SKILL.md" or path.is_symlink() or not path.is_file() or engine.hidden("Read", path):
                continue
            if not is_inside(root, resolve_real(path)):
                continue
            out.append(rel)
            if len(out) > FILES_CAP:
                return out
    return out
