"""`--permission-prompt-tool mcp__SERVER__TOOL` with the real `arnes` and a real stdio MCP server:
what would be asked goes to that tool, whose JSON answer allows or denies (mcp/approver.py)."""

from __future__ import annotations

import json
from pathlib import Path

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.test_e2e_mcp import stdio, workspace


def run(tmp_path: Path, calls: list[dict[str, object]], tool: str = "mcp__gate__approve") -> tuple[object, list]:
    ws = workspace(tmp_path, {"gate": stdio()})
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    argv = ["-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trust", "--trace", str(trace)]
    done = run_arnes(*argv, "--permission-prompt-tool", tool, "go")
    return done, read_trace(trace) if trace.exists() else []


def results(events: list) -> list[tuple[str, bool, str]]:
    return [(e["name"], e["is_error"], e["output"]) for e in events if e["event"] == "tool_result"]


def test_the_tool_answers_what_would_be_asked(tmp_path: Path) -> None:
    calls = [
        {"name": "Write", "input": {"file_path": "new.py", "content": "x = 1\\n"}},
        {"name": "Bash", "input": {"command": "touch shell-ran"}},
        {"name": "Write", "input": {"file_path": "changed.py", "content": "y = 2\\n"}},
    ]
    done, events = run(tmp_path, calls)
    assert done.code == 0, done.err
    ws = tmp_path / "ws"
    assert (ws / "new.py").exists()  # default mode asks for a write: the tool allowed it
    assert not (ws / "shell-ran").exists() and not (ws / "changed.py").exists() and not (ws / "elsewhere.py").exists()
    [write, bash, changed] = results(events)
    assert write[:2] == ("Write", False)
    assert bash[:2] == ("Bash", True) and "no shell from the bot (touch shell-ran)" in bash[2]
    assert changed[:2] == ("Write", True) and "changed the call's input" in changed[2]


def test_a_tool_no_server_offers_is_one_clear_line(tmp_path: Path) -> None:
    done, _ = run(tmp_path, [], tool="mcp__nobody__approve")
    assert done.code == 2
    assert "--permission-prompt-tool mcp__nobody__approve: no MCP server of this run offers it (servers: gate)" in (
        done.err
    )
    assert "Traceback" not in done.err


def test_a_deny_rule_holds_before_the_tool_is_asked(tmp_path: Path) -> None:
    """Only an ask reaches the tool: a deny rule decides first."""
    ws = workspace(tmp_path, {"gate": stdio()})
    script = tmp_path / "s.json"
    calls = [{"name": "Write", "input": {"file_path": "new.py", "content": "x = 1\\n"}}]
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    argv = ["-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trust", "--deny", "Write"]
    done = run_arnes(*argv, "--permission-prompt-tool", "mcp__gate__approve", "go")
    assert done.code == 0, done.err
    assert not (ws / "new.py").exists()
