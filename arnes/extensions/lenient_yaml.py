"""Front matter that strict YAML refuses, read line by line, as Claude Code's loader tolerates it.

Collections written for Claude Code carry front matter a YAML parser rejects and Claude Code
loads anyway: an unquoted colon in a value (`description: Use when: the tests fail`), a
description that goes on over unindented lines (`<example>`, `user: "..."`, ...), tabs. When
PyYAML refuses the block, it is read as `key: value` lines instead:

- a line `KEY: VALUE` begins a key when KEY is one a Claude Code or arnes file uses (KNOWN,
  indented by a tab or not), or when it is the block's first line; any other line goes on with
  the value before it, so `Context: ...` inside a description stays in the description;
- `- item` lines under a key with no value make a list; `[a, b]` is a list;
- a value in quotes loses them (`"..."` with YAML's escapes, `'...'` with `''` for a quote).

Every value is a string (or a list of strings): the callers read text and names. A block whose
first line is not `key: value` is no front matter at all: None, and the caller says why.
"""

from __future__ import annotations

import re
from typing import Any

KNOWN = frozenset({
    "name", "description", "tools", "disallowedTools", "model", "color", "permissionMode", "allowed-tools",
    "argument-hint", "disable-model-invocation", "user-invocable", "when_to_use", "version", "license",
    "metadata", "skills", "hooks", "mcpServers", "maxTurns", "context", "agent", "effort",
})  # fmt: skip
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$")


def lines_to_mapping(head: str) -> dict[str, Any] | None:
    """The block as a mapping of strings and lists of strings; None when its first line is no key."""
    meta: dict[str, Any] = {}
    key: str | None = None
    for raw in head.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _KEY.match(line.lstrip())
        if found and (found.group(1) in KNOWN or (key is None and line == line.lstrip())):
            key = found.group(1)
            meta[key] = _scalar(found.group(2) or "")
            continue
        if key is None:
            return None
        item = line.strip()
        current = meta[key]
        if item.startswith("- ") and (current == "" or isinstance(current, list)):
            meta[key] = [*(current or []), _scalar(item[2:])]
        elif isinstance(current, str):
            meta[key] = f"{current}\n{item}" if current else item
    return meta if meta else None


def _scalar(text: str) -> Any:
    """One value as written: quotes taken off, `[a, b]` as a list."""
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return _double_quoted(value)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if value.startswith("[") and value.endswith("]") and not set("[]") & set(value[1:-1]):
        return [str(_scalar(part)) for part in value[1:-1].split(",") if part.strip()]
    return value


def _double_quoted(value: str) -> str:
    import yaml

    from arnes import yamlfile

    try:
        loaded = yamlfile.load(value)  # `"k": [[[…]]] #"` opens and ends with a quote too: bounded
    except (yaml.YAMLError, ValueError):
        return value[1:-1]
    return loaded if isinstance(loaded, str) else value[1:-1]
