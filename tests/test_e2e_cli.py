"""End to end through the `arnes` command with the scripted model: files on disk, exit codes, trace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import ARNES, run_arnes


def script(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def edit(old: str, new: str, file: str = "pricing.py") -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": file, "old_string": old, "new_string": new}}


READ_PRICING = {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]}


def test_demo_replays_the_fix_and_runs_the_tests(tmp_path: Path) -> None:
    run = run_arnes("demo", "--dir", str(tmp_path / "demo"))
    assert run.code == 0, run.err
    assert "DISCOUNT_RATE = 0.15" in (tmp_path / "demo" / "pricing.py").read_text()
    for step in ("> Grep", "> Read", "> Edit", "+DISCOUNT_RATE = 0.15", "tests pass"):
        assert step in run.out


def test_python_dash_m_runs_the_same_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "arnes", "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("arnes ")


def test_help_does_not_import_the_provider_sdks() -> None:
    code = (
        "import sys\nfrom arnes.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('anthropic', 'openai', 'httpx', 'httpx2', 'mcp') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_no_terminal_turns_a_write_into_a_denial(shop: Path, tmp_path: Path) -> None:
    before = (shop / "pricing.py").read_text()
    s = script(tmp_path, [READ_PRICING, {"tool_calls": [edit("0.10", "0.15")]}])
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "--trace", str(trace), "fix")
    assert run.code == 0, run.err
    assert (shop / "pricing.py").read_text() == before
    assert "x Edit denied:" in run.out and "(no terminal to ask)" in run.out
    assert "1 denied" in run.out
    perms = [e for e in read_trace(trace) if e["event"] == "permission"]
    assert perms[-1]["decision"] == "deny" and perms[-1]["source"] == "no-tty"
    results = [e for e in read_trace(trace) if e["event"] == "tool_result"]
    assert results[-1]["is_error"] and "(no terminal to ask)" in results[-1]["output"]


def test_accept_edits_writes_inside_and_asks_outside(shop: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    s = script(
        tmp_path,
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": str(outside), "content": "x"}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "../escape.txt", "content": "x"}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "notes/new.txt", "content": "hello\n"}}]},
        ],
    )
    run = run_arnes(
        "--provider", "script", "--script", s, "-w", str(shop), "--permission-mode", "acceptEdits",
        "--output-format", "json", "go",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert not outside.exists() and not (tmp_path / "escape.txt").exists()
    assert (shop / "notes" / "new.txt").read_text() == "hello\n"
    data = json.loads(run.out)
    assert [d["source"] for d in data["denials"]] == ["no-tty", "no-tty"]
    assert all("outside the workspace" in d["reason"] for d in data["denials"])
    assert data["files_changed"] == ["notes/new.txt"]


def test_a_link_does_not_dodge_the_perimeter(shop: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "note.txt").write_text("secret\n")
    (shop / "data").symlink_to(outside)
    s = script(
        tmp_path,
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "data/note.txt"}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "data/new.txt", "content": "x"}}]},
        ],
    )
    run = run_arnes(
        "--provider", "script", "--script", s, "-w", str(shop), "--permission-mode", "acceptEdits",
        "--output-format", "json", "go",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert not (outside / "new.txt").exists()
    denials = json.loads(run.out)["denials"]
    assert [d["tool"] for d in denials] == ["Read", "Write"]
    assert f"read outside the workspace: {outside}/note.txt" in denials[0]["reason"]


def test_git_and_arnes_folders_are_never_written(shop: Path, tmp_path: Path) -> None:
    s = script(
        tmp_path,
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": ".arnes/settings.json", "content": "{}"}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": ".git/hooks/pre-commit", "content": "x"}}]},
        ],
    )
    run = run_arnes(
        "--provider", "script", "--script", s, "-w", str(shop), "--permission-mode", "bypass",
        "--output-format", "json", "go",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert not (shop / ".arnes" / "settings.json").exists() and not (shop / ".git").exists()
    assert [d["source"] for d in json.loads(run.out)["denials"]] == ["builtin", "builtin"]


def test_plan_mode_denies_writes(shop: Path, tmp_path: Path) -> None:
    s = script(tmp_path, [READ_PRICING, {"tool_calls": [edit("0.10", "0.15")]}])
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "--permission-mode", "plan", "x")
    assert run.code == 0
    assert "0.10" in (shop / "pricing.py").read_text() and "plan mode" in run.out


def test_max_turns_stops_with_exit_3(shop: Path, tmp_path: Path) -> None:
    s = script(tmp_path, [READ_PRICING] * 5)
    trace = tmp_path / "t.jsonl"
    run = run_arnes(
        "--provider", "script", "--script", s, "-w", str(shop), "--max-turns", "2", "--trace", str(trace), "x"
    )
    assert run.code == 3
    assert "--max-turns 2" in run.out
    end = read_trace(trace)[-1]
    assert end["event"] == "session_end" and end["stop_reason"] == "max_turns" and end["turns"] == 2


def test_bad_settings_refuse_to_start_naming_file_and_key(shop: Path, tmp_path: Path) -> None:
    settings = shop / ".arnes" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(**/.env*)", "Raed(x)"]}}))
    s = script(tmp_path, [READ_PRICING])
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "x")
    assert run.code == 2
    assert str(settings) in run.err and "permissions.deny" in run.err and "Raed" in run.err
    assert not (shop / ".arnes" / "traces").exists()  # nothing ran

    settings.write_text(json.dumps({"model": {"provider": "ollama", "top_k": 1}}))
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "x")
    assert run.code == 2 and "model.top_k: unknown key" in run.err

    settings.write_text(json.dumps({"model": {"temperature": 5}}))
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "x")
    assert run.code == 2 and "model.temperature" in run.err and "Traceback" not in run.err


def test_bad_flags_and_scripts_exit_2(shop: Path, tmp_path: Path) -> None:
    assert run_arnes("--deny", "Read(", "-w", str(shop), "x").code == 2
    assert run_arnes("--max-turns", "0", "-w", str(shop), "x").code == 2
    assert run_arnes("-w", str(tmp_path / "missing"), "x").code == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": [{"txt": "typo"}]}')
    run = run_arnes("--provider", "script", "--script", str(bad), "-w", str(shop), "x")
    assert run.code == 2 and "bad.json" in run.err
    assert "turns.0.txt: unknown key" in run.err and "validation error" not in run.err  # one line, not pydantic's dump
    assert len(run.err.strip().splitlines()) == 1


def test_a_base_url_that_is_only_a_path_is_one_line_naming_the_flag(shop: Path) -> None:
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    for provider, url in (("openai", "/v1"), ("anthropic", "/v1"), ("ollama", "/v1"), ("openai", "localhost:8000")):
        run = run_arnes("-p", "--provider", provider, "--base-url", url, "-w", str(shop), "x", env=env, timeout=30)
        assert run.code == 2 and run.err.strip().splitlines() == [
            f"arnes: --base-url {url!r} is not a server's address; give it whole, e.g. http://localhost:8000/v1"
        ], run.err
    (shop / ".arnes").mkdir(exist_ok=True)
    (shop / ".arnes" / "settings.json").write_text('{"model": {"provider": "openai", "base_url": "/v1"}}')
    run = run_arnes("-p", "--trust", "-w", str(shop), "x", env=env, timeout=30)
    assert run.code == 2 and "openai base_url '/v1' is not a server's address" in run.err and "Traceback" not in run.err


def test_project_settings_cannot_turn_on_bypass(shop: Path, tmp_path: Path) -> None:
    settings = shop / ".arnes" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"defaultMode": "bypass"}}))
    s = script(tmp_path, [READ_PRICING, {"tool_calls": [edit("0.10", "0.15")]}])
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "--trust", "x")  # even trusted
    assert run.code == 0
    assert "mode: default" in run.out and "bypass' ignored" in run.out
    assert "0.10" in (shop / "pricing.py").read_text()


def test_default_trace_lives_under_dot_arnes(shop: Path, tmp_path: Path) -> None:
    s = script(tmp_path, [READ_PRICING])
    run = run_arnes("--provider", "script", "--script", s, "-w", str(shop), "x")
    assert run.code == 0
    traces = list((shop / ".arnes" / "traces").glob("*.jsonl"))
    assert len(traces) == 1
    start = read_trace(traces[0])[0]
    assert start["event"] == "session_start" and start["session"] == traces[0].stem
    assert start["workspace"] == str(shop) and start["mode"] == "default"


def test_ctrl_c_exits_130_and_leaves_files_whole(shop: Path, tmp_path: Path) -> None:
    before = (shop / "pricing.py").read_text()
    s = script(tmp_path, [READ_PRICING, {"sleep": 30, "tool_calls": [edit("0.10", "0.15")]}])
    trace = tmp_path / "t.jsonl"
    proc = subprocess.Popen(
        [ARNES, "--provider", "script", "--script", s, "-w", str(shop), "--trace", str(trace), "x"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until the second model turn is pending
        if trace.exists() and trace.read_text().count('"model_request"') >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "[interrupted]" in out
    assert (shop / "pricing.py").read_text() == before
    assert not list(shop.rglob("*.tmp"))
    assert read_trace(trace)[-1]["stop_reason"] == "interrupted"
