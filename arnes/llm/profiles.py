"""Model profiles as data (DESIGN §15): how arnes adapts to a model, by its name.

A profile names the steering set (which pieces of arnes/adapt/ run; `off`: none) and the edit
format. Frontier models get `off` and native tool calls: they know Claude Code's tools and
every intervention would only get in their way. Small local coders get the `small` set and
`auto`: aider's `whole` format (aider measured it ahead of diffs and JSON edits for models of
14B and below) when the task names its files, native tool calls when the model must find them.
Sampling and output caps per model stay in llm/models.py, the same kind of table.
The settings `model.steering` / `model.edit_format` and the flags `--steering` /
`--edit-format` override a profile; a steering value may leave pieces out of its set or add
others (`small,-nudge`, `small,+fresh-draws`), which is how each piece is measured against its set.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Literal

EditFormat = Literal["tools", "whole", "search-replace"]
EDIT_FORMATS: tuple[EditFormat, ...] = ("tools", "whole", "search-replace")
# `auto`: chosen per session by its task (`Profile.for_task`): `whole` when the task names files,
# native tool calls when the model must find them first. aider's `whole` works on the files the
# user put in the chat; with none named, a small model needs Read, Glob and Grep as calls.
FormatChoice = Literal["tools", "whole", "search-replace", "auto"]
FORMAT_CHOICES: tuple[FormatChoice, ...] = (*EDIT_FORMATS, "auto")

# Every piece, in the order they decide (arnes/adapt/build.py makes them); a set lists some of them.
PIECES: tuple[str, ...] = (
    "fresh-draws",
    "focus",
    "named-files",
    "spare-kept",  # not a piece of its own: named-files leaves out the files the task says to keep
    "small-read",
    "content-check",
    "undo-guard",
    "rename-leftovers",
    "nudge",
    "same-reply",
    "self-check",
)
# fresh-draws is in no set: measured on Exercism it passed fewer tasks than the set without it
# (bench/README.md, "Fresh draws"); `--steering small,+fresh-draws` turns it on. focus
# (adapt/focus.py) waits for its measurement the same way: `--steering small,+focus`. spare-kept
# is in the set: on 21 held-out Exercism exercises it passed as many (4/21 each) in half the time
# and half the output tokens, the tests never sent back (bench/README.md, "Files to leave alone").
STEERING: dict[str, tuple[str, ...]] = {
    "off": (),
    "small": tuple(p for p in PIECES if p not in ("fresh-draws", "focus")),
    # Only the project's tests before an answer stands: a careful developer's habit, for any model.
    "tests": ("self-check",),
}


@dataclass(frozen=True)
class Profile:
    name: str
    steering: str
    edit_format: FormatChoice
    hidden_tools: tuple[str, ...] = ()  # not offered: tools a small model reached for instead of working
    # Not offered either when files change through the reply (an edit format): the files the task
    # names are shown, the reply changes them and the self-check runs the tests, as aider's
    # protocol offers no tools at all. Measured on Exercism (bench/README.md, "Fewer tools in `whole`").
    reply_hidden: tuple[str, ...] = ()
    # Fresh draws after the repair try (adapt/draws.py): how many per user message, and how each
    # is sampled. Qwen2.5-Coder's own generation settings are temperature 0.7 and top_p 0.8.
    draws: int = 0
    draw_temperature: float = 0.7
    draw_top_p: float | None = 0.8

    @property
    def not_offered(self) -> tuple[str, ...]:
        """The tools this profile's sessions do not have, with its edit format."""
        return self.hidden_tools + (self.reply_hidden if self.edit_format != "tools" else ())

    def for_task(self, names_files: bool) -> Profile:
        """This profile with `auto` made a format: `whole` for a task that names files, else tools."""
        if self.edit_format != "auto":
            return self
        return replace(self, edit_format="whole" if names_files else "tools")

    @property
    def draws_per_turn(self) -> int:
        """The fresh draws a session makes: none unless its pieces draw and the tests judge them."""
        names = pieces_of(self.steering)
        return self.draws if "fresh-draws" in names and "self-check" in names else 0


OFF = Profile("frontier", "off", "tools")
SMALL = Profile(
    "small-local",
    "small",
    "auto",  # measured beside `whole` on the built-in nine and twelve held-out tasks: bench/README.md
    # TodoWrite: Claude Code's checklist, for the models trained to keep it; to these it would be
    # one more tool to choose from, and in `whole` only Bash is offered (bench/README.md). NotebookEdit
    # likewise: Claude Code's tool for one cell, where these models change a notebook with Edit or Write.
    ("Skill", "ReadDoc", "Delegate", "TodoWrite", "NotebookEdit"),
    reply_hidden=("Read", "Glob", "Grep", "BashOutput", "KillShell"),
    draws=6,
)

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


def profile_for(model: str, steering: str | None = None, edit_format: FormatChoice | None = None) -> Profile:
    """The profile of a model name, with the user's overrides applied."""
    name = model.lower().rsplit("/", 1)[-1]
    found = next((p for pattern, p in PROFILES if fnmatchcase(name, pattern)), OFF)
    if steering is None and edit_format is None:
        return found
    if steering == "off":  # off means nothing is taken from a reply either, unless a format is asked for
        return Profile(found.name + " (overridden)", "off", edit_format or "tools")
    return replace(
        found,
        name=found.name + " (overridden)",
        steering=steering or found.steering,
        edit_format=edit_format or found.edit_format,
        draws=found.draws or SMALL.draws,  # a set with fresh-draws draws, whatever the model's profile
    )


def pieces_of(steering: str) -> tuple[str, ...]:
    """The pieces a steering value names: a set (`small`), less some of its pieces or with others
    added (`small,-nudge`, `small,+fresh-draws`), in PIECES order. ValueError, saying what is
    known, for anything else."""
    name, *rest = [part.strip() for part in steering.split(",")]
    if name not in STEERING:
        raise ValueError(f"unknown steering set {name!r} (known: {', '.join(STEERING)})")
    pieces = set(STEERING[name])
    for part in rest:
        sign, piece = part[:1], part[1:]
        if (sign == "-" and piece in pieces) or (sign == "+" and piece in PIECES and piece not in pieces):
            pieces = pieces - {piece} if sign == "-" else pieces | {piece}
            continue
        raise ValueError(
            f"{part!r} in steering {steering!r}: after the set, name a piece of it to leave out as -PIECE "
            f"(the pieces of {name}: {', '.join(STEERING[name]) or 'none'}) or another to add as +PIECE "
            f"(every piece: {', '.join(PIECES)})"
        )
    return tuple(p for p in PIECES if p in pieces)
