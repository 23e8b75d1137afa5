"""End to end: the real `arnes` command against a real local server speaking each provider's API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes, unittest_passes
from tests.fakes.llm_server import FakeLLMServer

FIX_DISCOUNT: list[dict[str, Any]] = [
    {"text": "Looking.", "tool_calls": [{"name": "Grep", "input": {"pattern": "10 %", "glob": "*.py"}}]},
    {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
    {
        "tool_calls": [
            {
                "name": "Edit",
                "input": {"file_path": "pricing.py", "old_string": "0.10", "new_string": "0.15"},
            }
        ]
    },
    {"tool_calls": [{"name": "Bash", "input": {"command": "python -m unittest -q"}}]},
    {"text": "Changed the discount to 15 %."},
]


def provider_args(api: str, server: FakeLLMServer) -> list[str]:
    if api == "openai":
        return ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model"]
    return ["--provider", "anthropic", "--base-url", server.url, "--model", "fake-model"]


KEYS = {"OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test"}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [True, False])
def test_fixes_the_discount_through_each_api(shop: Path, tmp_path: Path, api: str, stream: bool) -> None:
    trace = tmp_path / "trace.jsonl"
    with FakeLLMServer(FIX_DISCOUNT) as server:
        extra = [] if stream else ["--no-stream"]
        run = run_arnes(
            *provider_args(api, server),
            *extra,
            "-w", str(shop), "--permission-mode", "acceptEdits", "--trace", str(trace),
            "Change the order discount from 10 % to 15 %.",
            env=KEYS,
        )  # fmt: skip
        bodies = [body for _, body in server.requests]
    assert run.code == 0, run.err
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()
    assert unittest_passes(shop)
    assert "Changed the discount to 15 %." in run.out
    assert "files changed: pricing.py" in run.out
    assert "+DISCOUNT_RATE = 0.15" in run.out
    assert len(bodies) == 5
    assert all(bool(b.get("stream")) == stream for b in bodies)
    assert {t.get("name") or t["function"]["name"] for t in bodies[0]["tools"]} >= {"Read", "Edit", "Grep"}
    events = read_trace(trace)
    names = [e["event"] for e in events]
    assert names[0] == "session_start" and names[-1] == "session_end"
    assert names.count("tool_call") == 4 and names.count("tool_result") == 4
    assert all("ts" in e for e in events)
    end = events[-1]
    assert end["stop_reason"] == "end_turn" and end["turns"] == 5 and end["tool_calls"] == 4
    assert end["input_tokens"] > 0 and end["output_tokens"] > 0
    assert [e["decision"] for e in events if e["event"] == "permission"] == ["allow"] * 4


def test_tool_results_of_a_turn_go_back_together(shop: Path) -> None:
    turns = [
        {
            "tool_calls": [
                {"name": "Read", "input": {"file_path": "pricing.py"}},
                {"name": "Read", "input": {"file_path": "test_pricing.py"}},
                {"name": "Nope", "input": {}},
            ]
        },
        {"text": "ok"},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes(*provider_args("anthropic", server), "-w", str(shop), "read both", env=KEYS)
        second = server.requests[1][1]
    assert run.code == 0, run.err
    last = second["messages"][-1]
    assert last["role"] == "user"
    results = [b for b in last["content"] if b["type"] == "tool_result"]
    assert len(results) == 3
    assert "DISCOUNT_RATE" in results[0]["content"] and "unittest" in results[1]["content"]
    assert results[2]["is_error"] and "Unknown tool 'Nope'" in results[2]["content"]


def test_tool_calls_printed_as_json_text_are_recovered_only_where_the_profile_steers(shop: Path) -> None:
    before = (shop / "pricing.py").read_text()
    with FakeLLMServer(FIX_DISCOUNT, text_tool_calls=True) as server:  # `off`: a call in prose is prose
        run = run_arnes(
            *provider_args("openai", server), "-w", str(shop), "--permission-mode", "acceptEdits", "fix", env=KEYS
        )
    assert run.code == 0, run.err
    assert (shop / "pricing.py").read_text() == before
    with FakeLLMServer(FIX_DISCOUNT, text_tool_calls=True) as server:
        run = run_arnes(
            *provider_args("openai", server), "-w", str(shop), "--permission-mode", "acceptEdits",
            "--steering", "small", "--edit-format", "tools", "fix", env=KEYS,
        )  # fmt: skip
    assert run.code == 0, run.err
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()
    assert "~ steered (text-calls, rewrite)" in run.out


def test_rate_limits_are_retried_then_succeed(shop: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([{"text": "hello"}], fail_first=2, fail_status=429) as server:
        run = run_arnes(*provider_args("openai", server), "-w", str(shop), "--trace", str(trace), "hi", env=KEYS)
        attempts = len(server.requests)
    assert run.code == 0, run.err
    assert attempts == 3
    retries = [e for e in read_trace(trace) if e["event"] == "retry"]
    assert [r["attempt"] for r in retries] == [1, 2]
    assert "429" in retries[0]["error"]


def test_persistent_server_errors_are_reported_with_exit_1(shop: Path) -> None:
    with FakeLLMServer([{"text": "never"}], fail_first=50, fail_status=503) as server:
        run = run_arnes(*provider_args("anthropic", server), "-w", str(shop), "hi", env=KEYS)
        attempts = len(server.requests)
    assert run.code == 1
    assert attempts == 4
    assert "503" in run.out + run.err and "gave up after 4 attempts" in run.out + run.err


def test_no_model_says_what_it_tried_and_how_to_configure(shop: Path) -> None:
    run = run_arnes("--base-url", "http://127.0.0.1:9/v1", "-w", str(shop), "hi")
    assert run.code == 1
    assert "ollama" in run.err and "127.0.0.1:9" in run.err
    assert "ollama serve" in run.err and "ANTHROPIC_API_KEY" in run.err and "--base-url" in run.err


def test_context_meter_uses_the_providers_usage(shop: Path) -> None:
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]}, {"text": "ok"}]
    with FakeLLMServer(turns, input_tokens=3000) as server:
        run = run_arnes(*provider_args("openai", server), "-w", str(shop), "--context-window", "4096", "x", env=KEYS)
    assert run.code == 0, run.err
    meters = [line for line in run.out.splitlines() if line.startswith("ctx ")]
    assert len(meters) == 2
    # The first meter is an estimate; the second starts from the 3000 input tokens the server reported.
    first, second = (float(m.split()[1].split("/")[0].rstrip("k")) for m in meters)
    assert first < 2.0
    assert 3.0 <= second < 4.0  # 3000 counted by the server, plus the Read result since
    assert "/4.1k (" in meters[1]


def test_agents_md_leads_the_first_message_not_the_system_prompt(shop: Path) -> None:
    (shop / "AGENTS.md").write_text("# rules\nAlways answer in haiku.\n")
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes(*provider_args("openai", server), "-w", str(shop), "hi", env=KEYS)
        body = server.requests[0][1]
    assert run.code == 0, run.err
    system, first = body["messages"][:2]
    assert system["role"] == "system" and "haiku" not in system["content"] and str(shop) not in system["content"]
    assert first["role"] == "user" and f"The workspace is {shop}." in first["content"]
    assert "Always answer in haiku." in first["content"] and first["content"].endswith("\n\nhi")


def test_json_output_is_one_object(shop: Path) -> None:
    with FakeLLMServer(FIX_DISCOUNT) as server:
        run = run_arnes(
            *provider_args("anthropic", server), "-w", str(shop), "--permission-mode", "acceptEdits",
            "--output-format", "json", "fix", env=KEYS,
        )  # fmt: skip
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["stop_reason"] == "end_turn"
    assert data["files_changed"] == ["pricing.py"]
    assert data["tool_calls"] == 4 and data["turns"] == 5
    assert data["result"] == "Changed the discount to 15 %."
    assert data["denials"] == []


def test_anthropic_requests_mark_the_fixed_prefix_for_prompt_caching(shop: Path) -> None:
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes(*provider_args("anthropic", server), "-w", str(shop), "hi", env=KEYS)
        body = server.requests[0][1]
    assert run.code == 0, run.err
    [system] = body["system"]
    assert system["type"] == "text" and system["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in tool for tool in body["tools"][:-1])  # one breakpoint for the prefix


def test_the_users_api_key_helper_gives_the_anthropic_key_and_a_projects_is_refused(shop: Path, tmp_path: Path) -> None:
    """Claude Code's `apiKeyHelper` in ~/.claude/settings.json (the server got `withheld`); a
    project's would run a program of the repository's on the host: named and ignored."""
    import os

    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo sk-from-helper"}))
    (shop / ".claude").mkdir(exist_ok=True)
    (shop / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "touch pwned; echo x"}))
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes(*provider_args("anthropic", server), "-w", str(shop), "--trust", "hi")
        sent = server.headers[0]
    assert run.code == 0, run.err
    assert "sk-from-helper" in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))
    assert "apiKeyHelper ignored: only your user settings" in run.out + run.err
    assert not (shop / "pwned").exists() and "sk-from-helper" not in run.out + run.err
    (claude / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo vault locked >&2; exit 3"}))
    failed = run_arnes("--provider", "anthropic", "--base-url", "http://127.0.0.1:9", "-w", str(shop), "hi")
    assert failed.code == 2 and "apiKeyHelper exited with 3 and printed no key (vault locked)" in failed.err
    assert "Traceback" not in failed.err


def test_the_users_api_key_helper_never_runs_the_repositorys_programs(shop: Path, tmp_path: Path) -> None:
    """The helper is the user's program on the host: `python3 -m keyring` must not import the
    repository's keyring.py, nor `op` come from the repository's activated venv."""
    import os

    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (shop / "keyring.py").write_text("import pathlib\npathlib.Path.home().joinpath('PWNED-py').touch()\nprint('k')\n")
    venv = shop / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "op").write_text('#!/bin/sh\ntouch "$HOME/PWNED-op"\necho k\n')
    (venv / "op").chmod(0o755)
    for helper in ("python3 -m keyring get anthropic key", "op read op://vault/key"):
        (home / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": helper}))
        run = run_arnes("--provider", "anthropic", "--base-url", "http://127.0.0.1:9", "-w", str(shop), "hi",
                        cwd=shop, env={"PATH": f"{venv}:{os.environ['PATH']}"})  # fmt: skip
        assert run.code == 2 and "apiKeyHelper exited with" in run.err, run.err  # the user's own is missing
    assert not (home / "PWNED-py").exists() and not (home / "PWNED-op").exists()


def test_the_model_of_claude_codes_user_settings_on_anthropics_api(shop: Path) -> None:
    """~/.claude/settings.json's `model` (aliases as in command files) answers on Anthropic's API
    unless --model or arnes's own settings choose; another provider says in one line it was not used."""
    import os

    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"model": "opus"}))

    def asked(*flags: str) -> tuple[str, str]:
        with FakeLLMServer([{"text": "ok"}]) as server:
            url = server.url + ("/v1" if "openai" in flags else "")
            run = run_arnes("-p", "--base-url", url, *flags, "-w", str(shop), "hi", env=KEYS)
            assert run.code == 0, run.err
            return server.requests[0][1]["model"], run.out + run.err

    assert asked("--provider", "anthropic")[0] == "claude-opus-4-5"
    assert asked("--provider", "anthropic", "--model", "claude-haiku-4-5")[0] == "claude-haiku-4-5"
    arnes_own = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    arnes_own.parent.mkdir(parents=True, exist_ok=True)
    arnes_own.write_text(json.dumps({"model": {"name": "claude-sonnet-4-5-20250929"}}))
    assert asked("--provider", "anthropic")[0] == "claude-sonnet-4-5-20250929"
    arnes_own.unlink()
    model, said = asked("--provider", "openai", "--context-window", "32768")
    assert model != "opus" and said.count("model 'opus' not used") == 1
    assert f"{claude}/settings.json: model 'opus' not used: it names a model of Anthropic's API" in said
