"""A session is built once (issue 22.9): its parts are given when it is made, never patched on after.

The runner builds every part first (the sandbox, hooks, MCP servers, checkpoints, the verifier,
the trace's path) and hands them to the session; the session refuses an attribute set afterwards,
so a command that went back to patching would fail every test that runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.cliargs import global_parser
from arnes.llm.script import ScriptProvider
from arnes.runner import build_session, resolve_config
from arnes.session import Session


def _session(tmp_path: Path) -> Session:
    return Session(tmp_path, ScriptProvider.from_turns([]))


@pytest.mark.parametrize(
    "name", ["verifier", "hooks", "mcp", "checkpoints", "self_check", "roles", "approver", "trace_path", "agents"]
)
def test_what_a_session_is_made_of_cannot_be_set_after(tmp_path: Path, name: str) -> None:
    session = _session(tmp_path)
    with pytest.raises(AttributeError, match=f"Session.{name} is given when the session is built"):
        setattr(session, name, getattr(session, name))


def test_what_a_user_changes_while_it_runs_can_be(tmp_path: Path) -> None:
    """The model (/model, set_model), the mode (/mode, set_permission_mode), a smaller window."""
    session = _session(tmp_path)
    other = ScriptProvider.from_turns([])
    session.provider = other
    session.mode = "plan"
    session.context_window = 4096
    assert (session.provider, session.mode, session.context_window) == (other, "plan", 4096)


def test_the_runner_gives_the_session_every_part(tmp_path: Path) -> None:
    """Hooks, checkpoints, the verifier, the trace and transcript paths and the self-check are
    there when build_session returns, before any subscriber or command touches it."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / "test_x.py").write_text("def test_x():\n    assert True\n")
    hooks = {"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "true"}]}]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(hooks))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": []}))
    argv = ["--provider", "script", "--script", str(script), "--workspace", str(ws), "--trust", "--verify", "auto"]
    args = global_parser().parse_args(argv)
    cfg = resolve_config(args, ws, ask=False)
    session = build_session(args, ws, cfg, "s-1", verify=args.verify, verify_rounds=2, self_check=False)
    try:
        assert session.hooks is not None
        assert session.checkpoints is not None
        assert session.verifier is not None and session.verifier.rounds == 2
        assert session.trace_path == ws.resolve() / ".arnes" / "traces" / "s-1.jsonl"
        assert session.transcript_path is not None and session.transcript_path.name == "s-1.jsonl"
        assert session.self_check is False
        assert session.ctx.changes.on_write is not None  # the checkpoints hear of each write
    finally:
        session.close()
