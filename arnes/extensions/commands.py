"""Custom slash commands (DESIGN §13): `.arnes/commands/NAME.md`, `.claude/commands/NAME.md` and the
user's `~/.config/arnes/commands/NAME.md`, each a prompt that `/NAME ARGS` expands.

A command is prompt text, so it works in a folder nobody trusted: what a repository puts in one
can only narrow. Its `allowed-tools` narrows the tools of that one prompt (see
permissions/scope.py); its `model` is a grant (DESIGN §10), so a project's applies only in a
trusted folder, the user's own always. Files are read through `HostFiles` (locations.py): a
command linked to a host file is refused, never expanded.

Arguments follow Claude Code's command files: `$ARGUMENTS` is the whole argument string,
`$1`, `$2`... the words (shell-like, quotes group), `$ARGUMENTS[0]`... the same words counted
from 0 (a skill run as `/name` counts `$0`, `$1`... from 0 too: placeholders.py); a body with none
of them gets `ARGUMENTS: ...` appended. Expansion is one pass, so an argument that itself says `$1`
stays as typed. `!`cmd`` lines and ```` ```! ```` blocks run as
Bash calls arnes makes through the hooks, the gate and the sandbox (command_shell.py), never on
the host, the placeholders in them (and a plugin's `${CLAUDE_PLUGIN_ROOT}`) put in quoted
(shell_args.py); `@file` stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arnes.config_claude import translate_rule
from arnes.errors import ConfigError
from arnes.extensions.locations import Found, Refusal, discover, linked, shadowed
from arnes.extensions.placeholders import substitute, words
from arnes.extensions.shell_args import Lookup, Value
from arnes.host.files import HostFiles
from arnes.permissions.rules import RuleError, parse_rule
from arnes.permissions.scope import ALWAYS

# What follows the slash, a namespace's folders first (`tools:x`); `/usr/bin/x` is a path, not a command.
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(?::[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
# Claude Code's tool names that have an arnes twin; other names in allowed-tools are dropped (narrower).
CLAUDE_TOOLS = {"MultiEdit": "Edit", "LS": "Glob", "Task": "Delegate"}
DESCRIPTION_CHARS = 80


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    body: str
    path: Path
    origin: str  # "project" or "user"
    description: str
    hint: str = ""  # argument-hint, e.g. "[file]"
    allowed: tuple[str, ...] | None = None  # arnes rules; None: the session's tools, unchanged
    model: str | None = None
    notes: tuple[str, ...] = ()  # what was dropped from the front matter, for doctor and the run
    plugin_root: Path | None = None  # a plugin's command: its folder, ${CLAUDE_PLUGIN_ROOT} in shell lines
    skill: bool = False  # a skill run as `/name`: `$N` counts from 0 (placeholders.py)
    variables: tuple[tuple[str, str], ...] = ()  # a skill's ${CLAUDE_SKILL_DIR} and ${CLAUDE_SESSION_ID}


@dataclass(frozen=True)
class Catalog:
    """The commands a session can run, and the files that could not become one."""

    commands: dict[str, Command] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)
    shadowed: list[Command] = field(default_factory=list)  # a built-in command has their name

    def names(self) -> list[str]:
        return sorted(self.commands)

    def find(self, name: str) -> Command | None:
        """The command `/name` runs: its own name, or (as current Claude Code names them) a
        namespaced one's last part when no other command has it (`/x` for `tools:x`)."""
        if name in self.commands or ":" in name:
            return self.commands.get(name)
        matching = [c for n, c in self.commands.items() if n.rpartition(":")[2] == name]
        return matching[0] if len(matching) == 1 else None

    def why_not(self, name: str) -> str | None:
        """Why a file for `name` exists but is no command: refused, or shadowed by a built-in."""
        wanted = name.split(":")
        for refusal in self.refused:
            if list(refusal.path.with_suffix("").parts[-len(wanted) :]) == wanted:
                return refusal.why
        for command in self.shadowed:
            if command.name == name:
                return f"{command.path} is not run: /{name} is a built-in command of arnes; rename the file"
        return None


MCP_PROMPT_PREFIX = "mcp__"  # `/mcp__SERVER__PROMPT`: a server's prompt, as Claude Code names it


def load_catalog(files: HostFiles, reserved: frozenset[str], env: dict[str, str] | None = None) -> Catalog:
    """Every command file, first location winning a name (the user's own, then the project's:
    locations.py); `reserved` are the built-in names (no slash)."""
    found, refused = discover("commands", files, env)
    catalog = Catalog(refused=[*refused, *unread(files)])
    for item in found:
        path = item.document.path
        if not NAME.match(item.name):
            why = (
                f"{path}: '{item.name}' cannot follow a slash (letters, digits, '_', '.', '-'; a folder makes "
                "'folder:'); rename the file or its folder"
            )
            catalog.refused.append(Refusal(path, why))
            continue
        if item.name.startswith(MCP_PROMPT_PREFIX):  # a repository's file must not answer for your server's prompt
            why = f"{path}: '/{item.name}' names an MCP server's prompt, so no command file takes it; rename it"
            catalog.refused.append(Refusal(path, why, shadowed=True))
            continue
        try:
            command = _command(item)
        except ConfigError as exc:
            catalog.refused.append(Refusal(path, str(exc)))
            continue
        if item.name in reserved:
            catalog.shadowed.append(command)
        elif item.name in catalog.commands:
            catalog.refused.append(shadowed(path, item.name, catalog.commands[item.name].path))
        else:
            catalog.commands[item.name] = command
    return catalog


def unread(files: HostFiles) -> list[Refusal]:
    """What in the project's command folders is never read, and why: links (locations.linked)."""
    return linked("commands", files)


def _command(item: Found) -> Command:
    doc = item.document
    notes: list[str] = []
    allowed = doc.names("allowed-tools")
    rules = None if allowed is None else tuple(_rules(allowed, doc.path, notes))
    description = doc.text("description") or _first_line(doc.body)
    return Command(
        name=item.name,
        body=doc.body,
        path=doc.path,
        origin=item.origin,
        description=description,
        hint=doc.text("argument-hint", literal=True) or "",
        allowed=rules,
        model=doc.name("model") or None,
        notes=tuple(notes),
        plugin_root=item.plugin_root,
    )


def _rules(entries: list[str], path: Path, notes: list[str]) -> list[str]:
    """allowed-tools as arnes rules: Claude Code's spellings translated, unknown tools dropped
    (dropping one narrows further; it never widens), a malformed entry refuses the file."""
    rules = []
    for entry in entries:
        tool, paren, rest = entry.partition("(")
        if tool in ALWAYS:
            continue  # every fence lets it through anyway

        translated = translate_rule(CLAUDE_TOOLS.get(tool, tool) + paren + rest)
        try:
            parse_rule(translated)
        except RuleError as exc:
            if "unknown tool" in str(exc):
                notes.append(f"allowed-tools '{entry}' names no arnes tool; dropped, so it is not allowed")
                continue
            raise ConfigError(f"{path}: allowed-tools: {exc}") from None
        rules.append(translated)
    return rules


def _first_line(body: str) -> str:
    line = next((ln.strip().lstrip("#").strip() for ln in body.splitlines() if ln.strip()), "")
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 3] + "..."


def split_invocation(text: str) -> tuple[str, str] | None:
    """`/NAME ARGS` -> (NAME, ARGS); None when the text is no command (`/usr/bin/x is slow` is a task)."""
    if not text.startswith("/"):
        return None
    head, *rest = re.split(r"\s", text[1:], maxsplit=1)
    if not NAME.match(head):
        return None
    return head, rest[0].strip() if rest else ""


def _word(match: re.Match[str], parts: list[str]) -> str | None:
    """The word `$ARGUMENTS[N]` (from 0) or `$N` (from 1) names, "" past the last; None for `$ARGUMENTS`."""
    if match.group(1) is not None:
        n = int(match.group(1))
        return parts[n] if n < len(parts) else ""
    if match.group(2) is not None:
        n = int(match.group(2))
        return parts[n - 1] if n <= len(parts) else ""
    return None


def expand(command: Command, arguments: str, placed: bool = False) -> str:
    """The prompt the model gets for `/NAME arguments` (a skill's counts `$N` from 0, placeholders.py;
    `placed`: its shell lines took the arguments already, so they are not appended either)."""
    text, used = substitute(command.body, arguments, skill=command.skill, variables=dict(command.variables))
    used = used or placed
    text = text.strip()
    if not used and arguments:
        text = f"{text}\n\nARGUMENTS: {arguments}"
    return text


def shell_values(command: Command, arguments: str) -> Lookup:
    """What each placeholder of a shell line stands for (extensions/shell_args.py quotes it):
    `$ARGUMENTS` the words as typed, `$N` one word, `${CLAUDE_PLUGIN_ROOT}` a plugin's folder
    (left as written for a command that is no plugin's)."""
    parts = words(arguments)

    def lookup(match: re.Match[str]) -> Value | None:
        if match.group(0) == "${CLAUDE_PLUGIN_ROOT}":
            root = command.plugin_root
            return None if root is None else Value(str(root), (str(root),))
        word = _word(match, parts)
        if word is None:
            return Value(arguments, tuple(parts))
        return Value(word, (word,) if word else ())

    return lookup


def unknown_message(name: str, catalog: Catalog, builtins: list[str], skills: Sequence[str] = ()) -> str:
    """One line: what is wrong with `/name` and which commands (and skills) there are."""
    why = catalog.why_not(name)
    custom = ", ".join(f"/{n}" for n in catalog.names()) or "none (add .arnes/commands/NAME.md)"
    listed = f"custom commands: {custom}" + (f"; skills: {', '.join(f'/{n}' for n in skills)}" if skills else "")
    listed += f"; built in: {', '.join(builtins)}" if builtins else ""
    if why:
        return f"/{name}: {why}; {listed}"
    return f"unknown command /{name}; {listed}"
