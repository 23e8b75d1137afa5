"""Model profiles as data (DESIGN §15): how arnes adapts to a model, by its name.

A profile names the steering set (which pieces of arnes/adapt/ run; `off`: none) and the edit
format. Frontier models get `off` and native tool calls: they know Claude Code's tools and
every intervention would only get in their way. Small local coders get the `small` set and
aider's `whole` format, which aider measured ahead of diffs and JSON edits for models of 14B
and below. Sampling and output caps per model stay in llm/models.py, the same kind of table.
The settings `model.steering` / `model.edit_format` and the flags `--steering` /
`--edit-format` override a profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

EditFormat = Literal["tools", "whole", "search-replace"]
EDIT_FORMATS: tuple[EditFormat, ...] = ("tools", "whole", "search-replace")

# The pieces of a steering set, in the order they decide (arnes/adapt/build.py makes them).
STEERING: dict[str, tuple[str, ...]] = {
    "off": (),
    "small": (
        "named-files",
        "small-read",
        "content-check",
        "undo-guard",
        "rename-leftovers",
        "nudge",
        "same-reply",
        "self-check",
    ),
    # Only the project's tests before an answer stands: a careful developer's habit, for any model.
    "tests": ("self-check",),
}


@dataclass(frozen=True)
class Profile:
    name: str
    steering: str
    edit_format: EditFormat
    hidden_tools: tuple[str, ...] = ()  # not offered: tools a small model reached for instead of working


OFF = Profile("frontier", "off", "tools")
SMALL = Profile("small-local", "small", "whole", ("Skill", "ReadDoc", "Delegate"))

# First matching pattern wins; `org/name` is matched by its name, in lower case.
PROFILES: tuple[tuple[str, Profile], ...] = (
    ("claude-*", OFF),
    ("gpt-*", OFF),
    ("o[1-9]*", OFF),
    ("gemini-*", OFF),
    ("*qwen*", SMALL),
    ("*llama*", SMALL),
    ("*deepseek-coder*", SMALL),
    ("*phi*", SMALL),
    ("*gemma*", SMALL),
    ("*mistral*", SMALL),
    ("*granite*", SMALL),
    ("*starcoder*", SMALL),
    ("*", OFF),
)


def profile_for(model: str, steering: str | None = None, edit_format: EditFormat | None = None) -> Profile:
    """The profile of a model name, with the user's overrides applied."""
    name = model.lower().rsplit("/", 1)[-1]
    found = next((p for pattern, p in PROFILES if fnmatchcase(name, pattern)), OFF)
    if steering is None and edit_format is None:
        return found
    if steering == "off":  # off means nothing is taken from a reply either, unless a format is asked for
        return Profile(found.name + " (overridden)", "off", edit_format or "tools")
    return Profile(
        found.name + " (overridden)", steering or found.steering, edit_format or found.edit_format, found.hidden_tools
    )
