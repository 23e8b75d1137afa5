"""OpenAI chat-completions wire format: OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter.

Endpoints differ only by base URL and key; the wire format is one. Tool calls that a local model
prints as JSON text are recovered into real calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any, cast

import openai
from openai import Stream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from arnes.errors import ProviderError
from arnes.llm.base import PROFILES, ProviderSettings, TextSink, api_key
from arnes.llm.recovery import call_id, cut_call, cut_in_last, parse_arguments, runaway
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


class OpenAICompatProvider:
    def __init__(self, settings: ProviderSettings):
        profile = PROFILES[settings.provider]
        self.name = settings.provider
        self.model = settings.model
        self.base_url = settings.base_url or profile.default_base_url
        key = api_key(settings)
        self.settings = settings
        self.stream = settings.stream
        self.client = openai.OpenAI(
            api_key=key or profile.placeholder_key or "none",
            base_url=self.base_url,
            timeout=openai.Timeout(settings.timeout, connect=min(settings.timeout, 30.0)),
            max_retries=0,
        )
        self.where = self.base_url or "api.openai.com"
        self._joined = joined_messages()

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        settings = self.settings
        request: dict[str, Any] = {"model": self.model, settings.max_tokens_key: settings.max_output_tokens}
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        if settings.top_p is not None:
            request["top_p"] = settings.top_p
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
        streaming = False
        try:
            # Posted as bytes we build: the SDK's per-request type transform walks every message and
            # grows with the conversation (37 ms a request after 100 steps, bench/README.md), and
            # so does encoding the whole body again; each message's bytes are kept on it instead.
            response = self.client.post(
                "/chat/completions",
                content=request_body(request, system, messages, self._joined),
                options={"headers": {"Content-Type": "application/json"}},
                cast_to=ChatCompletion,
                stream=self.stream,
                stream_cls=Stream[ChatCompletionChunk],
            )
            names = [t.name for t in tools] if settings.text_calls else []  # whose printed calls to watch for
            if not self.stream:
                return _from_completion(response, on_text, names, settings.max_output_tokens)
            streaming = True
            http = cast(Stream[ChatCompletionChunk], response).response
            shorten_read_timeout(http, settings.read_timeout)
            try:
                return _assemble(_chunks(http), on_text, names, settings.max_output_tokens)
            finally:
                http.close()
        except openai.OpenAIError as exc:
            raise to_provider_error(
                exc,
                openai,
                self.where,
                streaming=streaming,
                timeout=settings.timeout,
                read_timeout=settings.read_timeout,
            ) from exc
        except Exception as exc:  # the HTTP library's own errors while the stream is read
            if streaming and is_transport_error(exc):
                raise mid_stream_error(exc, self.where, settings.read_timeout) from exc
            raise


def joined_messages() -> Appended[bytes]:
    """The messages' bytes joined with commas, extended as the conversation grows (kept per provider)."""
    return Appended(b"", lambda done, new: b",".join([p for p in (done, *map(_message_bytes_memo, new)) if p]))


def request_body(
    request: dict[str, Any], system: str, messages: Sequence[Message], joined: Appended[bytes] | None = None
) -> bytes:
    """The JSON body: the settings, then the messages, each encoded once in its life."""
    head = json.dumps(request, ensure_ascii=False, separators=(",", ":"))[:-1].encode()
    parts = [_encode({"role": "system", "content": system}), (joined or joined_messages())(messages)]
    return head + b',"messages":[' + b",".join(p for p in parts if p) + b"]}"


def _message_bytes_memo(message: Message) -> bytes:
    return message.memo("openai-bytes", partial(_message_bytes, message))


def _message_bytes(message: Message) -> bytes:
    return b",".join(map(_encode, _wire(message)))


def _encode(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()


def _chunks(http: Any) -> Iterator[dict[str, Any]]:
    """The stream's chunks as plain dicts, read to the end of the body.

    Reading past `[DONE]` to the body's end is what lets the HTTP client put the connection back in
    its pool (the SDK's stream stops at `[DONE]` and closes it: a new TCP/TLS handshake every turn).
    Plain dicts, not one pydantic object per chunk: a reply has hundreds of chunks.
    """
    lines = http.iter_lines()
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data.startswith("[DONE]"):
            for _ in lines:  # the rest of the body (the chunked terminator)
                pass
            return
        chunk = json.loads(data)
        if isinstance(chunk, dict) and chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise openai.APIError(message or "An error occurred during streaming", http.request, body=error)
        if isinstance(chunk, dict):
            yield chunk


def to_openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for msg in messages:
        out += _wire(msg)
    return out


def _wire(msg: Message) -> list[dict[str, Any]]:
    """One of our messages as chat entries: an assistant turn is one, a user turn one per result plus its text."""
    if msg.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": msg.text or None}
        calls = msg.tool_calls
        if calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.input)}}
                for c in calls
            ]
        return [entry]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in msg.content:
        if isinstance(block, ToolResultBlock):
            out.append({"role": "tool", "tool_call_id": block.tool_call_id, "content": block.content})
        elif isinstance(block, TextBlock):
            texts.append(block.text)
    if texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _from_completion(response: Any, on_text: TextSink | None, known_tools: list[str], cap: int) -> ModelResponse:
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
    return _build(text, calls, choice.finish_reason, usage, known_tools, cap)


RUNAWAY_CHECK = 200  # characters of streamed text between two looks for a call the model ran past


def _assemble(
    chunks: Iterator[dict[str, Any]], on_text: TextSink | None, known_tools: list[str], cap: int
) -> ModelResponse:
    text_parts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage = Usage()
    size, checked = 0, 0
    for chunk in chunks:
        if isinstance(chunk.get("usage"), dict):
            usage = Usage(chunk["usage"].get("prompt_tokens") or 0, chunk["usage"].get("completion_tokens") or 0)
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text_parts.append(delta["content"])
                size += len(delta["content"])
                if on_text:
                    on_text(delta["content"])
                if known_tools and not calls and size - checked >= RUNAWAY_CHECK:
                    # A model that goes on after its call is writing the tool's result itself:
                    # stop reading (closing the stream stops the server) and keep the call.
                    checked = size
                    text = "".join(text_parts)
                    end = runaway(text, known_tools)
                    if end is not None:
                        return _build(text[:end], calls, "stop", Usage(0, size // 4), known_tools, cap)
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(tc.get("index") or 0, {"id": "", "name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                function = tc.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    return _build("".join(text_parts), calls, finish, usage, known_tools, cap)


def _build(
    text: str, calls: dict[int, dict[str, str]], finish: str | None, usage: Usage, known_tools: list[str], cap: int
) -> ModelResponse:
    """One neutral turn of native calls (calls printed as text: llm/recovering.py, by profile)."""
    tool_calls = [
        ToolCall(calls[i]["id"] or call_id(), calls[i]["name"], _parse_arguments(calls[i])) for i in sorted(calls)
    ]
    if finish == "length" and tool_calls and cut_in_last(tool_calls, False):
        tool_calls[-1] = cut_call(tool_calls[-1], cap)  # cut by the output cap or the context's end
    blocks: list[TextBlock | ToolCall] = [TextBlock(text)] if text else []
    blocks += tool_calls
    stop: StopReason = _stop(finish)
    if stop != "max_tokens" and tool_calls:
        stop = "tool_use"
    return ModelResponse(Message("assistant", list(blocks)), stop, usage)


def _parse_arguments(slot: dict[str, str]) -> dict[str, Any]:
    """Native arguments, with the same repairs as text calls (raw newlines, Python's triple quotes)."""
    return parse_arguments(slot["arguments"])


def _stop(finish: str | None) -> StopReason:
    if finish == "length":
        return "max_tokens"
    if finish in (None, "stop"):
        return "end_turn"
    if finish == "tool_calls":
        return "tool_use"
    return "other"


__all__ = ["OpenAICompatProvider", "ProviderError", "to_openai_messages"]
