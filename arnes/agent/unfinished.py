"""Replies without a tool call that are not an answer: judged so the run does not end as "done".

A small local model ends its turn in ways a scripted one never does (measured with
Qwen2.5-Coder-1.5B on llama.cpp): an empty reply, a reply that only repeats the last tool error
("To create a file, use Write."), a tool result it made up itself (`<tool_response>` blocks, a
fenced "output" of a Read), or the changed code printed in the chat instead of written. Each
would end the run with exit 0 and nothing done; each gets one pointed nudge instead.
"""

from __future__ import annotations

import re

EMPTY = (
    "[arnes] Your reply was empty. If the task is done, say in one sentence what you changed; "
    "otherwise call the next tool now."
)
ECHO = (
    "[arnes] Your reply only repeated the last tool error; that does not finish the task. Do what the "
    "error says (for example Glob or Grep to find the right file, or Read it), then go on with the task."
)
FAKE = (
    "[arnes] Your reply contains a tool result you wrote yourself; only arnes runs tools, and nothing "
    "ran. Call the tool (one JSON tool call) and wait for its real result."
)
CODE = (
    "[arnes] You answered with code in the chat, but no file was changed: the user's files are as "
    "they were. Call Edit to change part of an existing file (or Write for a new file). If nothing "
    "needs to change, say so in one sentence."
)

_FAKE_RESULT = re.compile(r"</?(?:tool_response|tool_result|function_results?|observation)>", re.IGNORECASE)
_FENCED = re.compile(r"```[\w+-]*[ \t]*\n\s*\S")
_ECHO_MIN = 8  # characters: "ok" or "Done." repeat nothing


def unfinished(text: str, last_error: str | None, wrote: bool, can_write: bool) -> str | None:
    """The nudge for a tool-less reply that is not an answer, or None when it may end the run."""
    stripped = text.strip()
    if not stripped:
        return EMPTY
    if _FAKE_RESULT.search(stripped):
        return FAKE
    if last_error and _echoes(stripped, last_error):
        return ECHO
    if can_write and not wrote and _FENCED.search(stripped):
        return CODE
    return None


def _echoes(text: str, error: str) -> bool:
    """Whether the reply is (a piece of) the error's text and nothing of its own."""
    said = " ".join(text.lower().split()).strip(" .!`\"'")
    return len(said) >= _ECHO_MIN and said in " ".join(error.lower().split())
