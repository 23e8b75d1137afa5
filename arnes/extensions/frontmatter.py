"""Read a Markdown file's YAML front matter, the shape Claude Code's skills, commands and agents use.

    ---
    name: reviewer
    description: Reviews a diff
    tools: Read, Grep
    ---
    body...

YAML is parsed with PyYAML's safe loader (no tags, no objects), bounded (yamlfile.py: no anchors,
nesting.MAX_DEPTH levels at most; past that the file is refused, a `ConfigError` naming it). What
it refuses as not YAML is read again line by line, as Claude Code's loader tolerates it
(lenient_yaml.py: an unquoted colon in a description, a description over unindented lines, tabs);
`Document.lenient` says so. A file without front matter is all body. Front matter that is neither
YAML nor `key: value` lines is one `ConfigError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.extensions.lenient_yaml import lines_to_mapping
from arnes.nesting import Unreadable

MAX_BYTES = 256 * 1024  # a prompt file larger than this is a mistake (or an attack on the context)
NAME_CHARS = 200  # a value that names something (a model): one line at most this long


@dataclass(frozen=True)
class Document:
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    lenient: bool = False  # strict YAML refused the front matter; it was read line by line

    def text(self, key: str, *, literal: bool = False) -> str | None:
        """A string field; a number or a boolean is taken as its text, a list or a mapping is an error.
        `literal`: a YAML list is taken as written (`argument-hint: [file]` is the hint "[file]")."""
        value = self.meta.get(key)
        if value is None:
            return None
        if literal and isinstance(value, list) and not any(isinstance(v, (list, dict)) for v in value):
            return "[" + ", ".join(str(v) for v in value) + "]"
        if isinstance(value, (list, dict)):
            raise ConfigError(f"{self.path}: front matter '{key}' must be a single value, got a {type(value).__name__}")
        return str(value).strip()

    def name(self, key: str) -> str | None:
        """A value that names something, such as a `model`: one line of at most NAME_CHARS printable
        characters. A granting key's value is shown to the user and hashed into the trust record
        as it is, so anything else (a list, a mapping, a page of text) refuses the file."""
        value = self.text(key)
        if value is not None and (len(value) > NAME_CHARS or not value.isprintable()):
            raise ConfigError(
                f"{self.path}: front matter '{key}' must be a name on one line of at most {NAME_CHARS} characters"
            )
        return value

    def names(self, key: str) -> list[str] | None:
        """A list field given either as a YAML list or as a comma/space separated string
        (`tools: Read, Grep` and `allowed-tools: [Read, Grep]` both occur in the wild).
        None when the key is absent: "not said" differs from "nothing allowed"."""
        value = self.meta.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            parts = _split_names(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            parts = [v.strip() for v in value]
        else:
            raise ConfigError(f"{self.path}: front matter '{key}' must be a list of names or a comma-separated string")
        return [p for p in parts if p]


def _split_names(value: str) -> list[str]:
    """Split on commas and blanks outside parentheses: `Read, Bash(git add *)` is two names."""
    parts, word, depth = [], "", 0
    for ch in value:
        depth += (ch == "(") - (ch == ")")
        if depth <= 0 and (ch == "," or ch.isspace()):
            parts.append(word)
            word = ""
        else:
            word += ch
    return [*parts, word]


def parse(text: str, path: Path) -> Document:
    """Split `text` into front matter and body; `path` only names the file in errors."""
    import yaml

    from arnes import yamlfile

    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Document(path, {}, text)
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise ConfigError(
            f"{path}: the front matter opened by '---' on line 1 is never closed; add a '---' line after it"
        )
    head = "".join(lines[1:end])
    body = "".join(lines[end + 1 :])
    try:
        meta = yamlfile.load(head) if head.strip() else {}
    except Unreadable as exc:
        raise ConfigError(f"{path}: the front matter is not read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        why = f"{path}: the front matter is not valid YAML{where}: {problem}; write it as 'key: value' lines"
        return _by_lines(head, body, path, why)
    if not isinstance(meta, dict):
        why = f"{path}: the front matter must be 'key: value' lines, got a {type(meta).__name__}"
        return _by_lines(head, body, path, why)
    return Document(path, {str(k): v for k, v in meta.items()}, body)


def _by_lines(head: str, body: str, path: Path, why: str) -> Document:
    """What strict YAML refused, read as Claude Code reads it; `why` when that finds no keys either."""
    meta = lines_to_mapping(head)
    if meta is None:
        raise ConfigError(why)
    return Document(path, meta, body, lenient=True)


def load_user(path: Path) -> Document:
    """Read and parse one of the user's own files (their config folder), refusing one too large."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    return decode(data, path)


def decode(data: bytes, path: Path) -> Document:
    """Parse bytes read elsewhere (a workspace file comes through host/files.py, never a link out)."""
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: {len(data)} bytes is too large for a prompt file (at most {MAX_BYTES}); shorten it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    return parse(text, path)
