"""Words as bash makes them: quote removal, brace expansion and line continuations.

tree-sitter-bash gives the shape of a command; these turn its word nodes into the words bash
passes to the program, so a rule sees `rm -r -f x` where the model wrote `r\\<newline>m {-r,-f} x`.
A word whose value is only known at run time comes back as None.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

BRACE_LIMIT = 64  # more words than this from one word: treated as computed
_DQ_ESCAPES = {"\\", '"', "$", "`"}
_SEQUENCE = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$")


def literal(node: Node) -> str | None:
    """The word's value after quote removal (no brace expansion), or None when it is computed."""
    words = words_of(node, expand_braces=False)
    return words[0] if words is not None and len(words) == 1 else None


def words_of(node: Node, *, expand_braces: bool = True) -> list[str] | None:
    """The words one word node becomes (brace expansion can make several), or None if computed."""
    if node.type == "command_name" and node.named_children:
        node = node.named_children[0]
    if node.type == "word":  # the common case, on the hot path of every decision
        text = node.text.decode(errors="replace") if node.text else ""
        if "\\" not in text and "{" not in text:
            return [text]
    marked = _marked(node)
    if marked is None:
        return None
    alternatives = _braces(marked) if expand_braces else [marked]
    if alternatives is None:
        return None
    return [_unescape(a) for a in alternatives]


def unquoted_glob(node: Node) -> bool:
    """Whether the shell expands this word as a pathname pattern: a `*`, `?` or `[` neither quoted
    nor escaped (an extglob too). Such a word lists a folder, whatever the program is."""
    kind = node.type
    if kind == "extglob_pattern":
        return True
    if kind == "concatenation":
        return any(unquoted_glob(c) for c in node.named_children)
    if kind != "word":
        return False  # quoted strings, expansions (their values come from this command line only)
    text = node.text.decode(errors="replace") if node.text else ""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in "*?[":
            return True
        i += 1
    return False


def _marked(node: Node) -> str | None:
    """The word with every quoted character backslash-escaped, so brace expansion and quote
    removal can be done on one string as bash does them."""
    kind = node.type
    text = node.text.decode(errors="replace") if node.text else ""
    if kind == "command_name":
        return _marked(node.named_children[0]) if node.named_children else None
    if kind in ("word", "number", "brace_expression", "test_operator"):
        return text
    if kind == "raw_string":
        return _escape(text[1:-1])
    if kind == "ansi_c_string":
        decoded = _ansi_c(text[2:-1])
        return None if decoded is None else _escape(decoded)
    if kind == "string":
        # the text between the quotes, not the children: tree-sitter leaves line breaks between
        # its string_content pieces out of all of them
        if any(c.is_named and c.type != "string_content" for c in node.children):
            return None
        return _escape(_unquote_double(text[1:-1]))
    if kind == "concatenation":
        pieces = [_marked(c) for c in node.named_children]
        return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
    return None


def _escape(text: str) -> str:
    return "".join("\\" + ch for ch in text)


def _unquote_double(text: str) -> str:
    """Inside "...", a backslash escapes only \\ " $ ` and a newline (which it removes)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and (text[i + 1] in _DQ_ESCAPES or text[i + 1] == "\n"):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
              "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip
_C_NUMBER = re.compile(r"([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.)", re.DOTALL)


def _ansi_c(body: str) -> str | None:
    """$'...' decoded as bash decodes it (`$'\\162m'` is `rm`; an unknown escape keeps its
    backslash), or None where the value is not one string (a NUL ends it in bash)."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
            continue
        match = _C_NUMBER.match(body, i + 1)
        if match is None:
            out.append("\\" + nxt)
            i += 2
            continue
        octal, hexa, short, long, control = match.groups()
        if control is not None:
            value = 0x7F if control == "?" else ord(control.upper()) & 0x1F
        else:
            value = int(octal, 8) if octal else int(hexa or short or long, 16)
        if value == 0 or value > 0x10FFFF:
            return None
        out.append(chr(value & 0xFF if octal else value))
        i = match.end()
    return "".join(out)


def _braces(word: str) -> list[str] | None:
    """Bash brace expansion on a marked word (escaped characters never take part)."""
    if "{" not in word:
        return [word]
    i = 0
    while i < len(word):
        ch = word[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{" and not (i > 0 and word[i - 1] == "$"):
            found = _brace_body(word, i)
            if found is not None:
                end, options = found
                out: list[str] = []
                for option in options:
                    more = _braces(word[:i] + option + word[end + 1 :])
                    if more is None or len(out) + len(more) > BRACE_LIMIT:
                        return None
                    out += more
                return out
        i += 1
    return [word]


def _brace_body(word: str, start: int) -> tuple[int, list[str]] | None:
    """Where the brace group at `start` ends and its options, or None if it is not one."""
    depth, i, cuts = 0, start + 1, [start]
    while i < len(word):
        ch = word[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                if len(cuts) > 1:
                    bounds = [*cuts, i]
                    return i, [word[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                sequence = _sequence(word[start + 1 : i])
                return (i, sequence) if sequence is not None else None
            depth -= 1
        elif ch == "," and depth == 0:
            cuts.append(i)
        i += 1
    return None


def _sequence(body: str) -> list[str] | None:
    match = _SEQUENCE.match(body)
    if not match:
        return None
    if match.group(1) is not None:
        first, last, step = int(match.group(1)), int(match.group(2)), abs(int(match.group(3) or 1)) or 1
        if abs(last - first) // step >= BRACE_LIMIT:
            return [f"{first}", f"{last}"] * BRACE_LIMIT  # too many: the caller treats it as computed
        direction = 1 if last >= first else -1
        return [str(n) for n in range(first, last + direction, step * direction)]
    a, b, step = ord(match.group(4)), ord(match.group(5)), abs(int(match.group(6) or 1)) or 1
    direction = 1 if b >= a else -1
    return [_escape(chr(n)) for n in range(a, b + direction, step * direction)]


def join_continuations(source: str, root: Node) -> str:
    """Remove backslash-newline where bash does: everywhere but in '...', $'...', comments and
    here-documents whose delimiter is quoted. tree-sitter reads `r\\<newline>m` as two words."""
    data = source.encode()
    if b"\\\n" not in data:
        return source
    keep: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("raw_string", "ansi_c_string", "comment"):
            keep.append((node.start_byte, node.end_byte))
            continue
        if node.type == "heredoc_redirect" and quoted_heredoc(node):
            keep += [(c.start_byte, c.end_byte) for c in node.children if c.type in ("heredoc_body", "heredoc_end")]
        stack.extend(node.children)
    kept = dict(sorted(keep))
    out = bytearray()
    i = 0
    while i < len(data):
        if i in kept:  # copied as it is, escapes and all
            out += data[i : kept[i]]
            i = max(kept[i], i + 1)
        elif data[i] == 0x5C and i + 1 < len(data):  # a backslash and what it escapes
            if data[i + 1] != 0x0A:
                out += data[i : i + 2]
            i += 2
        else:
            out.append(data[i])
            i += 1
    return out.decode(errors="replace")


def quoted_heredoc(node: Node) -> bool:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    text = (start.text or b"").decode(errors="replace") if start is not None else ""
    return any(ch in text for ch in "'\"\\")


_PLAIN_DELIMITER = re.compile(r"^[A-Za-z0-9_.,:+%@/=-]+$")


def heredoc_delimiter(start: str) -> str | None:
    """The delimiter bash ends a here-document at, for the forms read the same by tree-sitter:
    a plain word, a fully quoted one ('EOF', "EOF") or \\EOF. Anything else (E'O'F, $'EOF') is None."""
    if _PLAIN_DELIMITER.match(start):
        return start
    if len(start) > 2 and start[0] == start[-1] and start[0] in "'\"" and _PLAIN_DELIMITER.match(start[1:-1]):
        return start[1:-1]
    if start.startswith("\\") and _PLAIN_DELIMITER.match(start[1:]):
        return start[1:]
    return None
