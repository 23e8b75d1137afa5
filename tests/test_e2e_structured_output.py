"""Claude Code's structured output (`--json-schema`; the SDKs' `output_format`) with the real
`arnes`: the model gives the answer by calling StructuredOutput, the input is checked against the
schema, the answer is `structured_output` in the result, and a model that never gives it ends the
run as Claude Code's does. The official Python SDK reads it as `ResultMessage.structured_output`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from arnes.agent.trace import read_trace
from tests.conftest import ARNES, run_arnes

SCHEMA = {
    "type": "object",
    "properties": {"severity": {"type": "string", "enum": ["low", "high"]}, "files": {"type": "array"}},
    "required": ["severity", "files"],
}
ANSWER = {"severity": "high", "files": ["a.py"]}


def _run(tmp_path: Path, turns: list[dict[str, Any]], *flags: str) -> tuple[Any, list[dict[str, Any]]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--output-format", "json", *flags, "Review a.py")  # fmt: skip
    return done, read_trace(trace) if trace.exists() else []


def test_the_answer_comes_through_the_tool_checked_against_the_schema(tmp_path: Path) -> None:
    turns = [
        {"text": "It looks risky."},  # no call: reminded
        {"tool_calls": [{"name": "StructuredOutput", "input": {"severity": "bad"}}]},  # refused, with the reasons
        {"tool_calls": [{"name": "StructuredOutput", "input": ANSWER}]},
        {"text": "Done."},
    ]
    done, events = _run(tmp_path, turns, "--json-schema", json.dumps(SCHEMA))
    assert done.code == 0, done.err
    out = json.loads(done.out)
    assert out["subtype"] == "success" and out["structured_output"] == ANSWER, out
    said = [b.get("text", "") for e in events if e["event"] == "message" and e["role"] == "user" for b in e["content"]]
    assert any("You have not called StructuredOutput yet" in t for t in said)
    [refused, kept] = [e for e in events if e["event"] == "tool_result"]
    assert refused["is_error"] and "'bad' is not one of ['low', 'high']" in refused["output"], refused
    assert "'files' is a required property" in refused["output"]
    assert not kept["is_error"] and "Kept as this run's answer" in kept["output"]


def test_a_model_that_never_gives_it_ends_the_run_as_claude_codes_does(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, [{"text": "no"}] * 5, "--json-schema", json.dumps(SCHEMA))
    out = json.loads(done.out)
    assert out["subtype"] == "error_max_structured_output_retries" and out["is_error"], out
    assert "structured_output" not in out
    assert done.code == 1


def test_the_tool_is_offered_only_with_a_schema(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "fine"}]}))
    for flags, offered in (((), False), (("--json-schema", json.dumps(SCHEMA)), True)):
        done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(tmp_path),
                         "--output-format", "stream-json", "--verbose", *flags, "hi")  # fmt: skip
        lines = [json.loads(line) for line in done.out.splitlines()]
        init = next(m for m in lines if m.get("subtype") == "init")
        assert ("StructuredOutput" in init["tools"]) is offered, init["tools"]
        assert "structured_output" not in lines[-1]  # the model never called it: no answer to give


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ("{not json", "--json-schema: not JSON"),
        ('{"type": "array"}', '--json-schema: the answer must be an object ("type": "object")'),
        ('{"type": 12}', "--json-schema: not a valid JSON Schema"),
    ],
)
def test_a_bad_schema_is_one_line(tmp_path: Path, schema: str, said: str) -> None:
    done = run_arnes("-p", "--provider", "script", "--script", "/nonexistent", "-w", str(tmp_path),
                     "--json-schema", schema, "hi")  # fmt: skip
    assert done.code == 2 and said in done.err and "Traceback" not in done.err, done.err


def test_the_official_sdk_reads_the_structured_output(tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk (the dev extra) drives arnes here")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    turns = [{"tool_calls": [{"name": "StructuredOutput", "input": ANSWER}]}, {"text": "Done."}]
    script.write_text(json.dumps({"turns": turns}))
    opts = sdk.ClaudeAgentOptions(
        cli_path=ARNES, cwd=str(ws), extra_args={"provider": "script", "script": str(script)},
        output_format={"type": "json_schema", "schema": SCHEMA},
    )  # fmt: skip

    async def run() -> list[Any]:
        return [message async for message in sdk.query(prompt="Review a.py", options=opts)]

    result = anyio.run(run)[-1]
    assert type(result).__name__ == "ResultMessage" and result.subtype == "success", result
    assert result.structured_output == ANSWER
