"""OpenAI chat-completions wire format: OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter.

Endpoints differ only by base URL and key; the wire format is one. Tool calls that a local model
prints as JSON text are recovered into real calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai
from openai import Stream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from arnes.errors import ProviderError
from arnes.llm.base import PROFILES, ProviderSettings, TextSink, api_key
from arnes.llm.recovery import split_tool_calls
from arnes.llm.sdk_errors import to_provider_error
from arnes.messages import (
    Message,
    ModelResponse,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)


class OpenAICompatProvider:
    def __init__(self, settings: ProviderSettings):
        profile = PROFILES[settings.provider]
        self.name = settings.provider
        self.model = settings.model
        self.base_url = settings.base_url or profile.default_base_url
        key = api_key(settings)
        self.max_output_tokens = settings.max_output_tokens
        self.stream = settings.stream
        self.client = openai.OpenAI(
            api_key=key or profile.placeholder_key or "none",
            base_url=self.base_url,
            timeout=settings.timeout,
            max_retries=0,
        )
        self.where = self.base_url or "api.openai.com"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(system, messages),
        }
        if self.stream:
            request["stream"] = True
            request["stream_options"] = {"include_usage": True}
        if tools:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in tools
            ]
        try:
            # Posted as it is: the SDK's per-request type transform walks every message and grows
            # with the conversation (37 ms a request after 100 steps, bench/README.md); ours are
            # built to the wire format already.
            response = self.client.post(
                "/chat/completions",
                body=request,
                cast_to=ChatCompletion,
                stream=self.stream,
                stream_cls=Stream[ChatCompletionChunk],
            )
            if self.stream:
                return _assemble(response, on_text, [t.name for t in tools])
            return _from_completion(response, on_text, [t.name for t in tools])
        except openai.OpenAIError as exc:
            raise to_provider_error(exc, openai, self.where) from exc


def to_openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for msg in messages:
        if msg.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": msg.text or None}
            calls = msg.tool_calls
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.input)},
                    }
                    for c in calls
                ]
            out.append(entry)
            continue
        texts: list[str] = []
        for block in msg.content:
            if isinstance(block, ToolResultBlock):
                out.append({"role": "tool", "tool_call_id": block.tool_call_id, "content": block.content})
            elif isinstance(block, TextBlock):
                texts.append(block.text)
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _from_completion(response: Any, on_text: TextSink | None, known_tools: list[str]) -> ModelResponse:
    """A non-streamed completion, reduced to the same pieces as a stream."""
    choice = response.choices[0]
    text = choice.message.content or ""
    if text and on_text:
        on_text(text)
    calls = {
        i: {"id": c.id or "", "name": c.function.name, "arguments": c.function.arguments or ""}
        for i, c in enumerate(choice.message.tool_calls or [])
    }
    usage = (
        Usage(response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0) if response.usage else Usage()
    )
    return _build(text, calls, choice.finish_reason, usage, known_tools)


def _assemble(stream: Any, on_text: TextSink | None, known_tools: list[str]) -> ModelResponse:
    text_parts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage = Usage()
    for chunk in stream:
        if getattr(chunk, "usage", None):
            usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None and delta.content:
                text_parts.append(delta.content)
                if on_text:
                    on_text(delta.content)
            for tc in (delta.tool_calls or []) if delta is not None else []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            if choice.finish_reason:
                finish = choice.finish_reason
    return _build("".join(text_parts), calls, finish, usage, known_tools)


def _build(
    text: str, calls: dict[int, dict[str, str]], finish: str | None, usage: Usage, known_tools: list[str]
) -> ModelResponse:
    blocks: list[TextBlock | ToolCall] = []
    for index in sorted(calls):
        slot = calls[index]
        blocks.append(ToolCall(slot["id"] or f"call_{index}", slot["name"], _parse_arguments(slot)))
    if not blocks and text:
        text, recovered = split_tool_calls(text, known_tools)
        blocks = [ToolCall(f"recovered_{i}", n, a) for i, (n, a) in enumerate(recovered)]
    if text:
        blocks.insert(0, TextBlock(text))
    stop: StopReason = "tool_use" if any(isinstance(b, ToolCall) for b in blocks) else _stop(finish)
    return ModelResponse(Message("assistant", list(blocks)), stop, usage)


def _parse_arguments(slot: dict[str, str]) -> dict[str, Any]:
    raw = slot["arguments"].strip() or "{}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        # Keep the call: the loop reports the bad arguments back to the model as an error.
        return {"__invalid_json__": raw}
    if not isinstance(value, dict):
        return {"__invalid_json__": raw}
    return value


def _stop(finish: str | None) -> StopReason:
    if finish == "length":
        return "max_tokens"
    if finish in (None, "stop"):
        return "end_turn"
    if finish == "tool_calls":
        return "tool_use"
    return "other"


__all__ = ["OpenAICompatProvider", "ProviderError", "to_openai_messages"]
