"""Files taken from a reply in the profile's edit format, applied through the gate as Writes or Edits.

For a model whose native tool calls are unreliable this is a declared protocol (the system prompt
states it), not the recovery of a mistake: the model is told to answer this way, and does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from arnes.adapt.formats import search_replace, whole
from arnes.adapt.formats.search_replace import changes
from arnes.adapt.formats.whole import blocks, merge_python
from arnes.adapt.piece import ACCEPT, Env, Piece
from arnes.adapt.reading import readable_text
from arnes.agent.steering import Act, CallDecision, Moment, Nudge, Reply, ReplyDecision, Rewrite
from arnes.messages import ToolCall, ToolResultBlock

_TOP_NAME = re.compile(r"^(?:def|class)\s+(\w+)", re.MULTILINE)

WHOLE_PROMPT = f"""\
# How to change files
To create or change a file, reply with the file's path alone on a line, then the WHOLE new content \
of the file in a fenced code block. arnes writes every such file for you. For example:

{whole.EXAMPLE}

Always give the complete file: every line of it, never `...` or "rest unchanged". Give only files \
that change. Never change test files."""

SEARCH_REPLACE_PROMPT = f"""\
# How to change files
To change a file, reply with its path alone on a line, then a fenced block holding one or more \
SEARCH/REPLACE blocks. The SEARCH part must be copied exactly from the file; arnes makes each change. \
For example:

{search_replace.EXAMPLE}

An empty SEARCH part creates a new file holding the REPLACE part. Never change test files."""

APPLIED_BAD = (
    "[arnes] Not every file of your reply could be applied:\n{results}\n"
    "Send the files that were not applied again, in the same format."
)
NO_PATH = (
    "[arnes] Your reply holds code, but no block names its file, so nothing was changed. Put the file's "
    "path alone on the line before the opening ``` and send the whole file again."
)


def _focus(env: Env, reply_text: str, code: str) -> str | None:
    """The one file a nameless block belongs to: the only non-test file the session has seen whose
    definitions the block repeats (a usage example in the chat repeats none)."""
    candidates = [p for p in env.ctx.files.seen() if p.suffix == ".py" and not p.name.startswith("test")]
    candidates = [p for p in candidates if not p.stem.endswith("_test")]
    hits = []
    for path in candidates:
        found = readable_text(env.ctx, str(path))
        if found is None:
            continue
        text = found[1]
        names = set(_TOP_NAME.findall(text))
        if names and any(f"def {n}" in code or f"class {n}" in code for n in names):
            hits.append(path)
    return env.ctx.display(hits[0]) if len(hits) == 1 else None


MOST_NOT_APPLIED = 3  # replies in a row with files that could not be applied, before the reply stands


class _Format(Piece):
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply"})

    def __init__(self, env: Env):
        self.env = env
        self.failed = 0
        self.refused: list[str] = []  # the last reply's blocks under names outside the workspace

    def new_turn(self, task: str) -> None:
        self.failed = 0

    def on_acted(self, act: Act, results: list[ToolResultBlock | None], reply: Reply) -> ReplyDecision:
        decision = _report(self.name, act, results, self.refused)
        self.failed = self.failed + 1 if isinstance(decision, Nudge) else 0
        return ACCEPT if self.failed > MOST_NOT_APPLIED else decision


class WholeFiles(_Format):
    """`whole`: each fenced block under a path is that file's new content, written with Write.

    A model trained on tool calls sometimes still sends one: a Write is that same protocol and
    runs as it is; an Edit that carries a whole `content` and no `old_string` means that Write.
    """

    name: ClassVar[str] = "whole"
    moments: ClassVar[frozenset[Moment]] = frozenset({"reply", "call"})

    def before_call(self, call: ToolCall) -> CallDecision:
        given = call.input
        if call.name != "Edit" or not isinstance(given.get("content"), str) or given.get("old_string"):
            return ACCEPT
        write = {"file_path": given.get("file_path"), "content": given["content"]}
        return Rewrite(self.name, ToolCall(call.id, "Write", write), "an Edit carrying a whole file is its Write")

    def on_reply(self, reply: Reply) -> ReplyDecision:
        if not reply.can_write or reply.applied:
            return ACCEPT
        found = blocks(reply.text)
        self.refused = [b.refused for b in found if b.refused is not None]
        if not found:
            return ACCEPT
        calls: dict[str, ToolCall] = {}
        same = False
        parts: list[str] = []  # files the reply gave only part of
        for block in found:
            path = block.path or _focus(self.env, reply.text, block.content)
            if path is None or not block.content.strip():
                continue
            content = block.content
            current = _current(self.env, path)
            merged = merge_python(current, content) if current is not None and path.endswith(".py") else None
            if merged is not None:  # only some of the file's definitions: those put in place, the rest kept
                content = merged
                parts.append(path)
            if current is not None and _normal(current) == _normal(content):  # no change to make
                same = True
                continue
            calls[path] = ToolCall(path, "Write", {"file_path": path, "content": content})
        if not calls and self.refused:
            return Nudge(self.name, APPLIED_BAD.format(results=_refused_lines(self.refused)))
        if not calls:
            named = same or any(b.path for b in found)
            return ACCEPT if named or not _looks_like_code(found[0].content) else Nudge(self.name, NO_PATH)
        files = ", ".join(calls)
        return Act(
            self.name,
            tuple(calls.values()),
            sent=_head(reply.text),
            say=f"writing the files of the reply: {files}"
            + (f" ({', '.join(parts)}: only some definitions given; put in place of the file's own)" if parts else ""),
        )


class SearchReplace(_Format):
    """`search-replace`: each SEARCH/REPLACE block is an Edit of the file named above it."""

    name: ClassVar[str] = "search-replace"

    def on_reply(self, reply: Reply) -> ReplyDecision:
        if not reply.can_write or reply.applied:
            return ACCEPT
        calls = [
            ToolCall(str(i), "Edit", {"file_path": c.path, "old_string": c.search, "new_string": c.replace})
            for i, c in enumerate(changes(reply.text))
            if c.path is not None
        ]
        if not calls:
            return ACCEPT
        files = ", ".join(dict.fromkeys(str(c.input["file_path"]) for c in calls))
        return Act(self.name, tuple(calls), sent=_head(reply.text), say=f"making the changes of the reply: {files}")


def _refused_lines(names: Sequence[str]) -> str:
    why = (
        "NOT applied: a reply writes only files inside the workspace, named by their path from its top "
        "with a file suffix (src/app.py); not dotfiles, nor names outside it"
    )
    return "\n".join(f"- {name}: {why}" for name in names)


def _report(piece: str, act: Act, results: list[ToolResultBlock | None], refused: Sequence[str] = ()) -> ReplyDecision:
    """All applied: the reply stands (the pieces after this one, the tests among them, go on).
    Any not applied, or a block under a name outside the workspace: the model hears which, and why."""
    bad = [r for r in results if r is None or r.is_error]
    if not bad and not refused:
        return ACCEPT
    lines = []
    for call, result in zip(act.calls, results, strict=True):
        path = call.input.get("file_path")
        said = "applied" if result is not None and not result.is_error else "NOT applied"
        why = f": {result.content}" if result is not None and result.is_error else ""
        lines.append(f"- {path}: {said}{why}")
    if refused:
        lines.append(_refused_lines(refused))
    return Nudge(piece, APPLIED_BAD.format(results="\n".join(lines)))


def _current(env: Env, name: str) -> str | None:
    """A file's text as it is now, read through no link; None when it is no readable text file.
    A block equal to it changes nothing, and a reply of only such blocks is judged as one that
    changed nothing."""
    found = readable_text(env.ctx, name)  # never what a Read rule hides, nor outside the workspace
    return found[1] if found is not None else None


def _normal(text: str) -> str:
    return text.replace("\r\n", "\n").rstrip("\n")


def _looks_like_code(text: str) -> bool:
    return text.count("\n") >= 2 and any(w in text for w in ("def ", "class ", "function ", "return", "import "))


def _head(text: str, most: int = 300) -> str:
    return text if len(text) <= most else text[:most] + " ..."
