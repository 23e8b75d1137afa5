"""Headless output as Claude Code's Agent SDKs read it (DESIGN §12, §16), from the real `arnes`.

Every stream-json line goes through the Python SDK's own parser and is checked for the keys the
TypeScript SDK's types require; `--output-format json` is the result message; warnings reach
JSON readers; a reader that goes away ends the run quietly; stdin speaks the SDK's protocol.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ARNES, run_arnes

sdk_parser = pytest.importorskip(
    "claude_agent_sdk._internal.message_parser", reason="claude-agent-sdk (the dev extra) is the ground truth here"
)
parse_message = sdk_parser.parse_message

# The TypeScript SDK's required keys (sdk.d.ts: SDKSystemMessage, SDKAssistantMessage, SDKUserMessage,
# SDKResultSuccess/SDKResultError, BetaMessage, ModelUsage, SDKPermissionDenial).
EVERY = {"type", "uuid", "session_id"}
INIT = EVERY | {"subtype", "apiKeySource", "claude_code_version", "cwd", "tools", "mcp_servers", "model"}
INIT |= {"permissionMode", "slash_commands", "output_style", "skills", "plugins"}
ASSISTANT = EVERY | {"message", "parent_tool_use_id"}
BETA_MESSAGE = {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
USER = EVERY | {"message", "parent_tool_use_id"}
RESULT = EVERY | {"subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "stop_reason"}
RESULT |= {"total_cost_usd", "usage", "modelUsage", "permission_denials"}
USAGE = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
MODEL_USAGE = {"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"}
MODEL_USAGE |= {"webSearchRequests", "costUSD", "contextWindow", "maxOutputTokens"}

TURNS = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
    {"tool_calls": [{"name": "Bash", "input": {"command": "ls"}}]},  # denied by --disallowedTools
    {"text": "all read"},
]


def script(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def claude_settings(ws: Path) -> None:
    """A copied Claude Code file with a key arnes does not use and a rule it skips: two warnings."""
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"model": "opus", "permissions": {"deny": ["Bash(npm run *"]}})
    )


def headless(tmp_path: Path, ws: Path, fmt: str, *flags: str) -> Any:
    return run_arnes("-p", "--provider", "script", "--script", script(tmp_path, TURNS), "-w", str(ws),
                     "--disallowedTools", "Bash", "--output-format", fmt, *flags, "read the pricing")  # fmt: skip


def check_result(result: dict[str, Any]) -> None:
    assert set(result) >= RESULT, RESULT - set(result)
    assert set(result["usage"]) >= USAGE
    [(model, spent)] = result["modelUsage"].items()
    assert model == "script" and set(spent) >= MODEL_USAGE and spent["inputTokens"] > 0
    [denial] = result["permission_denials"]
    assert {"tool_name", "tool_use_id", "tool_input"} <= set(denial)
    assert denial["tool_name"] == "Bash" and denial["tool_input"] == {"command": "ls"}


def test_every_stream_json_line_parses_with_the_sdk_and_has_the_typescript_keys(shop: Path, tmp_path: Path) -> None:
    claude_settings(shop)
    run = headless(tmp_path, shop, "stream-json", "--verbose")
    assert run.code == 0, run.err
    lines = [json.loads(line) for line in run.out.splitlines()]
    parsed = [parse_message(line) for line in lines]
    assert all(message is not None for message in parsed)
    assert lines[0]["subtype"] == "init" and set(lines[0]) >= INIT, INIT - set(lines[0])
    assert lines[0]["permissionMode"] == "default" and "Read" in lines[0]["tools"]
    assert all(set(line) >= EVERY for line in lines)
    assert len({line["session_id"] for line in lines}) == 1
    assistants = [line for line in lines if line["type"] == "assistant"]
    assert [type(m).__name__ for m in parsed if type(m).__name__ == "AssistantMessage"] == ["AssistantMessage"] * 3
    for line in assistants:
        assert set(line) >= ASSISTANT and set(line["message"]) >= BETA_MESSAGE
        assert line["message"]["model"] == "script" and set(line["message"]["usage"]) >= USAGE
    assert assistants[0]["message"]["usage"]["input_tokens"] > 0
    users = [line for line in lines if line["type"] == "user"]
    assert len(users) == 2 and all(set(line) >= USER for line in users)
    bash_call = assistants[1]["message"]["content"][0]
    result = lines[-1]
    assert type(parsed[-1]).__name__ == "ResultMessage" and parsed[-1].result == "all read"
    check_result(result)
    assert result["permission_denials"][0]["tool_use_id"] == bash_call["id"]
    warnings = [line["message"] for line in lines if line.get("subtype") == "warning"]
    assert any("Claude Code keys arnes does not use, ignored: model" in w for w in warnings), warnings
    assert any("rule 'Bash(npm run *' skipped" in w for w in warnings), warnings
    assert result["warnings"] == warnings
    assert "Bash(npm run *" in run.err  # said on stderr as well


def test_json_output_is_claude_codes_result_object_with_arnes_keys_beside(shop: Path, tmp_path: Path) -> None:
    claude_settings(shop)
    run = headless(tmp_path, shop, "json")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    message = parse_message(data)
    assert type(message).__name__ == "ResultMessage" and message.subtype == "success" and not message.is_error
    check_result(data)
    assert data["result"] == "all read" and data["turns"] == 3 and data["tool_calls"] == 2
    assert [d["tool"] for d in data["denials"]] == ["Bash"] and data["trace"].endswith(".jsonl")
    assert any("skipped" in w for w in data["warnings"]) and any("ignored: model" in w for w in data["warnings"])


def test_a_run_that_cannot_start_answers_with_a_result_the_sdk_parses(shop: Path) -> None:
    run = run_arnes("-w", str(shop), "--output-format", "stream-json", "--resume-session-at", "abc", "x")
    assert (
        run.code == 2
        and run.err.strip()
        == "arnes: --resume-session-at goes with --resume ID or --continue: it cuts the session that resumes"
    )
    [line] = run.out.splitlines()
    result = json.loads(line)
    assert parse_message(result).is_error and result["errors"] == [result["error"]] and result["exit_code"] == 2


@pytest.mark.parametrize("fmt", ["stream-json", "text"])
def test_a_reader_that_goes_away_ends_the_run_quietly(shop: Path, tmp_path: Path, fmt: str) -> None:
    """`arnes -p ... | head -c 100`: the reply is longer than a pipe holds, so arnes is writing when
    the reader leaves; it stops as on Ctrl-C (130) and says nothing."""
    turns = [{"text": "x" * 300_000}]
    proc = subprocess.Popen(
        [ARNES, "-p", "--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop),
         "--output-format", fmt, "go"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    assert proc.wait(timeout=60) == 130
    assert proc.stderr.read() == b""


def test_stdin_in_the_sdks_protocol_is_answered(shop: Path, tmp_path: Path) -> None:
    """What the SDKs write: `initialize`, a user message, a request arnes does not answer, a bad line."""
    lines = [
        {"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "user", "session_id": "", "message": {"role": "user", "content": "read"}, "parent_tool_use_id": None},
        {"type": "control_request", "request_id": "req_2", "request": {"subtype": "reload_plugins"}},
        {"type": "control_request", "request_id": "req_3", "request": {"subtype": "stop_task", "task_id": "x"}},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines) + "not json\n"
    done = subprocess.run(
        [ARNES, "--provider", "script", "--script", script(tmp_path, [{"text": "hello"}]), "-w", str(shop),
         "--output-format", "stream-json", "--input-format", "stream-json", "--verbose", "--system-prompt", ""],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    responses = {o["response"]["request_id"]: o["response"] for o in out if o["type"] == "control_response"}
    init = responses["req_1"]
    assert init["subtype"] == "success" and init["response"]["models"][0]["value"] == "script"
    assert {"commands", "output_style", "available_output_styles", "account"} <= set(init["response"])
    assert responses["req_2"] == {
        "subtype": "error",
        "request_id": "req_2",
        "error": "arnes does not answer the control request 'reload_plugins'",
    }
    assert responses["req_3"]["subtype"] == "error" and "no task 'x'" in responses["req_3"]["error"]
    messages = [o for o in out if o["type"] != "control_response"]
    assert all(parse_message(m) is not None for m in messages)
    assert [m["type"] for m in messages if m["type"] != "system"] == ["assistant", "result"]
    assert messages[-1]["result"] == "hello" and messages[-1]["subtype"] == "success"
    assert any("not JSON" in m.get("message", "") for m in messages if m.get("subtype") == "warning")
    refused = run_arnes("-w", str(shop), "--input-format", "stream-json", "--output-format", "stream-json", "task")
    assert refused.code == 2 and "the task comes on stdin" in refused.err
