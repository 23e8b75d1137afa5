"""Provider adapters against the real local server: text streams in pieces, time-outs are retried."""

from __future__ import annotations

import time
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


def provider(api: str, server: FakeLLMServer, timeout: float = 30.0) -> Any:
    if api == "openai":
        return OpenAICompatProvider(
            ProviderSettings("openai", "m", base_url=server.url + "/v1", api_key="x", timeout=timeout)
        )
    return AnthropicProvider(ProviderSettings("anthropic", "m", base_url=server.url, api_key="x", timeout=timeout))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_text_arrives_in_pieces_as_it_is_generated(api: str) -> None:
    pieces: list[str] = []
    with FakeLLMServer([{"text": TEXT}]) as server:
        response = provider(api, server).complete("sys", [Message.user("hi")], [], on_text=pieces.append)
    assert len(pieces) >= 3 and "".join(pieces) == TEXT == response.message.text


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_time_out_is_retried_then_succeeds(api: str) -> None:
    calls: list[float] = []

    def slow_first(_: str, __: dict[str, Any]) -> dict[str, Any]:
        calls.append(time.monotonic())
        if len(calls) == 1:
            time.sleep(2.0)  # longer than the client's time-out
        return {"text": "in time"}

    waits: list[float] = []
    with FakeLLMServer([], responder=slow_first) as server:
        retrying = RetryingProvider(provider(api, server, timeout=0.5), sleep=waits.append)
        response = retrying.complete("sys", [Message.user("hi")], [])
    assert response.message.text == "in time" and len(calls) == 2 and len(waits) == 1


def test_time_outs_that_persist_are_reported() -> None:
    def always_slow(_: str, __: dict[str, Any]) -> dict[str, Any]:
        time.sleep(1.5)
        return {"text": "late"}

    with FakeLLMServer([], responder=always_slow) as server:
        retrying = RetryingProvider(provider("openai", server, timeout=0.3), attempts=2, sleep=lambda _: None)
        with pytest.raises(ProviderError, match=r"timed out.*gave up after 2 attempts"):
            retrying.complete("sys", [Message.user("hi")], [])
