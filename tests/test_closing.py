"""A run closes with one `RunClosed` event (arnes/closing.py); the output format's subscriber prints
the closing from it: the terminal renderer its lines, the JSON subscriber the result object."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.events import Event, Nested, RunClosed, SessionEnd, ShellChanges
from arnes.agent.trace import JsonlTrace, read_trace
from arnes.cliargs import global_parser
from arnes.config import EffectiveConfig
from arnes.headless.output import Headless
from arnes.llm.script import ScriptProvider
from arnes.runner import execute, prepare
from arnes.safe import terminal_console
from arnes.session import Session
from arnes.ui.render import TerminalRenderer
from arnes.ui.stdout import Stdout

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
# Claude Code's result keys (ui/sdk_messages.py), then arnes's, in the order `--output-format json` prints them.
CLAUDE_KEYS = [
    "type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "stop_reason",
    "session_id", "total_cost_usd", "usage", "modelUsage", "permission_denials", "uuid",
]  # fmt: skip
ARNES_KEYS = [
    "session", "limit", "turns", "tool_calls", "arnes_calls", "input_tokens", "output_tokens", "cost",
    "compactions", "clearings", "verified", "verify_rounds", "files_changed", "shell_changes", "denials",
    "error", "trace", "warnings",
]  # fmt: skip


def closed(**changes: Any) -> RunClosed:
    fields: dict[str, Any] = {
        "session": "s-1",
        "result": "done",
        "stop_reason": "end_turn",
        "limit": None,
        "turns": 3,
        "tool_calls": 2,
        "arnes_calls": 0,
        "input_tokens": 900,
        "output_tokens": 40,
        "cost": 0.0123456789,
        "compactions": 0,
        "clearings": 1,
        "verified": None,
        "verify_rounds": 0,
        "files_changed": [],
        "shell_changes": ShellChanges(),
        "denials": [],
        "error": None,
        "trace": "/ws/.arnes/traces/s-1.jsonl",
    }
    return RunClosed(**{**fields, **changes})


def rendered(event: Event) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    TerminalRenderer(terminal_console(out), errors=err)(event)
    return out.getvalue(), err.getvalue()


def test_the_renderer_prints_the_text_closing_from_the_event() -> None:
    event = closed(
        files_changed=["app.py", "run\x1b[2J.sh"],
        shell_changes=ShellChanges(
            runs_code=["sitecustomize.py"], ignored={"node_modules": 30, "build": 2}, setid_removed=["tool"]
        ),
        diffs=[DIFF],
    )
    out, err = rendered(event)
    assert out.splitlines() == [
        "files that run code later, written by shell commands: sitecustomize.py",
        "also changed by shell commands, in ignored folders: 32 files (build 2, node_modules 30)",
        "setuid/setgid bits removed from: tool",
        "files changed: app.py, run\\x1b[2J.sh",  # a name is shown, never obeyed
        *DIFF.splitlines(),
    ]
    assert err == ""


def test_a_run_no_model_answered_closes_with_the_advice_on_stderr() -> None:
    event = closed(stop_reason="error", error="could not connect", no_model="arnes: no answer\nTo configure a model:")
    out, err = rendered(event)
    assert (out, err) == ("", "arnes: no answer\nTo configure a model:\n")
    untracked = closed(shell_changes=ShellChanges(tracked=False))
    assert rendered(untracked) == (
        "changes by shell commands not tracked: the workspace has too many files to watch\n",
        "",
    )
    assert rendered(closed()) == ("", "")  # nothing changed: nothing more than the `[end_turn]` line


def headless(tmp_path: Path, fmt: str) -> tuple[Headless, io.StringIO]:
    stream = io.StringIO()
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), id="s-1")
    return Headless.made(fmt, session, EffectiveConfig(), Stdout(stream)), stream


def test_the_json_subscriber_prints_the_result_object_from_the_event(tmp_path: Path) -> None:
    output, stream = headless(tmp_path, "json")
    denial = {"tool": "Bash", "tool_use_id": "c1", "tool_input": {"command": "ls"}, "reason": "no", "source": "rule"}
    event = closed(files_changed=["app.py"], diffs=[DIFF], denials=[denial], no_model="not in the JSON")
    output(Nested("call_1", event))  # a sub-agent's closing is not the run's
    assert stream.getvalue() == ""
    output(event)
    data = json.loads(stream.getvalue())
    assert list(data) == CLAUDE_KEYS + ARNES_KEYS
    assert {key: data[key] for key in event.payload()} == event.payload()
    assert data["cost"] == data["total_cost_usd"] == 0.012346
    assert data["result"] == "done" and data["num_turns"] == 3 and data["session_id"] == "s-1"
    assert data["permission_denials"][0]["tool_name"] == "Bash" and data["files_changed"] == ["app.py"]
    assert data["shell_changes"] == {"runs_code": [], "ignored": {}, "setid_removed": [], "tracked": True}


def test_the_stream_json_subscriber_prints_the_result_line_from_the_event(tmp_path: Path) -> None:
    output, stream = headless(tmp_path, "stream-json")
    output(closed(stop_reason="max_turns", limit="turns"))
    [line] = stream.getvalue().splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["limit"] == "turns" and result["warnings"] == []


def test_the_trace_leaves_the_closing_out(tmp_path: Path) -> None:
    """The trace ends with `session_end` (DESIGN §7); the runner closes the run after the trace is
    closed, so a closing that were traced would write to a closed file."""
    path = tmp_path / "t.jsonl"
    trace = JsonlTrace(path)
    trace(SessionEnd("end_turn", 1, 0, 10, 2))
    trace(closed())
    trace.close()
    trace(closed())  # after close, as the runner emits it: nothing is written, nothing fails
    assert [e["event"] for e in read_trace(path)] == ["session_end"]


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_an_extra_subscriber_hears_the_closing_the_output_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    script = tmp_path / "s.json"
    write = {"name": "Write", "input": {"file_path": "notes.txt", "content": "hello\n"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"text": "wrote it"}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = ["-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--output-format", fmt]
    args = global_parser().parse_args([*argv, "--allow", "Write"])
    ready = prepare(args)
    heard: list[RunClosed] = []
    ready.session.bus.subscribe(lambda event: heard.append(event) if isinstance(event, RunClosed) else None)
    assert execute(args, ready.session, ready.cfg, "write notes") == 0
    [event] = heard
    assert event.result == "wrote it" and event.files_changed == ["notes.txt"] and event.turns == 2
    assert event.trace == str(ws / ".arnes" / "traces" / f"{ready.session.id}.jsonl")
    out = capsys.readouterr().out
    if fmt == "json":
        data = json.loads(out)
        assert {key: data[key] for key in event.payload()} == event.payload()
        assert event.diffs is None  # the JSON shows none: not computed
    else:
        assert event.diffs == ["--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n"]
        assert out.endswith("files changed: notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n")
