"""Claude Code's `--fallback-model` with the real `arnes` against a real HTTP server: a model that
stays overloaded after its retries hands the run to the fallback (said, and counted as the
fallback's), and nothing else does (llm/fallback.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test"}


def args(api: str, server: FakeLLMServer, ws: Path) -> list[str]:
    base = server.url + "/v1" if api == "openai" else server.url
    return ["-p", "--provider", api, "--base-url", base, "--model", "big-model", "-w", str(ws)]


def models(server: FakeLLMServer) -> list[str]:
    return [body.get("model", "") for _, body in server.requests]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_an_overloaded_model_hands_the_run_to_the_fallback(tmp_path: Path, api: str) -> None:
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([{"text": "answered by the fallback"}], fail_first=4, fail_status=529) as server:
        run = run_arnes(
            *args(api, server, tmp_path), "--fallback-model", "small-model", "--trace", str(trace),
            "--output-format", "json", "hi", env=KEYS,
        )  # fmt: skip
        asked = models(server)
    assert run.code == 0, run.err
    assert asked == ["big-model"] * 4 + ["small-model"]  # every retry of the main model first, then once
    result = json.loads(run.out)
    assert result["result"] == "answered by the fallback" and not result["is_error"]
    assert "small-model" in result["modelUsage"]
    said = "big-model is overloaded"
    assert said in run.err and "going on with small-model (--fallback-model)" in run.err
    assert any(e["event"] == "notice" and said in e["message"] for e in read_trace(trace))


def test_a_refused_request_is_not_handed_over(tmp_path: Path) -> None:
    """A 400 is the request's fault, not the model's load: the fallback would be refused too."""
    with FakeLLMServer([{"text": "never"}], fail_first=10, fail_status=400) as server:
        run = run_arnes(*args("anthropic", server, tmp_path), "--fallback-model", "small-model", "hi", env=KEYS)
        asked = models(server)
    assert run.code == 1
    assert "small-model" not in asked and "fallback" not in run.out + run.err


def test_the_fallback_fails_too_and_the_run_says_so(tmp_path: Path) -> None:
    with FakeLLMServer([{"text": "never"}], fail_first=50, fail_status=503) as server:
        run = run_arnes(*args("anthropic", server, tmp_path), "--fallback-model", "small-model", "hi", env=KEYS)
        asked = models(server)
    assert run.code == 1
    assert asked == ["big-model"] * 4 + ["small-model"] * 4  # one hand-over, never back and forth
    said = run.out + run.err
    assert "503" in said and "gave up after 4 attempts" in said and "going on with small-model" in said


def test_the_main_model_as_its_own_fallback_is_one_clear_line(tmp_path: Path) -> None:
    with FakeLLMServer([{"text": "never"}]) as server:
        run = run_arnes(*args("anthropic", server, tmp_path), "--fallback-model", "big-model", "hi", env=KEYS)
    assert run.code == 2
    assert "--fallback-model big-model: that is the main model; name another one" in run.err
    assert "Traceback" not in run.err
