"""`--output-format stream-json`: one JSON object per line as the run goes, in Claude Code's shape
(ui/sdk_messages.py), so tools and Agent SDKs written for `claude -p --output-format stream-json`
read arnes unchanged."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arnes.agent.events import (
    Event,
    MessageEvent,
    ModelRequest,
    ModelResponseEvent,
    Nested,
    SessionStart,
    Steered,
    TextDelta,
)
from arnes.ui import sdk_messages as sdk
from arnes.ui.stdout import Stdout


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

    The `init` line comes first and lists the tools the first request offers, MCP servers'
    tools included, as Claude Code's does: with servers configured it waits for the first
    request (the servers start behind the banner, and the first request waits for them anyway),
    so nothing later is delayed. Lines due before it (warnings said before the run) wait for it.
    An assistant message carries the usage and stop reason of the reply that made it."""

    out: Stdout
    session_id: str
    tools: Callable[[], list[str]]
    init_keys: Callable[[], dict[str, Any]]  # Claude Code's keys known only once the session runs
    servers: Callable[[], dict[str, str]] | None = None  # MCP server name -> our state
    partial: bool = False  # --include-partial-messages: stream_event lines as a reply's text streams
    _init: dict[str, Any] | None = None
    _ready: bool = False
    _waiting: list[dict[str, Any]] = field(default_factory=list)
    _models: dict[str | None, str] = field(default_factory=dict)  # by parent tool call (None: the main agent)
    _replies: dict[str | None, ModelResponseEvent] = field(default_factory=dict)
    _texting: set[str | None] = field(default_factory=set)  # replies whose text block is open (partial)

    def write(self, obj: dict[str, Any]) -> None:
        if not self._ready:
            if self._init is None:
                self._waiting.append(obj)
                return
            self._write_init()
        self.out.line(obj)

    def flush(self) -> None:
        """Before the last line: init (if the run never got to its first request) and what waited."""
        if self._init is not None:
            self._write_init()
        waiting, self._waiting, self._ready = self._waiting, [], True
        for obj in waiting:
            self.out.line(obj)

    def _write_init(self) -> None:
        init, self._init = self._init, None
        if init is None:
            return
        servers = self.servers() if self.servers else {}
        init["tools"] = self.tools()
        init["mcp_servers"] = [{"name": name, **mcp_status(state)} for name, state in servers.items()]
        init.update(self.init_keys())
        self._ready = True
        self.out.line(init)
        self.flush()

    def warning(self, message: str, parent: str | None = None) -> None:
        self.write(sdk.system("warning", self.session_id, message=message, parent_tool_use_id=parent))

    def __call__(self, event: Event) -> None:
        parent = None
        if isinstance(event, Nested):
            parent, event = event.parent, event.inner
        if self.partial:
            self._stream(event, parent)
        if isinstance(event, SessionStart):
            self._models[parent] = event.model
            if parent is None:
                self._start(event)
        elif isinstance(event, ModelRequest) and parent is None:
            self._write_init()  # the tools of the first request are known now
        elif isinstance(event, ModelResponseEvent):
            self._replies[parent] = event
        elif isinstance(event, Steered):
            self.write(sdk.system("steered", self.session_id, **event.payload(), parent_tool_use_id=parent))
        elif isinstance(event, MessageEvent):
            self._message(event, parent)

    def _stream(self, event: Event, parent: str | None) -> None:
        """`--include-partial-messages`: the Messages API's stream events of each reply, as Claude
        Code passes them on (text only: a reply's tool calls come whole, in its assistant message)."""
        raw: list[dict[str, Any]] = []
        if isinstance(event, ModelRequest):
            raw.append({"type": "message_start", "message": sdk.stream_message(self._models.get(parent, ""))})
        elif isinstance(event, TextDelta):
            if parent not in self._texting:
                self._texting.add(parent)
                raw.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            raw.append({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": event.text}})
        elif isinstance(event, ModelResponseEvent):
            if parent in self._texting:
                self._texting.discard(parent)
                raw.append({"type": "content_block_stop", "index": 0})
            delta = {"stop_reason": event.stop_reason, "stop_sequence": None}
            raw += [
                {"type": "message_delta", "delta": delta, "usage": {"output_tokens": event.output_tokens}},
                {"type": "message_stop"},
            ]
        for one in raw:
            self.write(sdk.stream_event(one, self.session_id, parent))

    def _start(self, event: SessionStart) -> None:
        self._init = sdk.system(
            "init",
            self.session_id,
            cwd=event.workspace,
            model=event.model,
            provider=event.provider,
            permissionMode=sdk.mode_name(event.mode),
            sandbox=event.sandbox,
        )
        if self.servers is None:
            self._write_init()

    def _message(self, event: MessageEvent, parent: str | None) -> None:
        if event.role == "assistant":
            reply = self._replies.pop(parent, None)  # none: calls arnes made for the model (DESIGN §15)
            self.write(
                sdk.assistant(
                    event.content,
                    model=self._models.get(parent, ""),
                    session_id=self.session_id,
                    parent=parent,
                    stop_reason=reply.stop_reason if reply else None,
                    input_tokens=reply.input_tokens if reply else 0,
                    output_tokens=reply.output_tokens if reply else 0,
                    message_uuid=event.uuid,
                )
            )
        elif any(b["type"] == "tool_result" for b in event.content):  # the task and nudges are the caller's own
            self.write(sdk.user(event.content, session_id=self.session_id, parent=parent, message_uuid=event.uuid))
