"""Data parsed from text someone else wrote is nested at most MAX_DEPTH levels deep.

Python's json and tomllib (and PyYAML's composer) follow nesting by recursion: a 6 KB `[[[[…]]]]`
ends in a RecursionError, a traceback instead of a message, and a document just under the
interpreter's limit would end the same way in whatever walks it next (a merge, a validator).
No settings file, manifest or front matter needs more than a handful of levels, so deeper is
refused here, as a ValueError: a reader that already turns bad input into one line naming the file
(catching ValueError, JSONDecodeError's base) does so for this too. A number too long for Python
to read (more than 4300 digits) is refused the same way. YAML is bounded before PyYAML recurses
(yamlfile.py).
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # lists and mappings inside each other; real files use fewer than ten


class Unreadable(ValueError):
    """Parsed text that arnes does not take: nested too deep, a number too long, a YAML anchor."""


class TooDeep(Unreadable):
    def __init__(self) -> None:
        super().__init__(f"it is nested more than {MAX_DEPTH} levels deep (lists or objects inside each other)")


def within(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and mappings go at most `limit` levels deep in `value` (a walk without recursion)."""
    todo: list[tuple[object, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        if depth > limit:
            return False
        todo.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return True


def checked(value: Any) -> Any:
    """`value` itself, or TooDeep."""
    if not within(value):
        raise TooDeep
    return value


def json_loads(data: str | bytes) -> Any:
    """`json.loads`, bounded: JSONDecodeError as before, TooDeep or Unreadable (both ValueErrors)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise TooDeep from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError as exc:  # int(): more digits than Python converts
        raise Unreadable(f"it holds a number too long to read ({str(exc).split(':')[0]})") from None
    return checked(value)


def toml_loads(text: str) -> dict[str, Any]:
    """`tomllib.loads`, bounded the same way (its TOMLDecodeError is a ValueError too)."""
    import tomllib

    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise TooDeep from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as exc:
        raise Unreadable(f"it holds a number too long to read ({str(exc).split(':')[0]})") from None
    return dict(checked(value))
