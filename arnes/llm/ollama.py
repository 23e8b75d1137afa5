"""Ollama's native chat API (`POST /api/chat`), so the context window is the one arnes planned for.

Ollama's OpenAI endpoint ignores `num_ctx`: a prompt longer than the server's default window
(2k-4k tokens) is cut silently from the front, and the tool definitions go first. The native
API takes `options.num_ctx`; it is the same on every request of a session, because a change
reloads the model. Stdlib HTTP only: no SDK to import, and the socket's time-out can be switched
from the first-byte wait to the between-chunks wait once the headers are in.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from arnes.errors import ProviderError
from arnes.llm.base import PROFILES, ProviderSettings, TextSink
from arnes.llm.recovery import call_id, cut_call, cut_in_last
from arnes.llm.sdk_errors import first_byte_timeout, mid_stream_error
from arnes.llm.window import server_root
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
from arnes.nesting import json_loads

RETRYABLE_STATUS = {429, 500, 502, 503, 504}


class OllamaProvider:
    def __init__(self, settings: ProviderSettings):
        self.name = settings.provider
        self.model = settings.model
        self.settings = settings
        self.root = server_root(settings.base_url or PROFILES["ollama"].default_base_url or "http://localhost:11434")
        self.where = self.root
        self.max_output_tokens = settings.max_output_tokens

    def options(self) -> dict[str, Any]:
        """Fixed for the session: a different num_ctx would make Ollama reload the model."""
        s = self.settings
        options: dict[str, Any] = {"num_predict": s.max_output_tokens}
        if s.context_window:
            options["num_ctx"] = s.context_window
        if s.temperature is not None:
            options["temperature"] = s.temperature
        if s.top_p is not None:
            options["top_p"] = s.top_p
        return options

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_ollama_messages(system, messages),
            "stream": self.settings.stream,
            "options": self.options(),
        }
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in tools
            ]
        text: list[str] = []
        calls: list[ToolCall] = []
        done: dict[str, Any] = {}
        for chunk in self._post(body):
            if isinstance(chunk.get("error"), str):
                raise ProviderError(f"the model at {self.where} failed in the middle of its reply: {chunk['error']}")
            message = chunk.get("message") or {}
            piece = message.get("content") or ""
            if piece:
                text.append(piece)
                if on_text:
                    on_text(piece)
            for raw in message.get("tool_calls") or []:
                function = raw.get("function") or {}
                args = function.get("arguments")
                calls.append(
                    ToolCall(
                        str(raw.get("id") or call_id()),
                        str(function.get("name") or ""),
                        args if isinstance(args, dict) else {"__invalid_json__": json.dumps(args)},
                    )
                )
            if chunk.get("done"):
                done = chunk
        return self._build("".join(text), calls, done, [t.name for t in tools])

    def _build(self, text: str, calls: list[ToolCall], done: dict[str, Any], names: list[str]) -> ModelResponse:
        reason = done.get("done_reason")
        stop: StopReason = "max_tokens" if reason == "length" else "tool_use" if calls else "end_turn"
        if stop == "max_tokens" and calls and cut_in_last(calls, False):
            calls[-1] = cut_call(calls[-1], self.max_output_tokens)
        blocks: list[TextBlock | ToolCall] = [TextBlock(text)] if text else []
        blocks += calls
        usage = Usage(int(done.get("prompt_eval_count") or 0), int(done.get("eval_count") or 0))
        return ModelResponse(Message("assistant", list(blocks)), stop, usage)

    def _post(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """POST /api/chat; yield each JSON line. Time-outs: connect 30 s, first byte, then between lines."""
        s = self.settings
        url = urlsplit(self.root)
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        conn = kind(url.hostname or "localhost", url.port, timeout=min(s.timeout, 30.0))
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise ProviderError(
                    f"could not connect to the model at {self.where}", retryable=True, unreachable=True
                ) from exc
            if conn.sock is not None:
                conn.sock.settimeout(s.timeout)
            try:
                conn.request("POST", f"{url.path}/api/chat", json.dumps(body), {"content-type": "application/json"})
                response = conn.getresponse()
            except TimeoutError as exc:
                raise first_byte_timeout(self.where, s.timeout) from exc
            except OSError as exc:
                raise ProviderError(f"the model at {self.where} failed: {exc}", retryable=True) from exc
            if response.status != 200:
                raise self._status_error(response.status, response.read(100_000))
            if conn.sock is not None:
                conn.sock.settimeout(s.read_timeout)
            try:
                for line in response:
                    if line.strip():
                        yield json_loads(line)
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise mid_stream_error(exc, self.where, s.read_timeout) from exc
            except ValueError as exc:
                raise ProviderError(f"the model at {self.where} sent a line that is not JSON: {exc}") from exc
        finally:
            conn.close()

    def _status_error(self, status: int, raw: bytes) -> ProviderError:
        try:
            detail = str(json_loads(raw).get("error") or raw.decode(errors="replace"))
        except (ValueError, AttributeError):
            detail = raw.decode(errors="replace")[:500]
        hint = f" Pull it first: ollama pull {self.model}" if status == 404 else ""
        return ProviderError(
            f"the model at {self.where} refused the request (HTTP {status}): {detail}.{hint}",
            retryable=status in RETRYABLE_STATUS,
        )


def to_ollama_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    names: dict[str, str] = {}  # call id -> tool name: Ollama files a result under the tool's name
    for msg in messages:
        if msg.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": msg.text}
            if msg.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "function": {"name": c.name, "arguments": c.input}} for c in msg.tool_calls
                ]
                names.update({c.id: c.name for c in msg.tool_calls})
            out.append(entry)
            continue
        texts: list[str] = []
        for block in msg.content:
            if isinstance(block, ToolResultBlock):
                result = {"role": "tool", "content": block.content, "tool_call_id": block.tool_call_id}
                out.append(result | {"tool_name": names.get(block.tool_call_id, "")})
            elif isinstance(block, TextBlock):
                texts.append(block.text)
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out
