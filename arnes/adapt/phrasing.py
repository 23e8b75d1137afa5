"""arnes's messages to the model say how to change a file in the session's edit format.

The nudges were written for native tool calls ("send an Edit that fixes it"); a model working in
the `whole` format is not offered Edit, and told to call it, it tries a call it does not have.
"""

from __future__ import annotations

HOW = {
    "whole": "reply with the whole corrected file: its path alone on a line, then all of it in a fenced code block",
    "search-replace": "reply with SEARCH/REPLACE blocks under the file's path",
}


def for_format(text: str, edit_format: str) -> str:
    """`text` with its tool-call instructions put in the edit format's terms (tools: unchanged)."""
    how = HOW.get(edit_format)
    if how is None:
        return text
    for said, meant in (
        ("then send an Edit that fixes it", f"then {how}"),
        ("fix the code (not the tests) with Edit", f"fix the code (not the tests): {how}"),
        ("make it now with Edit", f"make it now: {how}"),
        ("Call Edit to change part of an existing file (or Write for a new file)", how[0].upper() + how[1:]),
        (
            "If a Write or Edit was refused, read why in its result and send a corrected call now.",
            how[0].upper() + how[1:] + ".",
        ),
    ):
        text = text.replace(said, meant)
    return text
