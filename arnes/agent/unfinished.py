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

CLAIM = (
    "[arnes] No file has been changed in this session, so what your reply says was done did not happen. "
    "If a Write or Edit was refused, read why in its result and send a corrected call now."
)

_FAKE_RESULT = re.compile(r"</?(?:tool_response|tool_result|function_results?|observation)>", re.IGNORECASE)
_FENCED = re.compile(r"```[\w+-]*[ \t]*\n\s*\S")
_ECHO_MIN = 8  # characters: "ok" or "Done." repeat nothing
_ECHO_WORDS = 0.6  # a short reply whose words come this much from the error repeats it
_ECHO_MAX = 300  # characters: a longer reply says something of its own
_WORD = re.compile(r"[a-z0-9_.]+")
# "I changed README.md", "I've updated the file", "has been added": a report that a change was made.
_CLAIM = re.compile(
    r"\b(?:i|i've|i have|we|we've)\s+(?:\w+\s+)?(?:changed|updated|added|modified|created|written|wrote|fixed|"
    r"renamed|replaced|edited|implemented|applied|made the change)\b"
    r"|\b(?:has|have) been (?:changed|updated|added|modified|created|written|fixed|renamed|replaced|edited)\b",
    re.IGNORECASE,
)


def unfinished(text: str, last_error: str | None, wrote: bool, can_write: bool, changed_any: bool = True) -> str | None:
    """The nudge for a tool-less reply that is not an answer, or None when it may end the run.

    `changed_any`: whether any file changed in the session; a reply that reports a change when
    none was made (docs-section: "I changed README.md" after its Write was refused) is not an answer.
    """
    stripped = text.strip()
    if not stripped:
        return EMPTY
    if _FAKE_RESULT.search(stripped):
        return FAKE
    if last_error and _echoes(stripped, last_error):
        return ECHO
    if can_write and not wrote and _FENCED.search(stripped):
        return CODE
    if can_write and not changed_any and _CLAIM.search(stripped):
        return CLAIM
    return None


def _echoes(text: str, error: str) -> bool:
    """Whether the reply is (mostly) the error's own words: a piece of it, or a short reply whose
    words nearly all come from it ("To make the change, call Edit again, based on this content.")."""
    said = " ".join(text.lower().split()).strip(" .!`\"'")
    if len(said) < _ECHO_MIN:
        return False
    heard = " ".join(error.lower().split())
    if said in heard:
        return True
    words = _WORD.findall(said)
    if len(said) > _ECHO_MAX or len(words) < 4:
        return False
    known = set(_WORD.findall(heard))
    return sum(w in known for w in words) >= _ECHO_WORDS * len(words)
