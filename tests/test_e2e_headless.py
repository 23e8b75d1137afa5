"""Headless use (DESIGN §12) and the command line a new user types: -p, a task on stdin,
stream-json read as the run goes, --continue, global options after a subcommand, and a task
that starts with a subcommand's word."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import ARNES, run_arnes


def script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def piped(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARNES, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def test_a_task_on_stdin_with_print_runs_once(shop: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    done = piped("fix the discount\n", "-p", "--provider", "script", "--script", script(tmp_path, [{"text": "ok"}]),
                 "-w", str(shop), "--trace", str(trace))  # fmt: skip
    assert done.returncode == 0, done.stderr
    first_user = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    assert first_user["content"][-1]["text"] == "fix the discount"


def test_piped_text_joins_the_task_given_with_print(shop: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    ok = script(tmp_path, [{"text": "ok"}])
    done = piped("Traceback: ZeroDivisionError\n", "-p", "--provider", "script", "--script", ok,
                 "-w", str(shop), "--trace", str(trace), "explain this log")  # fmt: skip
    assert done.returncode == 0, done.stderr
    first_user = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    assert first_user["content"][-1]["text"] == "explain this log\n\nTraceback: ZeroDivisionError"


def test_stream_json_arrives_line_by_line_while_the_run_goes(shop: Path, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
        {"sleep": 60, "text": "thinking"},  # the run is still going while we read the lines above
    ]
    proc = subprocess.Popen(
        [ARNES, "-p", "--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop),
         "--output-format", "stream-json", "read the pricing"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = [json.loads(proc.stdout.readline()) for _ in range(3)]
    assert proc.poll() is None, "the lines came before the run ended"
    init, call, result = lines
    assert init["type"] == "system" and init["subtype"] == "init" and "Read" in init["tools"]
    assert call["type"] == "assistant"
    [use] = call["message"]["content"]
    assert use["type"] == "tool_use" and use["name"] == "Read" and use["input"] == {"file_path": "pricing.py"}
    assert result["type"] == "user"
    [block] = result["message"]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == use["id"] and "Order pricing" in block["content"]
    proc.send_signal(signal.SIGINT)
    rest = [json.loads(line) for line in proc.stdout.read().splitlines()]
    proc.wait(timeout=30)
    assert proc.returncode == 130
    final = rest[-1]
    assert final["type"] == "result" and final["is_error"] is True and final["stop_reason"] == "interrupted"
    assert (
        final["num_turns"] >= 1 and final["usage"]["input_tokens"] > 0 and final["subtype"] == "error_during_execution"
    )
    assert final["session_id"] == init["session_id"]


def test_stream_json_result_of_a_finished_run(shop: Path, tmp_path: Path) -> None:
    run = run_arnes("-p", "--provider", "script", "--script", script(tmp_path, [{"text": "all done"}]),
                    "-w", str(shop), "--output-format", "stream-json", "x")  # fmt: skip
    assert run.code == 0
    final = json.loads(run.out.splitlines()[-1])
    assert final == {**final, "type": "result", "subtype": "success", "is_error": False, "result": "all done"}
    assert final["permission_denials"] == []


def test_configuration_errors_answer_in_json_in_the_json_formats(shop: Path) -> None:
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text('{"permisions": {}}')
    for fmt in ("json", "stream-json"):
        run = run_arnes("-w", str(shop), "--output-format", fmt, "x")
        assert run.code == 2
        data = json.loads(run.out if fmt == "json" else run.out.splitlines()[-1])
        assert data["exit_code"] == 2 and "permisions" in data["error"]


def test_continue_picks_up_the_latest_session_here(shop: Path, tmp_path: Path) -> None:
    first = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "first"}]), "-w", str(shop), "one")
    assert first.code == 0
    [trace] = (shop / ".arnes" / "traces").glob("*.jsonl")
    again = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "second"}], "b.json"),
                      "-w", str(shop), "-c", "two")  # fmt: skip
    assert again.code == 0, again.err
    assert list((shop / ".arnes" / "traces").glob("*.jsonl")) == [trace]  # the same session, continued
    users = [e["content"][-1]["text"] for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user"]
    assert users == ["one", "two"]


def test_global_options_may_follow_a_subcommand(shop: Path, tmp_path: Path) -> None:
    (shop / "features.json").write_text(json.dumps({"features": [{"id": "F1", "description": "d", "verify": "true"}]}))
    run = run_arnes("next", "-w", str(shop), "--provider", "script", "--script", script(tmp_path, [{"text": "ok"}]))
    assert run.code == 0, run.err
    assert "F1 is passing" in run.out
    # the subcommand's own option of the same name still wins: eval's --timeout is its own
    bad = run_arnes("-w", str(shop), "eval", "--timeout", "x")
    assert bad.code == 2 and "--timeout" in bad.err


def test_a_task_that_starts_with_a_subcommand_word_runs_as_a_task(shop: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "ok"}]), "-w", str(shop),
                    "--trace", str(trace), "check", "the", "failing", "tests")  # fmt: skip
    assert run.code == 0, run.err
    assert 'running "check the failing tests" as a task' in run.err
    first_user = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    assert first_user["content"][-1]["text"] == "check the failing tests"
    team = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "ok"}], "t.json"),
                     "-w", str(shop), "team", "up", "on", "this")  # fmt: skip
    assert team.code == 0 and 'running "team up on this" as a task' in team.err
    assert run_arnes("-w", str(shop), "team", "list").code == 0  # the subcommand itself still works


def test_a_missing_anthropic_key_is_one_clear_line_and_exit_2(shop: Path) -> None:
    run = run_arnes("-w", str(shop), "--provider", "anthropic", "hello")
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        "arnes: --provider anthropic needs a key: export ANTHROPIC_API_KEY=... (or ANTHROPIC_AUTH_TOKEN=... with "
        "ANTHROPIC_BASE_URL for a gateway; read from the environment, never from a project file), or choose "
        "another provider (--provider ollama|openai)"
    ]
    assert "Traceback" not in run.out + run.err


def test_an_unknown_model_is_one_clear_line_and_exit_1(shop: Path) -> None:
    from tests.fakes.llm_server import FakeLLMServer

    with FakeLLMServer([], fail_first=10, fail_status=404) as server:  # how servers answer a model they lack
        run = run_arnes("--provider", "openai", "--base-url", f"{server.url}/v1", "--model", "nope",
                        "-w", str(shop), "-p", "hi", env={"OPENAI_API_KEY": "x"})  # fmt: skip
    assert run.code == 1
    assert "refused the request (HTTP 404)" in run.out and "Check the model name and the base URL." in run.out
    assert "Traceback" not in run.out + run.err and "To configure a model" not in run.out + run.err
