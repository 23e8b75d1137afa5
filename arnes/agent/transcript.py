"""The conversation as Claude Code writes its transcripts: what a hook's `transcript_path` leads to.

Hooks written for Claude Code read `transcript_path` as Claude Code's JSONL: one message a line,
`{"type": "user" | "assistant", "message": {"role", "content": [Anthropic blocks]}, "uuid",
"parentUuid", "sessionId", "timestamp", "cwd", ...}` (a Stop hook reads the last assistant text, a
PostToolUse hook the call's result). arnes's own trace (DESIGN §7) has another shape, so this
file is written beside it, `.arnes/traces/transcripts/SESSION.jsonl` (out of git, as traces are; not
a trace `-c` would continue), only when hooks are configured.
Each line is flushed before the loop moves on, so a hook reads every message before its moment.
A sub-agent's messages are not in it (Claude Code keeps a sub-agent's in a file of its own).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

from arnes import __version__
from arnes.agent.events import Event, MessageEvent, now_iso
from arnes.dotdir import ensure_arnes_dir
from arnes.errors import ConfigError
from arnes.host.files import HostFiles

FOLDER = ".arnes/traces/transcripts"


def anthropic_block(block: dict[str, Any]) -> dict[str, Any]:
    """Our neutral block (messages.block_to_json) as the Anthropic block Claude Code's readers expect."""
    if block["type"] == "tool_call":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["input"]}
    if block["type"] == "tool_result":
        return {
            "type": "tool_result",
            "tool_use_id": block["tool_call_id"],
            "content": block["content"],
            "is_error": block["is_error"],
        }
    return block


class ClaudeTranscript:
    """An event subscriber that appends each message of the main conversation, as Claude Code would."""

    def __init__(self, path: Path, handle: IO[str], session_id: str, cwd: Path):
        self.path = path
        self._file = handle
        self._session = session_id
        self._cwd = str(cwd)
        self._parent: str | None = None
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if not isinstance(event, MessageEvent):  # a Nested one is a sub-agent's
            return
        me = event.uuid
        record = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self._cwd,
            "sessionId": self._session,
            "version": __version__,
            "type": event.role,
            "message": {"role": event.role, "content": [anthropic_block(b) for b in event.content]},
            "uuid": me,
            "timestamp": now_iso().replace("+00:00", "Z"),
        }
        line = json.dumps(record)  # ASCII: a lone surrogate from a model or a file name cannot break it
        with self._lock:
            self._parent = me
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def transcript_file(workspace: Path, session_id: str) -> Path:
    """Where the session's transcript is (what hooks get as `transcript_path`)."""
    return workspace / FOLDER / f"{session_id.replace('/', '_')}.jsonl"


def open_transcript(workspace: Path, session_id: str) -> ClaudeTranscript:
    """The session's transcript in the workspace, opened to append (a resumed session goes on in it)."""
    rel = transcript_file(workspace, session_id).relative_to(workspace).as_posix()
    try:
        ensure_arnes_dir(workspace)
        handle = HostFiles(workspace).append(rel)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the transcript hooks read to {workspace / rel}: {exc.strerror or exc}"
        ) from exc
    return ClaudeTranscript(workspace / rel, handle, session_id, workspace)
