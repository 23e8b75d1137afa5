"""Provider adapters against the real local server: text streams in pieces; time-outs are told apart."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from arnes.errors import ProviderError
from arnes.llm.anthropic import AnthropicProvider
from arnes.llm.base import ProviderSettings
from arnes.llm.openai_compat import OpenAICompatProvider
from arnes.llm.retry import RetryingProvider
from arnes.messages import Message
from tests.fakes.llm_server import FakeLLMServer

TEXT = "The discount now lives in one constant, DISCOUNT_RATE, set to fifteen percent."


def provider(api: str, server: FakeLLMServer, timeout: float = 30.0, read_timeout: float = 30.0) -> Any:
    times = {"timeout": timeout, "read_timeout": read_timeout}
    if api == "openai":
        return OpenAICompatProvider(ProviderSettings("openai", "m", base_url=server.url + "/v1", api_key="x", **times))
    return AnthropicProvider(ProviderSettings("anthropic", "m", base_url=server.url, api_key="x", **times))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_text_arrives_in_pieces_as_it_is_generated(api: str) -> None:
    pieces: list[str] = []
    with FakeLLMServer([{"text": TEXT}]) as server:
        response = provider(api, server).complete("sys", [Message.user("hi")], [], on_text=pieces.append)
    assert len(pieces) >= 3 and "".join(pieces) == TEXT == response.message.text


@pytest.mark.parametrize("api", ["openai", "anthropic"])
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


@pytest.mark.parametrize("api", ["openai", "anthropic"])
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
