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

from pathlib import Path
from typing import Any

from arnes.permissions.engine import READ_FAMILY, WRITE_FAMILY, RuleEngine, rule_tools
from arnes.permissions.rules import Rule, RuleError, SourcedRule, parse_rule
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
        return self._engine.rule_covers("deny", tool, Target(path, access))

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
