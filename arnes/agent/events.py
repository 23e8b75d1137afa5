"""Typed events the loop emits; the terminal UI and the JSONL trace subscribe to the same stream."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar
from uuid import uuid4


@dataclass(frozen=True)
class Event:
    event: ClassVar[str] = "event"
    traced: ClassVar[bool] = True

    def payload(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class SessionStart(Event):
    event: ClassVar[str] = "session_start"
    session: str
    workspace: str
    provider: str
    model: str
    mode: str
    sandbox: str = "off"
    sandbox_note: str = ""
    context_window: int = 0
    context_source: str = ""  # flag | settings | server | profile: where the window came from
    output_style: str = ""  # the settings' outputStyle in use; "" for arnes's default
    edit_format: str = "tools"  # how the model hands over file changes (its profile's, or the user's)


@dataclass(frozen=True)
class ModelRequest(Event):
    event: ClassVar[str] = "model_request"
    turn: int
    ctx_tokens: int
    ctx_window: int


@dataclass(frozen=True)
class TextDelta(Event):
    """Streamed text; shown live, not traced (model_response carries the whole text)."""

    event: ClassVar[str] = "text_delta"
    traced: ClassVar[bool] = False
    text: str


@dataclass(frozen=True)
class ModelResponseEvent(Event):
    event: ClassVar[str] = "model_response"
    turn: int
    stop_reason: str
    input_tokens: int
    output_tokens: int
    text: str
    raw_text: str | None = None  # the reply as printed, when tool calls were recovered from its text

    def payload(self) -> dict[str, Any]:
        data = super().payload()
        if self.raw_text is None:
            del data["raw_text"]
        return data


@dataclass(frozen=True)
class Retry(Event):
    event: ClassVar[str] = "retry"
    attempt: int
    delay: float
    error: str


@dataclass(frozen=True)
class ToolCallEvent(Event):
    event: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]
    by: str = "model"  # "arnes": a call the model-adaptation layer made for the model (DESIGN §15)


@dataclass(frozen=True)
class Steered(Event):
    """One intervention of the model-adaptation layer: which piece, what the model sent, what ran."""

    event: ClassVar[str] = "steered"
    piece: str
    moment: str  # reply | call | result
    action: str  # nudge | rewrite | act | refuse | redraw
    sent: str  # what the model sent (cut short)
    ran: str  # what arnes did instead: the message, the calls made, the call as rewritten
    keep: int | None = None  # redraw: the conversation's first `keep` messages stay (resume replays it)


@dataclass(frozen=True)
class PermissionEvent(Event):
    event: ClassVar[str] = "permission"
    id: str
    name: str
    decision: str
    reason: str
    source: str


@dataclass(frozen=True)
class ToolResultEvent(Event):
    event: ClassVar[str] = "tool_result"
    id: str
    name: str
    is_error: bool
    ms: int
    output: str


@dataclass(frozen=True)
class HookEvent(Event):
    """One hook command ran (extensions/hooks.py): what it decided, and its output, capped."""

    event: ClassVar[str] = "hook"
    hook_event: str  # PreToolUse, Stop, ...
    command: str
    exit_code: int | None
    decision: str  # continue | block | allow | ask | deny | stop | failed
    ms: int
    output: str
    error: str | None = None


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should know that is not a step (a warning, a hint)."""

    event: ClassVar[str] = "notice"
    level: str
    message: str


@dataclass(frozen=True)
class SessionEnd(Event):
    event: ClassVar[str] = "session_end"
    stop_reason: str
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    denials: int = 0
    error: str | None = None
    verified: bool | None = None
    cost: float | None = None  # USD, when the model's price is known
    arnes_calls: int = 0  # calls the adaptation layer made for the model (tool_calls are the model's own)


@dataclass(frozen=True)
class ShellChanges:
    """What shell commands changed beyond the files named (tools/treewatch.py `Report`), as a run's
    closing says it; the keys are `--output-format json`'s `shell_changes`."""

    runs_code: list[str] = field(default_factory=list)  # files that run code later (.envrc, sitecustomize.py)
    ignored: dict[str, int] = field(default_factory=dict)  # ignored folder -> files changed in it
    setid_removed: list[str] = field(default_factory=list)
    tracked: bool = True  # False: the workspace had too many files to watch


@dataclass(frozen=True)
class RunClosed(Event):
    """A run ended (or one turn of a session driven over stdin, headless/run.py): everything its
    closing says, as data. The subscriber of the output format prints it: the terminal renderer
    the lines on the changes and, when no model answered, how to configure one (on stderr); the
    JSON outputs their result object, whose arnes keys are `payload()`.

    Not traced: the trace is the session's steps and ends with `session_end` (DESIGN §7, which
    readers rely on); what this adds is the workspace's state at the end, and the result object
    itself for whoever asked for one."""

    event: ClassVar[str] = "run_closed"
    traced: ClassVar[bool] = False
    session: str
    result: str  # the final text
    stop_reason: str
    limit: str | None
    turns: int
    tool_calls: int
    arnes_calls: int
    input_tokens: int
    output_tokens: int
    cost: float  # USD, as counted (the JSON shows it rounded)
    compactions: int
    clearings: int
    verified: bool | None
    verify_rounds: int
    files_changed: list[str]  # as shown (relative to the workspace), file tools' first
    shell_changes: ShellChanges
    denials: list[dict[str, Any]]
    error: str | None
    trace: str
    diffs: list[str] | None = None  # unified diffs of the files changed, when the output shows them
    no_model: str | None = None  # no model answered at all: how to configure one
    user_message: str | None = None  # the uuid the SDK sent the turn's message with (stream-json input)
    structured_output: Any = None  # --json-schema's answer (Claude Code's key, among its own)

    def payload(self) -> dict[str, Any]:
        """`--output-format json`'s own keys, in their order (Claude Code's come before them)."""
        data = super().payload()
        del data["diffs"], data["no_model"], data["user_message"], data["structured_output"]
        data["cost"] = round(self.cost, 6)
        data["shell_changes"] = dataclasses.asdict(self.shell_changes)
        if self.user_message is not None:  # Claude Code's: only for a message sent with its uuid
            data |= {"user_message_uuid": self.user_message, "user_message_uuids": [self.user_message]}
        return data


@dataclass(frozen=True)
class VerifyEvent(Event):
    event: ClassVar[str] = "verify"
    round: int
    command: str
    passed: bool
    exit_code: int | None
    output: str


@dataclass(frozen=True)
class CheckerEvent(Event):
    event: ClassVar[str] = "checker"
    round: int
    verdict: str  # PASS | FAIL
    reasons: str


@dataclass(frozen=True)
class MessageEvent(Event):
    """A message joined the conversation: enough to resume the session from its trace."""

    event: ClassVar[str] = "message"
    role: str
    content: list[dict[str, Any]]
    # The message's name wherever it is shown: stream-json's `uuid`, the transcript's, and what
    # `--resume-session-at` takes. A user's message keeps the uuid its sender gave it.
    uuid: str = field(default_factory=lambda: str(uuid4()))


@dataclass(frozen=True)
class ResumedAt(Event):
    """The conversation goes on from message `at` (`--resume-session-at`): what came after it in
    this trace is left out when the session is read again."""

    event: ClassVar[str] = "resumed_at"
    at: str


@dataclass(frozen=True)
class CompactionEvent(Event):
    event: ClassVar[str] = "compaction"
    tokens_before: int
    tokens_after: int
    method: str
    removed: int
    messages: list[dict[str, Any]]  # the conversation from here on, for resume


@dataclass(frozen=True)
class TurnStart(Event):
    """A numbered point of the session began (a user turn, a rewind, a verify round): the mark a
    conversation rewind goes back to (DESIGN §17)."""

    event: ClassVar[str] = "turn"
    n: int
    kind: str
    label: str


@dataclass(frozen=True)
class Rewound(Event):
    """Point `n` rewound the session to how it was before point `to`: its files, its conversation, or both."""

    event: ClassVar[str] = "rewind"
    n: int
    to: int
    what: str  # both | code | conversation
    files: list[str]
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Nested(Event):
    """A sub-agent's event, filed under the parent's tool call id."""

    event: ClassVar[str] = "nested"
    parent: str
    inner: Event

    def payload(self) -> dict[str, Any]:
        return {"parent": self.parent, **self.inner.payload()}


Subscriber = Callable[[Event], None]


@dataclass
class EventBus:
    subscribers: list[Subscriber] = field(default_factory=list)

    def subscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.append(subscriber)

    def emit(self, event: Event) -> None:
        for subscriber in self.subscribers:
            subscriber(event)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
