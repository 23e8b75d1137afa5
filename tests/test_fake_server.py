"""Self-test of the fake LLM server against the real openai and anthropic SDKs."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.fakes.llm_server import FakeLLMServer

READ = {"name": "Read", "input": {"file_path": "a.py"}}
MSGS: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture
def script() -> Iterator[FakeLLMServer]:
    with FakeLLMServer([{"text": "Hello there, world!"}, {"text": "Reading.", "tool_calls": [READ]}]) as srv:
        yield srv


def oai(srv: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="test", base_url=srv.url + "/v1", max_retries=0)


def ant(srv: FakeLLMServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", base_url=srv.url, max_retries=0)


def test_openai_non_streaming(script: FakeLLMServer) -> None:
    c = oai(script)
    r = c.chat.completions.create(model="m", messages=MSGS)
    assert r.choices[0].message.content == "Hello there, world!"
    assert r.choices[0].finish_reason == "stop"
    assert r.usage is not None and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    r = c.chat.completions.create(model="m", messages=MSGS)
    assert r.choices[0].finish_reason == "tool_calls"
    tcs = r.choices[0].message.tool_calls or []
    assert len(tcs) == 1 and tcs[0].type == "function" and tcs[0].id.startswith("call_")
    assert tcs[0].function.name == "Read" and json.loads(tcs[0].function.arguments) == READ["input"]
    r = c.chat.completions.create(model="m", messages=MSGS)
    assert r.choices[0].message.content == "done." and not r.choices[0].message.tool_calls
    assert [p for p, _ in script.requests] == ["/v1/chat/completions"] * 3
    assert script.requests[0][1]["messages"] == MSGS and script.requests[0][1]["model"] == "m"


def test_openai_streaming(script: FakeLLMServer) -> None:
    c = oai(script)
    chunks = list(
        c.chat.completions.create(
            model="m",
            messages=MSGS,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == "Hello there, world!"
    assert sum(1 for ch in chunks if ch.choices and ch.choices[0].delta.content) > 1
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "stop"

    args: dict[int, str] = {}
    names: dict[int, str] = {}
    finish = None
    text = ""
    for ch in c.chat.completions.create(model="m", messages=MSGS, stream=True):
        assert ch.usage is None
        d = ch.choices[0].delta
        text += d.content or ""
        finish = ch.choices[0].finish_reason or finish
        for tc in d.tool_calls or []:
            if tc.function and tc.function.name:
                names[tc.index] = tc.function.name
            args[tc.index] = args.get(tc.index, "") + ((tc.function and tc.function.arguments) or "")
    assert text == "Reading." and finish == "tool_calls"
    assert names == {0: "Read"} and json.loads(args[0]) == READ["input"]


def test_anthropic_non_streaming(script: FakeLLMServer) -> None:
    c = ant(script)
    m = c.messages.create(model="m", max_tokens=100, messages=MSGS)
    assert m.stop_reason == "end_turn" and m.content[0].type == "text" and m.content[0].text == "Hello there, world!"
    assert m.usage.input_tokens > 0 and m.usage.output_tokens > 0
    m = c.messages.create(model="m", max_tokens=100, messages=MSGS)
    assert m.stop_reason == "tool_use" and [b.type for b in m.content] == [
        "text",
        "tool_use",
    ]
    tu = m.content[1]
    assert tu.type == "tool_use" and tu.id.startswith("toolu_01") and tu.name == "Read" and tu.input == READ["input"]
    m = c.messages.create(model="m", max_tokens=100, messages=MSGS)
    assert m.content[0].type == "text" and m.content[0].text == "done."
    assert [p for p, _ in script.requests] == ["/v1/messages"] * 3


def test_anthropic_streaming(script: FakeLLMServer) -> None:
    c = ant(script)
    with c.messages.stream(model="m", max_tokens=100, messages=MSGS) as s:
        deltas = list(s.text_stream)
        m = s.get_final_message()
    assert "".join(deltas) == "Hello there, world!" and len(deltas) > 1
    assert m.stop_reason == "end_turn" and m.usage.input_tokens > 0 and m.usage.output_tokens > 1
    with c.messages.stream(model="m", max_tokens=100, messages=MSGS) as s:
        m = s.get_final_message()
    assert m.stop_reason == "tool_use"
    tu = m.content[1]
    assert tu.type == "tool_use" and tu.name == "Read" and tu.input == READ["input"]


def test_anthropic_stream_tool_only_and_hangup() -> None:
    with FakeLLMServer([{"tool_calls": [READ, READ]}, {"text": "x" * 50}]) as srv:
        with ant(srv).messages.stream(model="m", max_tokens=10, messages=MSGS) as s:
            m = s.get_final_message()
        assert [b.type for b in m.content] == ["tool_use", "tool_use"]
        assert m.content[0].type == "tool_use" and m.content[0].input == READ["input"]
        assert len({b.id for b in m.content if b.type == "tool_use"}) == 2
        with ant(srv).messages.stream(model="m", max_tokens=10, messages=MSGS) as s:
            next(iter(s.text_stream))  # abandon the stream half-way
        assert ant(srv).messages.create(model="m", max_tokens=10, messages=MSGS)


def test_shared_counter_and_input_tokens() -> None:
    with FakeLLMServer([{"text": "one"}, {"text": "two"}], input_tokens=lambda b: 1000) as srv:
        a = ant(srv).messages.create(model="m", max_tokens=10, messages=MSGS)
        o = oai(srv).chat.completions.create(model="m", messages=MSGS)
    assert a.content[0].type == "text" and a.content[0].text == "one" and a.usage.input_tokens == 1000
    assert o.choices[0].message.content == "two" and o.usage is not None and o.usage.prompt_tokens == 1000


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_fail_first(api: str) -> None:
    with FakeLLMServer([{"text": "ok"}], fail_first=2) as srv:
        for _ in range(2):
            if api == "openai":
                with pytest.raises(openai.RateLimitError) as oe:
                    oai(srv).chat.completions.create(model="m", messages=MSGS)
                assert oe.value.status_code == 429 and oe.value.response.headers["retry-after"] == "0"
            else:
                with pytest.raises(anthropic.RateLimitError) as ae:
                    ant(srv).messages.create(model="m", max_tokens=10, messages=MSGS)
                assert ae.value.status_code == 429 and "rate_limit_error" in str(ae.value.body)
        if api == "openai":
            assert oai(srv).chat.completions.create(model="m", messages=MSGS).choices[0].message.content == "ok"
        else:
            m = ant(srv).messages.create(model="m", max_tokens=10, messages=MSGS)
            assert m.content[0].type == "text" and m.content[0].text == "ok"
        assert len(srv.requests) == 3


def test_fail_status_and_sdk_retry() -> None:
    srv = FakeLLMServer([{"text": "ok"}], fail_first=1, fail_status=529)
    with srv, pytest.raises(anthropic.InternalServerError):
        ant(srv).messages.create(model="m", max_tokens=10, messages=MSGS)
    with FakeLLMServer([{"text": "ok"}], fail_first=1) as srv:  # retry-after-ms: 1 makes SDK retries instant
        c = openai.OpenAI(api_key="test", base_url=srv.url + "/v1", max_retries=1)
        assert c.chat.completions.create(model="m", messages=MSGS).choices[0].message.content == "ok"


def test_text_tool_calls() -> None:
    calls = [READ, {"name": "Bash", "input": {"command": "ls"}}]
    with FakeLLMServer([{"tool_calls": calls}, {"tool_calls": [READ]}], text_tool_calls=True) as srv:
        r = oai(srv).chat.completions.create(model="m", messages=MSGS)
        ch = r.choices[0]
        assert ch.finish_reason == "stop" and not ch.message.tool_calls
        lines = (ch.message.content or "").splitlines()
        assert [json.loads(x) for x in lines] == [{"name": c["name"], "arguments": c["input"]} for c in calls]
        chunks = list(oai(srv).chat.completions.create(model="m", messages=MSGS, stream=True))
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        assert json.loads(text) == {"name": "Read", "arguments": READ["input"]}
        assert not any(c.choices[0].delta.tool_calls for c in chunks)


def test_responder_and_models() -> None:
    seen: list[str] = []

    def responder(api: str, body: dict[str, Any]) -> dict[str, Any]:
        seen.append(api)
        return {"text": f"{api}:{body['model']}"}

    with FakeLLMServer([], responder=responder) as srv:
        assert oai(srv).chat.completions.create(model="x", messages=MSGS).choices[0].message.content == "openai:x"
        m = ant(srv).messages.create(model="y", max_tokens=10, messages=MSGS)
        assert m.content[0].type == "text" and m.content[0].text == "anthropic:y"
        assert [x.id for x in oai(srv).models.list()] == [
            "fake-model",
            "fake-model-large",
        ]
    assert seen == ["openai", "anthropic"]


def test_subprocess_echo_loop(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "from file"}]))
    server = Path(__file__).parent / "fakes" / "llm_server.py"
    for args in (["--script", str(script)], ["--echo-loop", "1"]):
        proc = subprocess.Popen([sys.executable, str(server), *args], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            with urllib.request.urlopen(url + "/v1/models", timeout=5) as resp:
                assert json.load(resp)["data"]
            c = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
            r = c.chat.completions.create(model="m", messages=MSGS)
            if args[0] == "--script":
                assert r.choices[0].message.content == "from file"
                continue
            assert (r.choices[0].message.tool_calls or [])[0].function.name == "Read"  # type: ignore[union-attr]
            tool_msg: Any = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
            r = c.chat.completions.create(model="m", messages=[*MSGS, tool_msg])
            assert r.choices[0].message.content == "done."
        finally:
            proc.terminate()
            proc.wait(timeout=5)
