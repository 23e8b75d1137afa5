"""Neutral conversation types shared by every provider.

Providers translate to and from these at their edge; the conversation itself lives in the agent,
never in a client, so switching provider changes nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

Role = Literal["user", "assistant"]
T = TypeVar("T")


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResultBlock:
    tool_call_id: str
    content: str
    is_error: bool = False


Block = TextBlock | ToolCall | ToolResultBlock


@dataclass
class Message:
    """One turn. Its content is never changed in place (a changed turn is a new Message), so what is
    derived from it (its size, its wire form, its bytes) is worked out once and kept in `_memo`:
    a long session then pays for each message once, not once per step."""

    role: Role
    content: list[Block] = field(default_factory=list)
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """`make()`, computed on the first call for `key` and reused after."""
        try:
            return cast(T, self._memo[key])
        except KeyError:
            value = self._memo[key] = make()
            return value

    @property
    def tokens(self) -> int:
        """The estimated size of this message in a request (its JSON at 4 characters a token)."""
        return self.memo("tokens", lambda: estimate_tokens(json.dumps(self.to_json(), ensure_ascii=False)))

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextBlock(text)])

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "content": [block_to_json(b) for b in self.content]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        return cls(data["role"], [block_from_json(b) for b in data["content"]])


class Appended(Generic[T]):
    """A value folded over a conversation that grows at its end: only the new messages are folded in.

    A long session sends and measures the same first 1,000 messages again each step; going over
    them again made a step's cost grow with the conversation. When the known part changed (a
    compaction replaced it, a turn was amended) the value is folded again from the start.
    """

    def __init__(self, start: T, add: Callable[[T, Sequence[Message]], T]) -> None:
        self._start, self._add = start, add
        self._seen: list[Message] = []
        self._value = start

    def __call__(self, messages: Sequence[Message]) -> T:
        n = len(self._seen)
        if n > len(messages) or list(messages[:n]) != self._seen:  # C-speed: identical items compare at once
            self._seen, self._value, n = [], self._start, 0
        new = messages[n:]
        if new:
            self._value = self._add(self._value, new)
            self._seen.extend(new)
        return self._value


def block_to_json(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCall):
        return {"type": "tool_call", "id": block.id, "name": block.name, "input": block.input}
    return {
        "type": "tool_result",
        "tool_call_id": block.tool_call_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def block_from_json(data: dict[str, Any]) -> Block:
    kind = data["type"]
    if kind == "text":
        return TextBlock(data["text"])
    if kind == "tool_call":
        return ToolCall(data["id"], data["name"], dict(data["input"]))
    return ToolResultBlock(data["tool_call_id"], data["content"], bool(data.get("is_error")))


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@dataclass(frozen=True)
class ModelResponse:
    """One assistant turn, as every provider reports it."""

    message: Message
    stop_reason: StopReason
    usage: Usage
    raw_text: str | None = None  # the text as printed, when tool calls were recovered from it


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: its name, purpose and JSON schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


def estimate_tokens(text: str) -> int:
    """A rough count (4 characters a token) for when a provider reports nothing."""
    return max(1, len(text) // 4) if text else 0
