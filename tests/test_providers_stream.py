"""Provider adapters against the real local server: text streams in pieces; time-outs are told apart."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from arnes.errors import ContextExceeded, ProviderError
from arnes.llm.anthropic import AnthropicProvider
from arnes.llm.base import ProviderSettings
from arnes.llm.ollama import OllamaProvider
from arnes.llm.openai_compat import OpenAICompatProvider
from arnes.llm.recovery import REASON, UNREADABLE
from arnes.llm.retry import RetryingProvider
from arnes.llm.window import ServerWindow, probe_window
from arnes.messages import Message, ToolSpec
from tests.fakes.llm_server import FakeLLMServer

TEXT = "The discount now lives in one constant, DISCOUNT_RATE, set to fifteen percent."


def provider(api: str, server: FakeLLMServer, timeout: float = 30.0, read_timeout: float = 30.0) -> Any:
    times = {"timeout": timeout, "read_timeout": read_timeout}
    if api == "openai":
        return OpenAICompatProvider(ProviderSettings("openai", "m", base_url=server.url + "/v1", api_key="x", **times))
    if api == "ollama":
        return OllamaProvider(ProviderSettings("ollama", "m", base_url=server.url, **times))
    return AnthropicProvider(ProviderSettings("anthropic", "m", base_url=server.url, api_key="x", **times))


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
def test_text_arrives_in_pieces_as_it_is_generated(api: str) -> None:
    pieces: list[str] = []
    with FakeLLMServer([{"text": TEXT}]) as server:
        response = provider(api, server).complete("sys", [Message.user("hi")], [], on_text=pieces.append)
    assert len(pieces) >= 3 and "".join(pieces) == TEXT == response.message.text


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
def test_no_first_byte_in_time_is_reported_once_not_retried(api: str) -> None:
    """A CPU still reading a long prompt: starting the generation again 4 times helps nobody."""
    stall = threading.Event()
    waits: list[float] = []
    with FakeLLMServer([{"text": "late"}], stall=stall) as server:
        try:
            retrying = RetryingProvider(provider(api, server, timeout=0.3), sleep=waits.append)
            with pytest.raises(ProviderError, match=r"no answer from the model .* within 0.3 s .*--timeout") as err:
                retrying.complete("sys", [Message.user("hi")], [])
        finally:
            stall.set()
        assert len(server.requests) == 1 and waits == [] and not err.value.unreachable


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
def test_a_stall_in_the_middle_of_a_reply_is_the_read_time_out(api: str) -> None:
    """The first byte may take minutes (timeout); once streaming, a chunk must follow (read_timeout)."""
    stall = threading.Event()
    with FakeLLMServer([{"text": TEXT}], stall=stall, stall_at="mid_stream") as server:
        try:
            slow = provider(api, server, timeout=30.0, read_timeout=0.3)
            with pytest.raises(ProviderError, match=r"stopped sending for 0\.3 s in the middle of its reply"):
                RetryingProvider(slow, sleep=lambda _: None).complete("sys", [Message.user("hi")], [])
        finally:
            stall.set()
        assert len(server.requests) == 1


def test_a_refused_connection_is_retried_and_called_unreachable() -> None:
    with FakeLLMServer([]) as server:
        url = server.url
    dead = OpenAICompatProvider(ProviderSettings("openai", "m", base_url=url + "/v1", api_key="x", timeout=5))
    waits: list[float] = []
    with pytest.raises(ProviderError, match=r"could not connect.*gave up after 2 attempts") as err:
        RetryingProvider(dead, attempts=2, sleep=waits.append).complete("sys", [Message.user("hi")], [])
    assert err.value.unreachable and len(waits) == 1


CONTEXT_REFUSALS = {  # what each server says when the request is longer than its window
    "llama.cpp": (
        "openai",
        {"error": {"code": 400, "message": "request (5048 tokens) exceeds the available context size "
                   "(2048 tokens), try increasing it", "type": "exceed_context_size_error", "n_ctx": 2048}},
        2048,
    ),
    "openai": (
        "openai",
        {"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages "
                   "resulted in 9000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}},
        8192,
    ),
    "anthropic": (
        "anthropic",
        {"type": "error", "error": {"type": "invalid_request_error",
                                    "message": "prompt is too long: 215000 tokens > 200000 maximum"}},
        200000,
    ),
}  # fmt: skip


@pytest.mark.parametrize("server_kind", CONTEXT_REFUSALS)
def test_a_context_refusal_is_recognised_with_the_servers_window(server_kind: str) -> None:
    api, body, window = CONTEXT_REFUSALS[server_kind]
    with FakeLLMServer([{"error": {"status": 400, "body": body}}]) as server:
        with pytest.raises(ContextExceeded) as err:
            RetryingProvider(provider(api, server)).complete("sys", [Message.user("hi")], [])
        assert len(server.requests) == 1
    assert err.value.window == window and not err.value.retryable


def test_an_ordinary_400_is_not_a_context_refusal() -> None:
    body = {"error": {"message": "tools[0].function.name is required", "type": "invalid_request_error"}}
    with FakeLLMServer([{"error": {"status": 400, "body": body}}]) as server, pytest.raises(ProviderError) as err:
        provider("openai", server).complete("sys", [Message.user("hi")], [])
    assert not isinstance(err.value, ContextExceeded) and "HTTP 400" in str(err.value)


@pytest.mark.parametrize(
    "answer,window",
    [
        ({"default_generation_settings": {"n_ctx": 4096}}, ServerWindow(4096, "server /props")),
        ({"n_ctx": 8192}, ServerWindow(8192, "server /props")),
        ({"total_slots": 1}, None),
    ],
)
def test_llama_cpp_props_give_the_window(answer: dict[str, Any], window: ServerWindow | None) -> None:
    with FakeLLMServer([], props=answer) as server:
        assert probe_window("openai", server.url + "/v1", "m", 128_000) == window


def test_ollama_show_gives_num_ctx_or_the_trained_length_capped() -> None:
    with FakeLLMServer([], show={"parameters": "num_ctx 16384\nstop <|im_end|>", "model_info": {}}) as server:
        assert probe_window("ollama", server.url, "m", 8192) == ServerWindow(16384, "server /api/show num_ctx")
    with FakeLLMServer([], show={"model_info": {"llama.context_length": 4096}}) as server:
        assert probe_window("ollama", server.url + "/v1/", "m", 8192) == ServerWindow(4096, "server /api/show")
    with FakeLLMServer([]) as server:  # the model is not there: the profile decides
        assert probe_window("ollama", server.url, "missing", 8192) is None
    assert probe_window("openai", None, "gpt-4o", 128_000) is None  # the cloud is not asked


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
def test_a_call_in_a_reply_cut_at_the_cap_does_not_run(api: str) -> None:
    turn = {"tool_calls": [{"name": "Write", "input": {"file_path": "a.py", "content": "x"}}], "finish": "length"}
    spec = ToolSpec("Write", "write", {"type": "object"})
    with FakeLLMServer([turn]) as server:
        response = provider(api, server).complete("sys", [Message.user("hi")], [spec])
    call = response.message.tool_calls[0]
    assert response.stop_reason == "max_tokens"
    assert UNREADABLE in call.input and "cut off at the output limit" in call.input[REASON]


def test_ollama_without_streaming_answers_in_one_object() -> None:
    with FakeLLMServer([{"text": TEXT}]) as server:
        chosen = OllamaProvider(ProviderSettings("ollama", "m", base_url=server.url, stream=False, context_window=4096))
        response = chosen.complete("sys", [Message.user("hi")], [])
        body = server.requests[0][1]
    assert response.message.text == TEXT and response.usage.output_tokens > 0
    assert body["stream"] is False and body["options"]["num_ctx"] == 4096


@pytest.mark.parametrize("api", ["openai", "anthropic"])  # Ollama's native client opens one per request
def test_streamed_turns_reuse_one_connection(api: str) -> None:
    """Each turn on a new connection is a TCP (and, remotely, a TLS) handshake per turn: read to the end, keep it."""
    turns = [{"text": TEXT}, {"tool_calls": [{"name": "Read", "input": {"file_path": "a"}}]}, {"text": "ok"}] * 2
    specs = [ToolSpec("Read", "read a file", {"type": "object", "properties": {"file_path": {"type": "string"}}})]
    with FakeLLMServer(turns) as server:
        llm = provider(api, server)
        history = [Message.user("hi")]
        for _ in turns:
            reply = llm.complete("sys", history, specs).message
            history += [reply, Message.user("go on")]
    assert len(server.requests) == len(turns)
    assert server.connections == 1, f"{server.connections} connections for {len(turns)} streamed turns"
