"""Recover tool calls that a local model printed as JSON text instead of structured calls.

qwen2.5-coder on Ollama, among others, often answers `{"name": "Read", "arguments": {...}}` in the
message content. Absorbing that quirk is the harness's job, not the user's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
_LINE_START = re.compile(r"(?<=\n)(?=[{\[`<])")
_WRAPPERS = re.compile(r"^<tool_call>\s*(.*?)\s*</tool_call>$", re.DOTALL)


def split_tool_calls(text: str, known_tools: Collection[str]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """(prose, calls) when the text ends in JSON tool calls, possibly after some prose; else (text, [])."""
    calls = recover_tool_calls(text, known_tools)
    if calls:
        return "", calls
    for match in _LINE_START.finditer(text):
        calls = recover_tool_calls(text[match.start() :], known_tools)
        if calls:
            return text[: match.start()].strip(), calls
    return text, []


def recover_tool_calls(text: str, known_tools: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    """Return (name, input) pairs if the whole text is one or more JSON tool calls, else []."""
    body = text.strip()
    for pattern in (_FENCE, _WRAPPERS):
        match = pattern.match(body)
        if match:
            body = match.group(1).strip()
    if not body.startswith(("{", "[")):
        return []
    objects = _parse_objects(body)
    calls: list[tuple[str, dict[str, Any]]] = []
    for obj in objects:
        call = _as_call(obj, known_tools)
        if call is None:
            return []
        calls.append(call)
    return calls


def _parse_objects(body: str) -> list[Any]:
    """One JSON value, a JSON list, or several values one after another."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos = 0
    while pos < len(body):
        try:
            value, end = decoder.raw_decode(body, pos)
        except json.JSONDecodeError:
            return []
        values.extend(value if isinstance(value, list) else [value])
        pos = end
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
    return values


def _as_call(obj: Any, known_tools: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters", obj.get("input", {})))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or name not in known_tools or not isinstance(args, dict):
        return None
    return name, args
