"""Help around the file tools that never changes what a tool does: a refusal once, or a note.

Each acts before or after a call of the model's. A refusal is made once for the same call; the
same call sent again runs as the model sent it, so a model that means it is never stopped.
"""

from __future__ import annotations

import json
from typing import ClassVar

from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.reading import readable_text
from arnes.agent.steering import CallDecision, Moment, Nudge, Refuse, ResultDecision, Rewrite
from arnes.messages import ToolCall, ToolResultBlock
from arnes.tools.contentcheck import CODE_NOT_WORDS, EXAMPLES, code_problem, data_problem, not_json_at_all, yaml_as_json
from arnes.tools.defnames import dropped_names
from arnes.tools.editmatch import replace
from arnes.tools.renames import still_named

SMALL_FILE_LINES = 200
TINY_LIMIT = 20


class _Once(Piece):
    """A refusal made once per distinct call."""

    def __init__(self, env: Env):
        self.env = env
        self.refused: set[str] = set()

    def _once(self, call: ToolCall, text: str) -> CallDecision:
        key = json.dumps([call.name, call.input], sort_keys=True, default=str)
        if key in self.refused:
            return ACCEPT
        self.refused.add(key)
        return Refuse(self.name, text)


class ContentCheck(_Once):
    """A Write or Edit that would leave a file that no longer parses (Python, JSON, TOML), YAML
    sent for a .json file, or a Write that drops most of a file's definitions: refused once, why said."""

    name: ClassVar[str] = "content-check"
    moments: ClassVar[frozenset[Moment]] = frozenset({"call"})

    def before_call(self, call: ToolCall) -> CallDecision:
        if call.name not in ("Write", "Edit"):
            return ACCEPT
        found = readable_text(self.env.ctx, call.input.get("file_path"))
        shown, before = found if found is not None else (str(call.input.get("file_path")), "")
        suffix = "." + shown.rsplit(".", 1)[-1] if "." in shown else ""
        if call.name == "Write":
            after = call.input.get("content")
            if not isinstance(after, str):
                return ACCEPT
            broken = data_problem(after, suffix)
            as_json = yaml_as_json(after) if broken and not_json_at_all(after, suffix) else None
            if broken:  # code shown in the chat next is meant for this file (adapt/unfinished.py)
                self.env.ctx.files.hold_write(self.env.ctx.path(shown))
            if as_json is not None:
                why = f"{shown} would not be valid {broken}; the content is YAML. As JSON it reads:\n{as_json}"
                return self._once(call, f"This Write was not made: {why}Write that as the content.")
            if broken:
                tip = EXAMPLES.get(suffix.lower(), "")
                return self._once(
                    call,
                    f"This Write was not made: {shown} would not be valid {broken}. Write it "
                    f"again in that format{tip}. If it really should hold this text, send it again.",
                )
            gone = dropped_names(before, after, suffix) if found is not None else []
            if len(gone) > 1:
                names = ", ".join(gone[:8])
                return self._once(
                    call,
                    f"This Write was not made: it replaces all of {shown} and drops {names}. "
                    "Write replaces the whole file: give every line the file keeps, or use Edit to "
                    "change a part. If dropping them is what the task needs, send this Write again.",
                )
        else:
            old, new = call.input.get("old_string"), call.input.get("new_string")
            if found is None or not isinstance(old, str) or not isinstance(new, str) or not old:
                return ACCEPT
            try:
                after = replace(before, old, new, bool(call.input.get("replace_all")), shown).updated
            except Exception:
                return ACCEPT
        code = code_problem(before, after, suffix)
        if code:
            return self._once(
                call, f"This {call.name} was not made: {shown} would not be valid {code}. {CODE_NOT_WORDS}"
            )
        return ACCEPT


class UndoGuard(_Once):
    """An Edit that puts back what the last Edit of the file took out: refused once."""

    name: ClassVar[str] = "undo-guard"
    moments: ClassVar[frozenset[Moment]] = frozenset({"call"})

    def before_call(self, call: ToolCall) -> CallDecision:
        name = call.input.get("file_path")
        if call.name != "Edit" or not isinstance(name, str):
            return ACCEPT
        last = self.env.ctx.files.last_edit(self.env.ctx.path(name))
        if last is None or last != (call.input.get("new_string"), call.input.get("old_string")):
            return ACCEPT
        return self._once(
            call,
            f"This Edit was not made: it would undo your last change to {name} "
            f"({last[0]!r} -> {last[1]!r}). If that change was right, keep it and go on.",
        )


class WholeSmallFile(Piece):
    """A Read of a few lines of a short file reads all of it: a small model asks for one line, then
    guesses the rest."""

    name: ClassVar[str] = "small-read"
    moments: ClassVar[frozenset[Moment]] = frozenset({"call"})

    def __init__(self, env: Env):
        self.env = env

    def before_call(self, call: ToolCall) -> CallDecision:
        limit = call.input.get("limit")
        if call.name != "Read" or not isinstance(limit, int) or limit >= TINY_LIMIT:
            return ACCEPT
        found = readable_text(self.env.ctx, call.input.get("file_path"))
        if found is None or found[1].count("\n") >= SMALL_FILE_LINES:
            return ACCEPT
        whole = {k: v for k, v in call.input.items() if k not in ("offset", "limit")}
        return Rewrite(self.name, ToolCall(call.id, "Read", whole), f"{found[0]} is short: read whole")


class RenameLeftovers(Piece):
    """After an Edit that renames one name, where the old name still stands in other files."""

    name: ClassVar[str] = "rename-leftovers"
    moments: ClassVar[frozenset[Moment]] = frozenset({"result"})

    def __init__(self, env: Env):
        self.env = env

    def after_result(self, call: ToolCall, result: ToolResultBlock) -> ResultDecision:
        old, new = call.input.get("old_string"), call.input.get("new_string")
        if call.name != "Edit" or result.is_error or not isinstance(old, str) or not isinstance(new, str):
            return ACCEPT
        rest = still_named(self.env.ctx, old, new).strip()
        return Nudge(self.name, rest) if rest else ACCEPT


class NamedFiles(Piece):
    """The files a task names, shown with it as Read shows them (they count as read).

    `spare_kept` (the `spare-kept` piece): in an edit format, files the task says to leave alone
    are named, not shown (agent/named.py `named_files`)."""

    name: ClassVar[str] = "named-files"
    moments: ClassVar[frozenset[Moment]] = frozenset({"task"})

    def __init__(self, env: Env, spare_kept: bool = False):
        self.env = env
        self.spare_kept = spare_kept

    def task_note(self, task: str) -> str:
        return self.env.task_files(task, self.spare_kept) if self.env.task_files else ""
