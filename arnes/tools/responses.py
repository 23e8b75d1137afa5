"""A tool's result in Claude Code's shape: what a PostToolUse hook gets as `tool_response` (DESIGN §16).

The model reads text; a hook written for Claude Code reads that tool's structured result (Bash's
`stdout`/`stderr`/`interrupted`, Write's `filePath` and `structuredPatch`, Read's `file`, ...). A
tool that knows more than its text says returns an `Output`: the text, and a function that makes
the shape only when a hook asks for it (a patch of a large file is not computed for nothing).
Glob's and Grep's shapes are read back from their text, which lists one name or line a line.
A tool Claude Code does not have gets `{"output": TEXT}`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

CONTEXT_LINES = 3  # around each hunk of a structuredPatch, as a unified diff


class Output(str):
    """A tool's text for the model, with Claude Code's structured result of the same call beside it."""

    shape: Callable[[], Any]

    def __new__(cls, text: str, shape: Callable[[], Any]) -> Output:
        made = super().__new__(cls, text)
        made.shape = shape
        return made


def bash_shape(stdout: str, stderr: str, background: str | None = None) -> dict[str, Any]:
    shape: dict[str, Any] = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
    if background is not None:
        shape["backgroundTaskId"] = background
    return shape


def read_shape(path: Path, lines: list[str], start: int, total: int) -> dict[str, Any]:
    """`lines` are the lines shown (no newline), `start` the first one's number from 1."""
    content = "\n".join(lines)
    return {
        "type": "text",
        "file": {"filePath": str(path), "content": content, "numLines": len(lines), "startLine": start,
                 "totalLines": total},
    }  # fmt: skip


def write_shape(path: Path, content: str, before: str | None) -> dict[str, Any]:
    """`before` is None for a file the Write created."""
    return {
        "type": "create" if before is None else "update",
        "filePath": str(path),
        "content": content,
        "structuredPatch": structured_patch(before or "", content),
        "originalFile": before,
    }


def edit_shape(path: Path, old: str, new: str, replace_all: bool, before: str, after: str) -> dict[str, Any]:
    return {
        "filePath": str(path),
        "oldString": old,
        "newString": new,
        "originalFile": before,
        "structuredPatch": structured_patch(before, after),
        "userModified": False,
        "replaceAll": replace_all,
    }


def multi_shape(path: Path, edits: list[tuple[str, str, bool]], before: str, after: str) -> dict[str, Any]:
    """Claude Code's MultiEdit response."""
    listed = [{"old_string": old, "new_string": new, "replace_all": every} for old, new, every in edits]
    patch = structured_patch(before, after)
    return {"filePath": str(path), "edits": listed, "originalFileContents": before, "structuredPatch": patch}


def structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    """The hunks of a unified diff as Claude Code's `structuredPatch` (jsdiff's shape): numbers from 1."""
    old, new = before.splitlines(), after.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(CONTEXT_LINES):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
        first, last = group[0], group[-1]
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunks.append({
            "oldStart": first[1] + 1 if old_lines else first[1],
            "oldLines": old_lines,
            "newStart": first[3] + 1 if new_lines else first[3],
            "newLines": new_lines,
            "lines": lines,
        })  # fmt: skip
    return hunks


def tool_response(name: str, tool_input: dict[str, Any], text: str, workspace: Path, ms: int) -> Any:
    """The `tool_response` of a successful call of tool `name` whose result was `text`."""
    if isinstance(text, Output):
        return text.shape()
    if name == "Glob":
        names, cut = _listed(text, "No files match ")
        files = [str(workspace / n) for n in names]
        return {"filenames": files, "durationMs": ms, "numFiles": len(files), "truncated": cut}
    if name == "Grep":
        return _grep(tool_input, text, workspace)
    if name.startswith("mcp__"):
        return [{"type": "text", "text": text}]  # the server's content blocks
    if name in ("Delegate", "Task"):
        return {"content": [{"type": "text", "text": text}], "totalDurationMs": ms}
    if name == "Skill":
        return {"success": True, "commandName": str(tool_input.get("skill") or tool_input.get("name") or "")}
    return {"output": text}


def _listed(text: str, none: str) -> tuple[list[str], bool]:
    """The lines of a Glob or Grep result, its own notes left out; whether the list was cut."""
    if text.startswith(none):
        return [], False
    lines = [line for line in text.split("\n") if not line.startswith("[arnes: ")]
    cut = bool(lines) and lines[-1].startswith("... (")
    return (lines[:-1] if cut else lines), cut


def _grep(tool_input: dict[str, Any], text: str, workspace: Path) -> dict[str, Any]:
    lines, _ = _listed(text, "No matches for ")
    mode = str(tool_input.get("output_mode") or "files_with_matches")
    one_file = text.startswith("[arnes: ") and text.split("\n", 1)[0].endswith("matching lines are shown]")
    if mode == "files_with_matches" and not one_file:
        files = [str(workspace / n) for n in lines]
        return {"mode": mode, "filenames": files, "numFiles": len(files)}
    mode = "content" if mode == "files_with_matches" else mode  # one file searched: its lines were shown
    if mode == "count":
        counts = [line.rpartition(":") for line in lines]
        total = sum(int(n) for _, _, n in counts if n.isdigit())
        return {"mode": mode, "content": "\n".join(lines), "numFiles": len(lines), "numMatches": total,
                "filenames": []}  # fmt: skip
    return {"mode": mode, "content": "\n".join(lines), "numLines": len(lines), "numFiles": 0, "filenames": []}
