"""How hooks are configured: `hooks` in settings, in Claude Code's shape (DESIGN §13).

A copied Claude Code block works unchanged:
`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}`.
arnes's own settings files are strict (unknown key = error); `.claude/settings.json` is read
leniently (`lenient_hooks`): what arnes cannot run is named in a warning and skipped.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arnes.extensions.hook_if import check_if

EVENTS = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
    "SessionStart", "SessionEnd", "PreCompact", "Notification",
)  # fmt: skip
EventName = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
    "SessionStart", "SessionEnd", "PreCompact", "Notification",
]  # fmt: skip
FailMode = Literal["closed", "open"]
DEFAULT_TIMEOUT = 60.0
# Keys Claude Code's hook entries may carry that change nothing here (shown, not obeyed).
INFORMATIONAL = ("statusMessage",)
_PLAIN = re.compile(r"^[A-Za-z0-9_|]*$")


class HookCommand(BaseModel):
    """One command a hook runs."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1, description="Run with bash in the workspace; the event is on stdin.")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, description="Seconds before the hook's process group is killed.")
    sandbox: bool = Field(True, description="Run in the session's sandbox (false: only in your user settings).")
    statusMessage: str | None = None  # noqa: N815  (Claude Code's key; arnes shows the command instead)
    if_: str | None = Field(
        None,
        alias="if",
        description='A permission rule ("Bash(git push:*)", "Edit(*.ts)"): the hook runs only for calls it matches.',
    )

    @field_validator("if_")
    @classmethod
    def _rule(cls, value: str | None) -> str | None:
        why = check_if(value) if value is not None else None
        if why:
            raise ValueError(why)
        return value


class HookMatcher(BaseModel):
    """The hooks of one event whose matcher fits the tool name (or the start source, or the trigger)."""

    model_config = ConfigDict(extra="forbid")

    matcher: str = Field("", description='A tool name, "A|B", or a regex; "" or "*" matches all.')
    hooks: list[HookCommand] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if not _PLAIN.match(value) and value != "*":
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"matcher {value!r} is not a regular expression ({exc})") from exc
        return value


HookSettings = dict[EventName, list[HookMatcher]]
KEYS = frozenset(f.alias or name for name, f in HookCommand.model_fields.items())  # as written in settings


# Claude Code's names for arnes's tools, so a copied matcher (`"Task"`, `"Edit|MultiEdit"`) still fires.
CLAUDE_NAMES = {"Delegate": ("Task", "Agent"), "Edit": ("MultiEdit",)}


def matches(matcher: str, value: str | None) -> bool:
    """Claude Code's rule: "", "*" = all; plain names (and "A|B") match exactly; anything else is a
    regex. A tool matches under its Claude Code names too (Delegate is `Task` there)."""
    if matcher in ("", "*") or value is None:
        return True
    names = (value, *CLAUDE_NAMES.get(value, ()))
    if _PLAIN.match(matcher):
        return any(name in matcher.split("|") for name in names)
    return any(re.search(matcher, name) is not None for name in names)


@dataclass(frozen=True)
class HookEntry:
    """One configured command, where it came from, and whether it may run here (DESIGN §10)."""

    event: str
    matcher: str
    hook: HookCommand
    source: str  # the settings file
    user: bool  # from the user's own settings: may set "sandbox": false
    runs: bool  # False: a project's hook in a folder the user has not trusted
    # "sandbox": false holds only in a folder the user trusted: elsewhere the repository would pick
    # what the hook runs (`python3 -m black` imports its black/, `npx` its node_modules/.bin).
    folder_trusted: bool = True
    plugin_root: str | None = None  # a Claude Code plugin's hook: its folder, as CLAUDE_PLUGIN_ROOT

    @property
    def sandboxed(self) -> bool:
        return self.hook.sandbox or not self.user or not self.folder_trusted


def lenient_hooks(raw: Any, where: str) -> tuple[dict[str, Any], list[str]]:
    """A Claude Code `hooks` block as arnes settings: what runs here is kept, the rest named in warnings."""
    warnings: list[str] = []
    if not isinstance(raw, dict):
        return {}, [f"{where}: hooks must be an object of events; ignored"]
    kept: dict[str, Any] = {}
    for event, entries in raw.items():
        if event not in EVENTS:
            warnings.append(f"{where}: hooks.{event}: not an event arnes runs ({', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(entries, list):
            warnings.append(f"{where}: hooks.{event} must be a list of matchers; ignored")
            continue
        for i, entry in enumerate(entries):
            got = _lenient_entry(entry, f"{where}: hooks.{event}[{i}]", warnings)
            if got is not None:
                kept.setdefault(event, []).append(got)
    return kept, warnings


def _lenient_entry(entry: Any, where: str, warnings: list[str]) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        warnings.append(f"{where}: not an object; ignored")
        return None
    matcher = entry.get("matcher", "")
    try:
        HookMatcher(matcher=matcher if isinstance(matcher, str) else "")
    except ValueError as exc:
        warnings.append(f"{where}: {exc}; ignored")
        return None
    hooks = []
    for j, hook in enumerate(entry.get("hooks") or []):
        if not isinstance(hook, dict) or hook.get("type", "command") != "command" or not hook.get("command"):
            kind = hook.get("type") if isinstance(hook, dict) else None
            warnings.append(f'{where}.hooks[{j}]: only type "command" hooks run in arnes (got {kind!r}); skipped')
            continue
        extra = [k for k in hook if k not in KEYS]
        if extra:
            warnings.append(f"{where}.hooks[{j}]: keys arnes does not use, ignored: {', '.join(extra)}")
        kept = {k: v for k, v in hook.items() if k in KEYS}
        if "if" in kept and (why := check_if(kept["if"])) is not None:
            warnings.append(
                f"{where}.hooks[{j}].if: {why}; the condition is dropped, so the hook runs on every call its "
                "matcher matches (a guard that runs too often beats one that never runs)"
            )
            del kept["if"]
        try:
            HookCommand.model_validate(kept)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            warnings.append(f"{where}.hooks[{j}]: {problems}; skipped")
            continue
        hooks.append(kept)
    return {"matcher": matcher, "hooks": hooks} if hooks else None


_HOME_PREFIXES = ("~/", "$HOME/", "${HOME}/")
# Programs that run the script named after them: `bash ~/.claude/hooks/x.sh`, `python3 ~/bin/g.py`.
_INTERPRETERS = frozenset({"bash", "sh", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "deno", "bun"})


def hook_scripts(command: str, home: Path) -> list[Path]:
    """What of home a user's hook command needs to start: the script it runs (`~/.claude/hooks/x.sh`,
    or the file after an interpreter), that file alone. Not its folder (a `.env` or a key kept
    beside a script would be read by the repository's commands too), never a file the command only
    reads or writes (`>> ~/.claude/log`): the sandbox hides home, and the script is made readable as
    if listed in sandbox.read_paths. A script that needs more (a helper it sources) needs that
    listed in sandbox.read_paths, or `"sandbox": false` on the hook.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    runs = words[:1]
    if words and os.path.basename(words[0]) in _INTERPRETERS:
        runs += [next((w for w in words[1:] if not w.startswith("-")), "")]
    found: list[Path] = []
    for word in runs:
        prefix = next((p for p in _HOME_PREFIXES if word.startswith(p)), None)
        path = home / word[len(prefix) :] if prefix else Path(word)
        real = Path(os.path.realpath(path))
        if not path.is_absolute() or not real.is_file() or real.parent == home or not real.is_relative_to(home):
            continue
        found.append(real)
    return found
