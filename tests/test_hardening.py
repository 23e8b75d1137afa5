"""Loop and tool hardening found in review: races, odd paths, odd files, resumable traces."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arnes.agent.loop import Agent
from arnes.agent.resume import UNRECORDED, load_history
from arnes.host.atomic import atomic_write
from arnes.llm.script import ScriptProvider
from arnes.messages import Message, TextBlock, ToolCall, ToolResultBlock
from arnes.session import Session
from arnes.tools.base import ToolContext, ToolError
from arnes.tools.files import Read, ReadArgs


def test_a_write_lands_on_the_real_path_that_was_judged(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "inside.txt").write_text("old\n")
    (ws / "link").symlink_to(outside / "pwned")  # swapped in after the decision
    atomic_write(ws / "link", b"new\n", real=ws / "inside.txt")
    assert (ws / "inside.txt").read_text() == "new\n" and not (outside / "pwned").exists()


def test_a_folder_swapped_for_a_link_makes_the_write_fail(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "sub").symlink_to(outside)  # judged when `sub` was a real folder inside
    with pytest.raises(OSError, match="changed while writing"):
        atomic_write(ws / "sub" / "a.txt", b"x", real=ws / "sub" / "a.txt")
    assert list(outside.iterdir()) == []


def test_nul_bytes_in_paths_are_refused_not_crashes(tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": n, "input": i}]} for n, i in [
        ("Read", {"file_path": "a\u0000b"}), ("Write", {"file_path": "a\u0000b", "content": "x"}),
        ("Glob", {"pattern": "*", "path": "a\u0000b"}), ("Bash", {"command": "cat 'a\u0000b'"}),
    ]]  # fmt: skip
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="bypass")
    agent = Agent(session)
    result = agent.run("go")
    assert result.stop_reason == "end_turn" and result.tool_calls == 4
    results = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert all(r.is_error for r in results[:3])


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        Read().run(ReadArgs(file_path="pipe"), ToolContext(tmp_path))


def _trace(path: Path, messages: list[Message]) -> None:
    lines = [json.dumps({"event": "message", **m.to_json()}) for m in messages]
    path.write_text("\n".join(lines) + "\n")


def test_resume_answers_every_call_left_without_a_result(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    call_a, call_b = ToolCall("a", "Read", {"file_path": "x"}), ToolCall("b", "Read", {"file_path": "y"})
    _trace(trace, [
        Message.user("task"),
        Message("assistant", [call_a, call_b]),
        Message("user", [ToolResultBlock("a", "done")]),  # b never got its result
        Message("assistant", [ToolCall("c", "Glob", {"pattern": "*"})]),  # nor c: the run died here
    ])  # fmt: skip
    history = load_history(trace)
    first = {b.tool_call_id: b for b in history[2].content if isinstance(b, ToolResultBlock)}
    assert first["a"].content == "done" and first["b"].content == UNRECORDED
    assert history[-1].role == "user" and history[-1].content[0] == ToolResultBlock("c", UNRECORDED, True)


def test_a_limit_mid_turn_leaves_a_resumable_trace(tmp_path: Path) -> None:
    from arnes.agent.budget import Budget
    from arnes.agent.trace import JsonlTrace

    (tmp_path / "a.txt").write_text("x\n")
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]}] * 3
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), budget=Budget(max_tokens=10))
    trace = JsonlTrace(tmp_path / "t.jsonl")
    session.bus.subscribe(trace)
    result = Agent(session).run("go")
    trace.close()
    assert result.stop_reason == "budget"
    history = load_history(tmp_path / "t.jsonl")
    calls = {c.id for m in history for c in m.tool_calls}
    answered = {b.tool_call_id for m in history for b in m.content if isinstance(b, ToolResultBlock)}
    assert calls and calls == answered
    assert history[0].content[-1] == TextBlock("go")  # after the session's context


def test_bad_files_are_clear_errors_with_exit_2(shop: Path, tmp_path: Path) -> None:
    from tests.conftest import run_arnes

    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_bytes(b'{"model": "\xff"}')
    run = run_arnes("-w", str(shop), "x")
    assert run.code == 2 and "settings.json: not UTF-8" in run.err and "Traceback" not in run.err
    (shop / ".arnes" / "settings.json").unlink()
    (shop / "features.json").write_bytes(b"\xff\xfe")
    assert run_arnes("-w", str(shop), "features").code == 2
    (shop / ".arnes" / "teams").mkdir()
    (shop / ".arnes" / "teams" / "t.toml").write_bytes(b"\xff")
    assert run_arnes("-w", str(shop), "team", "show", "t").code == 2
    trace_dir = tmp_path / "a-folder"
    trace_dir.mkdir()
    bad_trace = run_arnes("--provider", "script", "--script", str(tmp_path / "none.json"), "-w", str(shop), "x")
    assert bad_trace.code == 2
    script = tmp_path / "s.json"
    script.write_text('{"turns": []}')
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(trace_dir), "x")
    assert run.code == 2 and "cannot write the trace" in run.err


def test_bad_eval_folders_and_reports_are_clear_errors(tmp_path: Path) -> None:
    from tests.conftest import run_arnes

    task = tmp_path / "tasks" / "t"
    (task / "verify").mkdir(parents=True)  # a folder where a file belongs
    (task / "task.md").write_text("x")
    (task / "workspace").write_text("not a folder")
    run = run_arnes("--provider", "script", "eval", str(tmp_path / "tasks"))
    assert run.code == 2 and "workspace (a folder)" in run.err and "verify (a file)" in run.err
    for content in ("[1]", '{"tasks": {}}'):
        (tmp_path / "r.json").write_text(content)
        run = run_arnes("eval", "compare", str(tmp_path / "r.json"), str(tmp_path / "r.json"))
        assert run.code == 2 and "not an eval report" in run.err


def test_resume_skips_lines_it_cannot_use(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    lines = [
        json.dumps({"event": "message", "role": "user", "content": [{"type": "text", "text": "task"}]}),
        json.dumps({"event": "message", "role": "assistant"}),  # no content
        "[1, 2]",
        '{"event": "message", "role": "assist',  # cut by a crash
    ]
    trace.write_text("\n".join(lines) + "\n")
    assert load_history(trace) == [Message.user("task")]


def test_grep_never_shows_a_hidden_line_split_by_a_form_feed(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("matchme\x0cTOPSECRET_FF\n")
    (tmp_path / "a.txt").write_text("matchme here\n")
    turns = [{"tool_calls": [{"name": "Grep", "input": {"pattern": "matchme", "output_mode": "content"}}]}]
    from arnes.permissions.rules import SourcedRule

    session = Session(
        workspace=tmp_path,
        provider=ScriptProvider.from_turns(turns),
        rules=[SourcedRule("deny", "Read(**/.env*)", "t")],
    )
    agent = Agent(session)
    agent.run("go")
    (result,) = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert "TOPSECRET" not in result.content and "a.txt:1:matchme here" in result.content


def test_secrets_are_denied_by_default_until_the_users_settings_allow_them(shop: Path, tmp_path: Path) -> None:
    import json as _json
    import os as _os

    from arnes.agent.trace import read_trace
    from tests.conftest import run_arnes

    (shop / ".env").write_text("TOKEN=s3cr3t-value\n")
    (shop / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    script = tmp_path / "s.json"
    calls = [{"tool_calls": [{"name": "Read", "input": {"file_path": f}}]} for f in (".env", "deploy.pem")]
    script.write_text(_json.dumps({"turns": [*calls, {"tool_calls": [{"name": "Grep", "input": {
        "pattern": "s3cr3t", "output_mode": "content"}}]}, {"text": "done"}]}))  # fmt: skip
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(trace), "x")
    assert run.code == 0
    assert "s3cr3t-value" not in trace.read_text()
    reasons = [e["reason"] for e in read_trace(trace) if e["event"] == "permission" and e["decision"] == "deny"]
    assert reasons[:2] == ["rule Read(**/.env)", "rule Read(**/*.pem)"]
    # the user's own settings lift one; a project's cannot (its allow is a grant, and deny wins anyway)
    user = Path(_os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(_json.dumps({"permissions": {"allow": ["Read(**/.env)"]}}))
    again = tmp_path / "t2.jsonl"
    run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(again), "x")
    assert "s3cr3t-value" in again.read_text() and "BEGIN PRIVATE KEY" not in again.read_text()
    listing = run_arnes("-w", str(shop), "permissions")
    assert "secrets (.env files, keys, credentials) are denied by default" in listing.out
