"""One short task against a real model server: the protocol end to end, with no script in the loop.

Every other test talks to a scripted model or the fake server, which speak the wire exactly as the
code expects. This one runs only when ARNES_REAL_MODEL_URL is set to an OpenAI-compatible base URL
(ending in /v1), e.g. the llama-server that `python bench/realmodel/run.py serve` starts; CI never
sets it, so the suite needs no model. ARNES_REAL_MODEL_NAME names the model (default: the first one
the server lists at /v1/models).

    ARNES_REAL_MODEL_URL=http://127.0.0.1:8088/v1 pytest -q -m realmodel tests/test_realmodel.py

What a small model writes varies from run to run; what is checked is what arnes owes whatever the
model writes: its tool call reached a tool and got a result, the trace is complete (every request
answered, every call resulted, a session end), and usage was counted.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_arnes

URL = os.environ.get("ARNES_REAL_MODEL_URL", "")

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not URL, reason="set ARNES_REAL_MODEL_URL to an OpenAI-compatible /v1 URL to run"),
]


def model_name() -> str:
    name = os.environ.get("ARNES_REAL_MODEL_NAME")
    if name:
        return name
    with urllib.request.urlopen(URL.rstrip("/") + "/models", timeout=30) as r:
        models = json.loads(r.read())["data"]
    return str(models[0]["id"])


def events(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_real_model_call_reaches_a_tool_and_the_trace_is_complete(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    trace = tmp_path / "trace.jsonl"
    run = run_arnes(
        "--provider", "openai", "--base-url", URL, "--model", model_name(), "-w", str(ws),
        "--permission-mode", "acceptEdits", "--max-turns", "6", "--output-format", "json", "--trace", str(trace),
        "--", "Use the Write tool to create the file hello.txt whose whole content is: hi",
        env={"OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "none")}, timeout=900,
    )  # fmt: skip
    assert run.code in (0, 3), run.err
    out = json.loads(run.out)
    log = events(trace)
    kinds = [e["event"] for e in log]
    assert kinds[0] == "session_start" and kinds[-1] == "session_end", kinds

    # A tool call reached a tool: a call the model made (native or recovered from its text) has a result.
    calls = {e["id"]: e for e in log if e["event"] == "tool_call"}
    results = {e["id"]: e for e in log if e["event"] == "tool_result"}
    replies = [e.get("text") for e in log if e["event"] == "model_response"]
    assert calls, f"the model made no tool call arnes could read; its replies: {replies}"
    assert set(calls) == set(results), (calls.keys(), results.keys())
    assert len(calls) == out["tool_calls"]
    assert any(not r["is_error"] for r in results.values()), results

    # Complete: every request got a response, turns are numbered 1..n, the end says how many.
    requests = [e["turn"] for e in log if e["event"] == "model_request"]
    responses = [e["turn"] for e in log if e["event"] == "model_response"]
    assert requests == responses == list(range(1, len(requests) + 1))
    end = log[-1]
    assert end["turns"] == out["turns"] == len(responses)

    # Usage counted: the server's token counts, summed over turns, are the session's.
    assert all(e["input_tokens"] > 0 and e["output_tokens"] > 0 for e in log if e["event"] == "model_response")
    assert (
        out["input_tokens"]
        == end["input_tokens"]
        == sum(e["input_tokens"] for e in log if e["event"] == "model_response")
    )
    assert (
        out["output_tokens"]
        == end["output_tokens"]
        == sum(e["output_tokens"] for e in log if e["event"] == "model_response")
    )
