"""A hook's `if` (Claude Code 2.1.85+): one permission rule, and the hook runs only for the tool
calls it matches (`"if": "Bash(git push:*)"` on a Bash matcher spawns nothing for `ls`).

The rule is read and matched by the permission engine itself, as a deny rule matches: every part
of a compound command counts (`ls && git push` matches, as in Claude Code since 2.1.89), with its
wrappers and assignments peeled off, and a path matches as written or as its real path. What the
engine cannot read (a command it cannot parse, a part hidden in `eval`, a tool whose arguments
name no path for a rule with one) runs the hook: an `if` is mostly a guard's filter, and a guard
that runs once too often costs a process, one that does not run costs the guard.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from arnes.host.paths import is_inside
from arnes.permissions.commands import decide_command
from arnes.permissions.engine import READ_FAMILY, WRITE_FAMILY, RuleEngine, rule_tools
from arnes.permissions.rules import Rule, RuleError, SourcedRule, anchor, parse_rule
from arnes.permissions.shell import MOST_COMMAND_CHARS, analyse
from arnes.permissions.types import Access, Target

TOOL_EVENTS = ("PreToolUse", "PostToolUse")  # the events with a tool call to match; on others `if` never holds
PATH_KEYS = ("file_path", "notebook_path", "path")
_CLAUDE = {"Task": "Delegate", "Agent": "Delegate", "MultiEdit": "Edit"}  # Claude Code's names for arnes's tools


def parse_if(raw: str) -> Rule:
    """The rule, in arnes's spelling; RuleError saying why it cannot be read."""
    text = raw.strip()
    tool = text.split("(", 1)[0]
    if tool in _CLAUDE:
        text = _CLAUDE[tool] + text[len(tool) :]
    return parse_rule(text)


class HookCondition:
    """One `if`, compiled once: a rule engine holding just that rule (as a deny: generous)."""

    def __init__(self, raw: str, workspace: Path) -> None:
        self.rule = parse_if(raw)
        self._engine = RuleEngine(workspace, rules=[SourcedRule("deny", self.rule.raw, "hook if")])
        self._workspace = workspace

    def holds(self, tool: str, tool_input: dict[str, Any]) -> bool:
        rule = self.rule
        if tool == "Bash" and rule.specifier is not None and rule.tool in (*READ_FAMILY, *WRITE_FAMILY):
            return self._touches(tool_input.get("command"))
        if rule.tool[:64] not in rule_tools(tool, _access(tool)):
            return False
        if rule.specifier is None:
            return True
        if tool == "Bash":
            return self._command(tool_input.get("command"))
        given = next((tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str)), None)
        if tool in READ_FAMILY and not given:  # Glob and Grep search the workspace by default
            given = str(self._workspace)
        access = _access(tool)
        if not isinstance(given, str) or not given or "\0" in given or access is None:
            return True  # a rule with a specifier on a call this cannot look into: the hook runs
        path = Path(given).expanduser()
        path = path if path.is_absolute() else self._workspace / path
        if tool in ("Glob", "Grep") and path.is_dir() and self._searches(path):
            return True  # a search of a folder the rule's files lie in shows them unless something hides them
        return self._engine.rule_covers("deny", tool, Target(path, access))

    def _touches(self, command: object) -> bool:
        """A Read or Edit rule on a command: it holds where that rule, as a deny, would stop the
        command (a file it reads or writes, as written or by its real path), or where the command
        cannot be read well enough to tell."""
        if not isinstance(command, str):
            return True
        return decide_command(self._engine, "Bash", command, "bypass").kind == "deny"

    def _searches(self, folder: Path) -> bool:
        """Whether the rule's files may lie under `folder` (or the rule covers the folder itself)."""
        glob = anchor(self.rule.specifier or "", str(self._workspace), os.path.expanduser("~"))
        fixed = re.split(r"[*?\[]", glob, maxsplit=1)[0].rstrip("/") or "/"
        rule_forms = {Path(fixed), Path(os.path.realpath(fixed))}
        folder_forms = {folder, Path(os.path.realpath(folder))}
        return any(is_inside(b, a) or is_inside(a, b) for a in rule_forms for b in folder_forms)

    def _command(self, command: object) -> bool:
        if not isinstance(command, str) or len(command) > MOST_COMMAND_CHARS:
            return True
        analysis = analyse(command)
        if analysis.error or analysis.opaque:
            return True
        for part in analysis.commands:
            for words in (part.words, [*part.wrappers, *part.words]):
                if self._engine.command_rule("deny", words) is not None:
                    return True
        return False


def _access(tool: str) -> Access | None:
    if tool in WRITE_FAMILY:
        return "write"
    if tool in READ_FAMILY:
        return "read"
    return None


def check_if(raw: object) -> str | None:
    """Why a hook's `if` cannot be used, or None: for the settings' warning and error lines."""
    if not isinstance(raw, str) or not raw.strip():
        return 'it must be one permission rule as a string, such as "Bash(git push:*)" or "Edit(*.ts)"'
    try:
        parse_if(raw)
    except RuleError as exc:
        return str(exc)
    return None
