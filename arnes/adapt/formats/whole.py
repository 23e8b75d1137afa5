"""aider's `whole` format: each changed file whole, in a fenced block, its path on the line before
(`EXAMPLE`, which the system prompt shows the model too).

For models of 14B and below aider measured this format ahead of diffs: a small model copies a
file more reliably than it writes an exact search string or a JSON call.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

EXAMPLE = """\
mathutil.py
```python
def add(a, b):
    return a + b
```"""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n", re.MULTILINE)
_PATH = re.compile(r"^[\w./@+-]*[\w-]\.[A-Za-z0-9]{1,10}$|^[\w./@+-]*(?:Makefile|Dockerfile|LICENSE|README)$")
_DOTFILE = re.compile(r"(?:[\w.@+-]+/)*\.[A-Za-z0-9][\w.-]*")  # .envrc, config/.env: no reply writes one


@dataclass(frozen=True)
class FileBlock:
    path: str | None  # None: the block names no file
    content: str
    refused: str | None = None  # a name arnes will not write through a reply (`../x`, `~/x`, `/x`)


def refused_path(line: str) -> str | None:
    """A line that names a file outside the workspace as a path (`../x.txt`, `~/.bashrc`,
    `/etc/x`): no block is written there, and the model hears so."""
    text = line.strip().strip("*`'\"").rstrip(":").strip()
    if not text or " " in text or path_of(line) is not None:
        return None
    if text.startswith(("~", "/")) or ".." in text.split("/") or _DOTFILE.fullmatch(text):
        return text  # outside the workspace, or a dotfile (its shell, its tool's settings: asked for by a call)
    if re.fullmatch(r"[\w.@+-]+(?:/[\w.@+-]+)+", text):
        return text  # a path with no file suffix, which arnes does not take for a file's name
    return None
    return None


def path_of(line: str) -> str | None:
    """The file path a line names, as models write it: `x.py`, `**x.py**`, `# x.py`, `File: x.py:`."""
    text = line.strip().strip("*`'\"").strip()
    text = re.sub(r"^(?:#+\s*|[-*]\s+|(?:file(?:name)?|path)\s*:\s*)", "", text, flags=re.IGNORECASE)
    text = text.strip().strip("*`'\"").rstrip(":").strip().strip("*`'\"")
    return text if _PATH.match(text) and "//" not in text and ".." not in text.split("/") else None


def blocks(text: str) -> list[FileBlock]:
    """Every fenced block of a reply, with the path named on the line before it or in its info
    string (```python x.py), in order. An unclosed last block (a reply cut short) is left out:
    half a file is not a file."""
    out: list[FileBlock] = []
    at = 0
    while (opening := _FENCE.search(text, at)) is not None:
        fence = opening.group("fence")
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, opening.end())
        if end is None:
            break
        body = text[opening.end() : end.start()]
        info = opening.group("info").strip().split()
        named = next((p for word in info if (p := path_of(word)) is not None), None)
        before = text[: opening.start()].rstrip("\n").rsplit("\n", 1)[-1]
        path = named or path_of(before)
        out.append(FileBlock(path, body, refused_path(before) if path is None else None))
        at = end.end()
    return out


_LONE_CR = re.compile(r"\r(?!\n)")


def merge_python(original: str, block: str) -> str | None:
    """The file with a partial block's definitions put in place of its own, when a Python block
    defines some of the file's top-level functions and classes but drops others: a model told to
    send the whole file often sends only the function it fixed. None when the block is no such
    part (it keeps every definition, defines none, or either side does not parse)."""
    if _LONE_CR.search(original) or _LONE_CR.search(block):
        # ast counts a lone CR as a line end, the splice below would not: merge with LF, give back CR
        merged = merge_python(_LONE_CR.sub("\n", original), _LONE_CR.sub("\n", block))
        return merged.replace("\n", "\r") if merged is not None and _LONE_CR.search(original) else merged
    try:
        old_tree, new_tree = ast.parse(original), ast.parse(block)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a null byte, `1+1+…` 100000 long
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    old_defs = {n.name: n for n in old_tree.body if isinstance(n, kinds)}
    new_defs = [n for n in new_tree.body if isinstance(n, kinds)]
    names = [n.name for n in new_defs]
    if not new_defs or not old_defs or set(old_defs) <= set(names) or len(set(names)) < len(names):
        return None  # a block that defines a name twice is no clean part either
    if not any(n.name in old_defs for n in new_defs):
        return None
    lines = original.split("\n")
    new_lines = block.split("\n")

    def span(node: ast.stmt) -> tuple[int, int]:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return first - 1, node.end_lineno or node.lineno

    replaced = sorted(
        ((span(old_defs[n.name]), n) for n in new_defs if n.name in old_defs), key=lambda pair: pair[0], reverse=True
    )
    for (start, end), node in replaced:
        a, b = span(node)
        lines[start:end] = new_lines[a:b]
    added = [n for n in new_defs if n.name not in old_defs]
    text = "\n".join(lines).rstrip("\n") + "\n"
    for node in added:
        a, b = span(node)
        text += "\n\n" + "\n".join(new_lines[a:b]) + "\n"
    imports = [
        "\n".join(new_lines[n.lineno - 1 : n.end_lineno])
        for n in new_tree.body
        if isinstance(n, ast.Import | ast.ImportFrom)
        and "\n".join(new_lines[n.lineno - 1 : n.end_lineno]) not in original
    ]
    return ("\n".join(imports) + "\n" if imports else "") + text
