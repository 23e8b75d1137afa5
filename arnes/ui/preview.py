"""What a tool's result says, in a line and a few lines under it: the person sees what the agent saw.

`ok (3 ms)` tells nothing; the first lines of a command's output, the number of matches or the
lines an Edit changed do. Each tool's output has a known shape (tools/*.py); anything else, an
extension's tool for instance, shows its first lines. The text returned is raw: the renderer makes
it visible before printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

LINES = 4  # lines shown under a result at most
_EXIT = re.compile(r"^exit code: (-?\d+)")
_NUMBERED = re.compile(r"^\s*\d+\t")
_MORE = re.compile(r"^\.\.\. \((\d+) more")


@dataclass(frozen=True)
class Preview:
    summary: str  # after the mark: `exit 0 · 12 lines`, `3 files`, `-1 +1 lines`
    lines: list[str] = field(default_factory=list)  # shown indented under it
    diff: bool = False  # lines start with - or +, to be coloured


def preview(name: str, args: dict[str, Any], output: str) -> Preview:
    """A short, readable account of one successful result."""
    make = _BY_TOOL.get(name, _generic)
    return make(args, output)


def label(name: str, args: dict[str, Any]) -> str:
    """The call in a few words, to tell parallel results apart: `Read pricing.py`, `Grep "def"`."""
    for key in ("file_path", "command", "pattern", "path", "id", "topic", "task"):
        value = args.get(key)
        if isinstance(value, str) and value:
            shown = value.splitlines()[0] if value.strip() else value
            shown = shown if len(shown) <= 40 else shown[:39] + "…"
            return f"{name} {shown!r}" if key == "pattern" else f"{name} {shown}"
    return name


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('ch') else 's'}"


def _head(lines: list[str], limit: int = LINES, tail: int = 0) -> list[str]:
    """The first lines, how many more there were, and the last `tail` (where a test run says OK)."""
    if len(lines) <= limit:
        return lines
    first = limit - 1 - tail
    hidden = len(lines) - first - tail
    return [*lines[:first], f"… {hidden} more line{'s' if hidden != 1 else ''}", *lines[len(lines) - tail :]]


def _bash(args: dict[str, Any], output: str) -> Preview:
    lines = output.split("\n")
    match = _EXIT.match(lines[0]) if lines else None
    if match is None:  # started in the background, or a timeout note
        return Preview(lines[0] if lines else "no output", _head(lines[1:]))
    body = [line for line in lines[1:] if line not in ("[stdout]", "[stderr]")]
    while body and not body[-1].strip():
        body.pop()
    if body == ["(no output)"]:
        body = []
    summary = f"exit {match.group(1)}" + (f" · {_plural(len(body), 'line')}" if body else " · no output")
    return Preview(summary, _head(body, tail=1))


def _read(args: dict[str, Any], output: str) -> Preview:
    lines = output.split("\n")
    numbered = [line for line in lines if _NUMBERED.match(line)]
    if not numbered:
        return _generic(args, output)
    first, last = numbered[0].split("\t", 1)[0].strip(), numbered[-1].split("\t", 1)[0].strip()
    return Preview(f"{_plural(len(numbered), 'line')} (lines {first}-{last})")


def _files(args: dict[str, Any], output: str) -> Preview:
    lines = [line for line in output.split("\n") if line]
    if len(lines) == 1 and lines[0].startswith("No "):
        return Preview(lines[0])
    found = [line for line in lines if not line.startswith("... (")]
    more = sum(int(m.group(1)) for line in lines if (m := _MORE.match(line)))
    mode = args.get("output_mode", "files_with_matches")
    if mode == "count":
        total = sum(int(line.rsplit(":", 1)[1]) for line in found if line.rsplit(":", 1)[-1].isdigit())
        return Preview(f"{_plural(total, 'match')} in {_plural(len(found) + more, 'file')}", _head(found, 3))
    what = "line" if mode == "content" else "file"
    return Preview(_plural(len(found) + more, what), _head(found, 3))


def _edit(args: dict[str, Any], output: str) -> Preview:
    old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
    removed, added = old.split("\n"), new.split("\n")
    shown = [f"-{line}" for line in removed[:2]] + [f"+{line}" for line in added[:2]]
    if len(removed) > 2 or len(added) > 2:
        shown.append(f"… -{len(removed)} +{len(added)} lines in all")
    return Preview(output.split("\n")[0].rstrip("."), shown, diff=True)


def _generic(args: dict[str, Any], output: str) -> Preview:
    lines = output.split("\n")
    if len(lines) == 1:
        return Preview(lines[0].rstrip(".") or "no output")
    return Preview(_plural(len(lines), "line"), _head(lines, 3))


TODO_LINES = 20  # a checklist is read whole; past this many items the rest are counted
_TODO_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


def _todos(args: dict[str, Any], output: str) -> Preview:
    """The checklist itself, each item with its mark; the one in progress by its activeForm
    (`Running the tests`), as Claude Code shows it."""
    items = [item for item in args.get("todos") or [] if isinstance(item, dict)]
    lines = []
    for item in items:
        status = str(item.get("status", ""))
        text = item.get("activeForm") if status == "in_progress" else item.get("content")
        lines.append(f"{_TODO_MARKS.get(status, '[ ]')} {text}")
    done = sum(1 for item in items if item.get("status") == "completed")
    summary = f"todos: {done}/{len(items)} done" if items else "todos: the list is empty"
    return Preview(summary, _head(lines, TODO_LINES))


PLAN_LINES = 40  # an approved plan is shown whole, up to this many lines


def _plan(args: dict[str, Any], output: str) -> Preview:
    """ExitPlanMode approved: the plan the user said yes to, as the record of what comes next."""
    lines = str(args.get("plan", "")).strip().split("\n")
    return Preview(output.split("\n")[-1].strip("[]").removeprefix("arnes: "), _head(lines, PLAN_LINES))


_BY_TOOL = {
    "TodoWrite": _todos,
    "ExitPlanMode": _plan,
    "Bash": _bash,
    "BashOutput": _generic,
    "Read": _read,
    "Glob": _files,
    "Grep": _files,
    "Edit": _edit,
}
