"""Anthropic Messages wire format through the official SDK, streamed."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic.lib.streaming import MessageStreamManager
from anthropic.types import Message as SDKMessage
from anthropic.types import RawMessageStreamEvent

from arnes.errors import ConfigError
from arnes.llm.base import ProviderSettings, TextSink, api_key, auth_token
from arnes.llm.recovery import cut_input
from arnes.llm.sdk_errors import is_transport_error, mid_stream_error, shorten_read_timeout, to_provider_error
from arnes.messages import (
    Appended,
    Message,
    ModelResponse,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)

_STOP: dict[str, StopReason] = {"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens"}


class AnthropicProvider:
    def __init__(self, settings: ProviderSettings):
        self.name = settings.provider
        self.model = settings.model
        self.max_output_tokens = settings.max_output_tokens
        self.settings = settings
        self.stream = settings.stream
        token = auth_token(settings)  # Claude Code's order: the gateway token, then the key
        key = None if token else api_key(settings)
        timeout = anthropic.Timeout(settings.timeout, connect=min(settings.timeout, 30.0))
        kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": 0}
        # The SDK reads ANTHROPIC_BASE_URL itself when no base URL is given: the user's environment.
        where = settings.base_url or (os.environ.get("ANTHROPIC_BASE_URL") if settings.env_key else None)
        if not key and not token and settings.env_key and not where:
            raise ConfigError(
                "--provider anthropic needs a key: export ANTHROPIC_API_KEY=... (or ANTHROPIC_AUTH_TOKEN=... with "
                "ANTHROPIC_BASE_URL for a gateway; read from the environment, never from a project file), or "
                "choose another provider (--provider ollama|openai)"
            )
        # Always an explicit credential: the SDK then reads none from the environment by itself.
        if token:
            kwargs["auth_token"] = token
        else:
            kwargs["api_key"] = key or "withheld"
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        self.where = where or "api.anthropic.com"
        self.client = anthropic.Anthropic(**kwargs)
        self._joined = joined_messages()

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        # Prompt caching: the system prompt and the tool schemas are the same bytes every turn (and
        # in every session, agent/prompt.py), so they are marked as a cacheable prefix.
        cached = {"type": "ephemeral"}
        prefix: list[dict[str, Any]] = [{"type": "text", "text": system, "cache_control": cached}]
        request: dict[str, Any] = {"model": self.model, "max_tokens": self.max_output_tokens, "system": prefix}
        if self.settings.temperature is not None:  # only when the user chose one (see llm/models.py)
            request["temperature"] = self.settings.temperature
        if self.settings.top_p is not None:
            request["top_p"] = self.settings.top_p
        if tools:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools
            ]
            request["tools"][-1]["cache_control"] = cached
        if self.stream:
            request["stream"] = True
        # Posted as bytes we build, each message encoded once in its life: encoding the whole
        # conversation again for every request grows with the session (bench/bench_longrun.py).
        post = functools.partial(
            self.client.post,
            "/v1/messages",
            content=request_body(request, messages, self._joined),
            options={"headers": {"Content-Type": "application/json"}},
            cast_to=SDKMessage,
        )
        streaming = False
        try:
            if self.stream:
                raw = functools.partial(post, stream=True, stream_cls=anthropic.Stream[RawMessageStreamEvent])
                with MessageStreamManager(raw, output_format=anthropic.NOT_GIVEN) as stream:
                    streaming = True
                    shorten_read_timeout(getattr(stream, "response", None), self.settings.read_timeout)
                    for event in stream:
                        if event.type == "text" and on_text:
                            on_text(event.text)
                    final: Any = stream.get_final_message()
            else:
                final = post()
                if on_text:
                    for part in final.content:
                        if part.type == "text":
                            on_text(part.text)
        except anthropic.AnthropicError as exc:
            s = self.settings
            raise to_provider_error(
                exc, anthropic, self.where, streaming=streaming, timeout=s.timeout, read_timeout=s.read_timeout
            ) from exc
        except Exception as exc:  # the HTTP library's own errors while the stream is read
            if streaming and is_transport_error(exc):
                raise mid_stream_error(exc, self.where, self.settings.read_timeout) from exc
            raise
        blocks: list[TextBlock | ToolCall] = []
        for block in final.content:
            if block.type == "text":
                blocks.append(TextBlock(block.text))
            elif block.type == "tool_use":
                blocks.append(ToolCall(block.id, block.name, dict(block.input)))
        usage = Usage(final.usage.input_tokens, final.usage.output_tokens)
        stop = _STOP.get(final.stop_reason or "", "other")
        if stop == "max_tokens" and blocks and isinstance(blocks[-1], ToolCall):
            blocks[-1] = _cut(blocks[-1], self.max_output_tokens)
        return ModelResponse(Message("assistant", list(blocks)), stop, usage)


def _cut(call: ToolCall, cap: int) -> ToolCall:
    """The SDK hands back a half call's partial input as if whole: it must not run."""
    return ToolCall(call.id, call.name, cut_input(json.dumps(call.input), cap))


def joined_messages() -> Appended[bytes]:
    """The messages' bytes joined with commas, extended as the conversation grows (kept per provider)."""
    return Appended(b"", lambda done, new: b",".join([p for p in (done, *map(_message_bytes_memo, new)) if p]))


def request_body(request: dict[str, Any], messages: Sequence[Message], joined: Appended[bytes] | None = None) -> bytes:
    """The JSON body: the settings, then the messages, each encoded once in its life."""
    return _encode(request)[:-1] + b',"messages":[' + (joined or joined_messages())(messages) + b"]}"


def _message_bytes_memo(message: Message) -> bytes:
    return message.memo("anthropic-bytes", functools.partial(_message_bytes, message))


def _message_bytes(message: Message) -> bytes:
    return _encode(_wire(message))


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def to_anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [_wire(m) for m in messages]


def _wire(msg: Message) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            if block.text:
                content.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCall):
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif isinstance(block, ToolResultBlock):
            result = {"type": "tool_result", "tool_use_id": block.tool_call_id, "content": block.content}
            content.append(result | {"is_error": block.is_error})
    return {"role": msg.role, "content": content}
