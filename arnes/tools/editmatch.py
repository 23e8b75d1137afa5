"""Where Edit's old_string is in a file: exactly, or by the few safe repairs models need.

Models copy `old_string` from Read's output with its line numbers ("    12\\t"), or with the
indentation or trailing spaces slightly off. When such a repair gives exactly one place, the
edit is made there and the result says so; otherwise the closest region is shown, numbered,
so the next try can copy it. A repair never picks between two candidates.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from arnes.tools.base import ToolError
from arnes.tools.readformat import numbered

# Read's prefix is "number, tab"; the arrow is how some other agents' Read shows it.
_PREFIX = re.compile(r"^ *\d+(?:\t|→ ?)")
_INDENT = re.compile(r"^[ \t]*")


@dataclass(frozen=True)
class Replacement:
    updated: str  # the whole new text, LF line endings
    count: int  # occurrences replaced
    note: str = ""  # how old_string was found, when not exactly


def replace(text: str, old: str, new: str, replace_all: bool, shown: str) -> Replacement:
    """The text with exactly old_string replaced, or a ToolError that tells the model what to copy.

    The only repairs are the two that keep the meaning, and the result names them: Read's
    line-number prefixes removed, and a unique match that differs only in whitespace.
    """
    count = text.count(old)
    if count == 1 or (count > 1 and replace_all):
        return Replacement(text.replace(old, new) if replace_all else text.replace(old, new, 1), count)
    if count > 1:
        raise ToolError(
            f"old_string matches {count} times in {shown} ({_where_found(text, old)}). If every one should "
            'change (a rename), call Edit again with "replace_all": true; otherwise add the lines around the '
            "one to change to old_string (and new_string), so it matches once."
        )
    wanted, given = old, new
    if _has_prefixes(old):
        old = _strip_prefixes(old)
        new = _strip_prefixes(new) if _has_prefixes(new) else new
        count = text.count(old) if old else 0
        if count == 1 or (count > 1 and replace_all):
            updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
            return Replacement(updated, count, "old_string matched once Read's line-number prefixes were removed")
        if count > 1:
            raise ToolError(
                f"old_string matches {count} times in {shown} once Read's line-number prefixes are "
                "removed. Leave them out, and add surrounding lines to make it unique."
            )
    found = _loose(text, old, new)
    if found is not None:
        return found
    raise ToolError(_not_found(text, wanted, shown, given))


def _where_found(text: str, old: str, most: int = 6) -> str:
    """`lines 1, 5` for the occurrences of old_string: the model sees which ones it hit."""
    starts: list[int] = []
    at = text.find(old)
    while at >= 0 and len(starts) <= most:
        starts.append(text.count("\n", 0, at) + 1)
        at = text.find(old, at + max(1, len(old)))
    shown = ", ".join(str(n) for n in dict.fromkeys(starts[:most]))
    return f"line{'s' if len(set(starts)) > 1 else ''} {shown}{', ...' if len(starts) > most else ''}"


def without_read_numbers(content: str) -> str | None:
    """Content whose every line starts exactly as Read numbers it (`%6d\\t`, consecutive), stripped.

    Small models copy a Read result into Write. The test is strict on purpose (the padding, the
    tab, numbers counting up by one from the first), so a data file with an index column is
    never taken for one; None when the content is not such a copy.
    """
    lines = content.split("\n")
    ending = lines[-1] == ""
    if ending:
        lines.pop()
    head = re.match(r"^ *(\d+)\t", lines[0]) if lines else None
    if head is None:
        return None
    first = int(head.group(1))
    stripped = []
    for n, line in enumerate(lines, start=first):
        prefix = f"{n:>6}\t"
        if not line.startswith(prefix):
            return None
        stripped.append(line[len(prefix) :])
    return "\n".join(stripped) + ("\n" if ending else "")


def _has_prefixes(text: str) -> bool:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return bool(lines) and all(_PREFIX.match(line) for line in lines)


def _strip_prefixes(text: str) -> str:
    return "\n".join(_PREFIX.sub("", line, count=1) for line in text.split("\n"))


def _norm(line: str) -> str:
    return " ".join(line.split())


def _lines(text: str) -> list[str]:
    """Whole lines of old/new_string: a trailing newline ends the last line, it adds none."""
    if text in ("", "\n"):
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def _loose(text: str, old: str, new: str) -> Replacement | None:
    """The one run of whole lines equal to old_string up to whitespace, replaced by new_string.

    new_string is re-indented the way old_string's lines map onto the file's; when that mapping
    is not consistent (the model dropped some indentation but not the rest) nothing is guessed.
    """
    want = _lines(old)
    if not want or not any(w.strip() for w in want) or len(want) > 200:
        return None
    lines = text.split("\n")
    target = [_norm(w) for w in want]
    size = len(want)
    hits = [
        i
        for i in range(len(lines) - size + 1)
        if _norm(lines[i]) == target[0] and all(_norm(lines[i + j]) == target[j] for j in range(1, size))
    ]
    if len(hits) != 1:
        return None
    start = hits[0]
    mapping: dict[str, str] = {}
    for w, f in zip(want, lines[start : start + size], strict=True):
        if w.strip() and mapping.setdefault(_indent(w), _indent(f)) != _indent(f):
            return None
    replacement = [_reindent(line, mapping) for line in _lines(new)]
    updated = "\n".join([*lines[:start], *replacement, *lines[start + size :]])
    where = f"line {start + 1}" if size == 1 else f"lines {start + 1}-{start + size}"
    adjusted = any(k != v for k, v in mapping.items())
    how = "; new_string was indented like the file" if adjusted else ""
    return Replacement(updated, 1, f"old_string matched {where} only when whitespace is ignored{how}")


def _indent(line: str) -> str:
    match = _INDENT.match(line)
    return match.group(0) if match else ""


def _reindent(line: str, mapping: dict[str, str]) -> str:
    if not line.strip():
        return ""
    for key in sorted(mapping, key=len, reverse=True):
        if line.startswith(key):
            return mapping[key] + line[len(key) :]
    return line


def _not_found(text: str, old: str, shown: str, new: str) -> str:
    message = f"old_string not found in {shown}."
    if len(new.strip()) >= 4 and new in text:  # a longer new_string found by chance is unlikely
        return (
            f"{message} new_string is there already: this change has been made (an earlier Edit did it). "
            "Do not repeat it; go on with the next step of the task (other files, or say you are done)."
        )
    if _has_prefixes(old):
        message += " It looks like old_string contains line-number prefixes from Read; remove them."
        old = _strip_prefixes(old)
    closest = _closest(text, old)
    if closest:
        first, last, snippet = closest
        message += (
            f" The closest match is at lines {first}-{last} (shown as Read shows it):\n{snippet}\n"
            "Copy those lines exactly, without the line numbers, and call Edit again."
        )
    elif tail := _last_line(text):
        message += (
            f" old_string must be text that is in the file now, copied exactly (Read {shown} shows it). "
            "To add new code, put the "
            f"file's last line in old_string ({tail!r}) and that line followed by the new code in "
            "new_string, or Write the whole file (its current lines and the new code)."
        )
    else:
        message += f" {shown} is empty: Write its whole content instead."
    return message


def _last_line(text: str) -> str:
    lines = [line for line in text.split("\n") if line.strip()]
    return lines[-1] if lines else ""


def _closest(text: str, old: str) -> tuple[int, int, str] | None:
    """The window of lines most like old_string, if any is reasonably close, numbered."""
    lines = text.split("\n")
    want = old.strip("\n").split("\n")
    size = len(want)
    if size > 200 or len(lines) > 20_000:
        return None
    target = "\n".join(w.strip() for w in want).lower()  # `rate = 0.10` is near `RATE = 0.10`
    best: tuple[float, int] = (0.0, -1)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in range(0, max(1, len(lines) - size + 1)):
        window = "\n".join(line.strip() for line in lines[start : start + size]).lower()
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, start)
    ratio, start = best
    if ratio < 0.6 or start < 0:
        return None
    chosen = lines[start : start + size]
    return start + 1, start + len(chosen), numbered(chosen, start + 1)


_HEAD = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+\w")
MOST_REGION_LINES = 12


def region_of(text: str, old: str) -> str | None:
    """The whole lines `old` stands on, and a definition's body when it names a `def` line: the
    part to copy into an Edit whose old_string and new_string came out the same.

    A model that sends a function's `def` line as both strings usually means a line of its body.
    None when `old` is not in the text once or the part would be long.
    """
    if not old.strip() or text.count(old) != 1:
        return None
    lines = text.split("\n")
    first = text[: text.index(old)].count("\n")
    last = first + old.count("\n") + 1
    head = _HEAD.match(lines[first])
    if head is not None and last == first + 1:
        indent = len(head.group(1))
        while last < len(lines) and (not lines[last].strip() or len(lines[last]) - len(lines[last].lstrip()) > indent):
            last += 1
        while last > first + 1 and not lines[last - 1].strip():
            last -= 1
    region = "\n".join(lines[first:last])
    if last - first > MOST_REGION_LINES or text.count(region) != 1:
        return None
    return region
