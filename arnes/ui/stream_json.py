"""`--output-format stream-json`: one JSON object per line as the run goes, in Claude Code's shape,
so tools written for `claude -p --output-format stream-json` read arnes unchanged."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from arnes.agent.events import Event, MessageEvent, ModelRequest, Nested, SessionStart, Steered
from arnes.agent.transcript import anthropic_block

RESULT_SUBTYPES = {"end_turn": "success", "max_turns": "error_max_turns"}


def mcp_status(state: str) -> dict[str, str]:
    """Our server state as Claude Code's `mcp_servers` status (connected | failed | pending | disabled)."""
    if state == "started":
        return {"status": "connected"}
    if state == "starting":
        return {"status": "pending"}
    if state.startswith("failed"):
        return {"status": "failed", "error": state.removeprefix("failed: ")}
    return {"status": "disabled", "error": state}  # not started: untrusted folder


@dataclass
class StreamJson:
    """An event subscriber that prints each message as it is added to the conversation.

    The `init` line lists the tools the first request offers, MCP servers' tools included, as
    Claude Code's does: with servers configured it waits for the first request (the servers start
    behind the banner, and the first request waits for them anyway), so nothing later is delayed."""

    tools: Callable[[], list[str]]
    servers: Callable[[], dict[str, str]] | None = None  # MCP server name -> our state
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    session_id: str = ""
    started: float = field(default_factory=time.monotonic)
    _init: dict[str, Any] | None = None  # written before any other line

    def write(self, obj: dict[str, Any]) -> None:
        if self._init is not None and obj is not self._init:
            self._write_init()
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def _write_init(self) -> None:
        init, self._init = self._init, None
        if init is not None:
            servers = self.servers() if self.servers else {}
            init["tools"] = self.tools()
            init["mcp_servers"] = [{"name": name, **mcp_status(state)} for name, state in servers.items()]
            self.write(init)

    def __call__(self, event: Event) -> None:
        parent = None
        if isinstance(event, Nested):
            parent, event = event.parent, event.inner
        if isinstance(event, SessionStart) and parent is None:
            self.session_id = event.session
            self._init = {
                "type": "system",
                "subtype": "init",
                "session_id": event.session,
                "cwd": event.workspace,
                "model": event.model,
                "provider": event.provider,
                "permissionMode": event.mode,
                "sandbox": event.sandbox,
            }
            if self.servers is None:
                self._write_init()
        elif isinstance(event, ModelRequest) and parent is None:
            self._write_init()  # the tools of the first request are known now
        elif isinstance(event, Steered):
            self.write(
                {
                    "type": "system",
                    "subtype": "steered",
                    **event.payload(),
                    "parent_tool_use_id": parent,
                    "session_id": self.session_id,
                }
            )
        elif isinstance(event, MessageEvent):
            content = [anthropic_block(b) for b in event.content]
            if event.role == "user" and not any(b["type"] == "tool_result" for b in content):
                return  # the task and nudges are the caller's own words, not news
            self.write(
                {
                    "type": event.role,
                    "message": {"role": event.role, "content": content},
                    "parent_tool_use_id": parent,
                    "session_id": self.session_id,
                }
            )

    def result(self, stop_reason: str, text: str, num_turns: int, usage: dict[str, int], **extra: Any) -> None:
        subtype = RESULT_SUBTYPES.get(stop_reason, "error_during_execution")
        self.write(
            {
                "type": "result",
                "subtype": subtype,
                "is_error": subtype != "success" or bool(extra.get("verified") is False),
                "result": text,
                "stop_reason": stop_reason,
                "num_turns": num_turns,
                "duration_ms": int((time.monotonic() - self.started) * 1000),
                "usage": usage,
                "session_id": self.session_id,
                **extra,
            }
        )
