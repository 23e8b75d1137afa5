"""Claude Code's MultiEdit, as an Edit with several changes: `{file_path, edits: [{old_string,
new_string, replace_all?}]}`. Models trained on Claude Code still call it. It is not offered (the
fixed prompt stays in its budget, tests/test_budget.py); the loop takes the call as Edit's
(`as_edit`), so the gate, the hooks and the rules see an Edit of that file, read-before-edit and
rewind hold as for any Edit, and the edits apply all or none: each to the result of the one before.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from arnes.tools.base import ToolArgs, ToolError
from arnes.tools.editmatch import replace

CLAUDE_NAME = "MultiEdit"
MOST_EDITS = 100


class EditItem(ToolArgs):
    old_string: str
    new_string: str
    replace_all: bool = False


class EditList(ToolArgs):
    edits: list[EditItem] = Field(min_length=1, max_length=MOST_EDITS)


def as_edit(name: str, raw: dict[str, Any]) -> dict[str, Any] | None:
    """A MultiEdit call's input as Edit's (the same keys: Edit reads `edits`); None for another name."""
    return dict(raw) if name == CLAUDE_NAME else None


def apply_edits(text: str, edits: list[EditItem], shown: str) -> tuple[str, int, list[str]]:
    """The text with every edit made in order (LF line endings), how many occurrences were
    replaced, and how any was found when not exactly. A ToolError names the edit that failed;
    nothing is written then."""
    count, notes = 0, []
    for i, edit in enumerate(edits, 1):
        which = f"edit {i} of {len(edits)}"
        old, new = edit.old_string.replace("\r\n", "\n"), edit.new_string.replace("\r\n", "\n")
        if not old or old == new:
            why = "its old_string is empty" if not old else "its old_string and new_string are the same"
            raise ToolError(f"{which}: {why}; no edit was made to {shown}. Fix that edit and call again.")
        try:
            done = replace(text, old, new, edit.replace_all, shown)
        except ToolError as exc:
            before = " (after the edits before it)" if i > 1 else ""
            raise ToolError(f"{which}{before}: {exc} No edit was made to {shown}.") from None
        text, count = done.updated, count + done.count
        notes += [f"{which}: {done.note}"] if done.note else []
    return text, count, notes
