"""Provider pieces without a server: tool-call recovery, retry, the scripted model, translations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.errors import ConfigError, ProviderError
from arnes.llm.anthropic import to_anthropic_messages
from arnes.llm.base import ProviderSettings
from arnes.llm.factory import make_provider
from arnes.llm.openai_compat import to_openai_messages
from arnes.llm.retry import RetryingProvider
from arnes.llm.script import ScriptProvider
from arnes.messages import Message, TextBlock, ToolCall, ToolResultBlock, ToolSpec


class Flaky:
    name = "flaky"
    model = "m"

    def __init__(self, failures: list[ProviderError]):
        self.failures = failures
        self.calls = 0

    def complete(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def test_retry_backs_off_exponentially_and_honours_retry_after() -> None:
    waits: list[float] = []
    notices: list[int] = []
    flaky = Flaky([ProviderError("429", retryable=True), ProviderError("503", retryable=True, retry_after=0.25)])
    wrapped = RetryingProvider(flaky, sleep=waits.append, on_retry=lambda n, d, e: notices.append(n))
    assert wrapped.complete("s", [], []) == "ok"
    assert waits == [0.5, 0.25] and notices == [1, 2] and flaky.calls == 3


def test_retry_gives_up_and_says_so() -> None:
    flaky = Flaky([ProviderError("down", retryable=True) for _ in range(10)])
    wrapped = RetryingProvider(flaky, attempts=3, sleep=lambda _: None)
    with pytest.raises(ProviderError, match="gave up after 3 attempts"):
        wrapped.complete("s", [], [])
    assert flaky.calls == 3


def test_non_retryable_errors_fail_at_once() -> None:
    flaky = Flaky([ProviderError("bad key")])
    wrapped = RetryingProvider(flaky, sleep=lambda _: pytest.fail("must not wait"))
    with pytest.raises(ProviderError, match="bad key"):
        wrapped.complete("s", [], [])
    assert flaky.calls == 1


def test_script_answers_done_after_the_last_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"turns": [{"text": "hi", "tool_calls": [{"name": "Read", "input": {"file_path": "a"}}]}]})
    )
    provider = ScriptProvider.from_file(str(path))
    tools = [ToolSpec("Read", "read", {"type": "object"})]
    first = provider.complete("sys", [Message.user("x")], tools)
    assert first.stop_reason == "tool_use" and first.message.tool_calls[0].input == {"file_path": "a"}
    second = provider.complete("sys", [], tools)
    assert second.message.text == "done." and second.stop_reason == "end_turn"


def test_script_answers_summary_calls_aside_without_losing_its_place() -> None:
    provider = ScriptProvider.from_turns([{"text": "one"}, {"text": "two"}])
    tools = [ToolSpec("Read", "read", {"type": "object"})]
    assert provider.complete("s", [], tools).message.text == "one"
    assert "summarised" in provider.complete("summarise", [Message.user("transcript")], []).message.text
    assert provider.complete("s", [], tools).message.text == "two"


@pytest.mark.parametrize("content", ["not json", '{"turns": [{"texts": "x"}]}', '{"turns": 3}'])
def test_bad_scripts_are_config_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=r"s\.json"):
        ScriptProvider.from_file(str(path))


def test_unknown_provider_and_missing_script_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown provider"):
        make_provider(ProviderSettings(provider="llamas", model="x"))
    with pytest.raises(ConfigError, match="--script"):
        make_provider(ProviderSettings(provider="script", model="x"))


CONVERSATION = [
    Message.user("task"),
    Message("assistant", [TextBlock("looking"), ToolCall("c1", "Read", {"file_path": "a"})]),
    Message("user", [ToolResultBlock("c1", "contents", False)]),
]


def test_openai_translation_splits_tool_results_into_tool_messages() -> None:
    out = to_openai_messages("sys", CONVERSATION)
    assert out[0] == {"role": "system", "content": "sys"}
    assert out[2]["tool_calls"][0]["function"] == {"name": "Read", "arguments": '{"file_path": "a"}'}
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": "contents"}


def test_anthropic_translation_keeps_blocks() -> None:
    out = to_anthropic_messages(CONVERSATION)
    assert out[1]["content"][1] == {"type": "tool_use", "id": "c1", "name": "Read", "input": {"file_path": "a"}}
    assert out[2]["content"][0]["type"] == "tool_result" and out[2]["content"][0]["tool_use_id"] == "c1"


def test_messages_round_trip_through_json() -> None:
    for msg in CONVERSATION:
        assert Message.from_json(json.loads(json.dumps(msg.to_json()))) == msg


def test_request_defaults_are_a_table_per_model() -> None:
    from arnes.llm.models import defaults_for

    assert defaults_for("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF").max_output_tokens == 2048
    assert defaults_for("qwen2.5-coder:7b").temperature == 0.0
    reasoning = defaults_for("gpt-5-mini")
    assert reasoning.temperature is None and reasoning.max_tokens_key == "max_completion_tokens"
    assert defaults_for("o3").max_tokens_key == "max_completion_tokens"
    assert defaults_for("claude-sonnet-4-5").temperature is None
    assert defaults_for("some-new-model").temperature == 0.2
