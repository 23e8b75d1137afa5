"""Claude Code's `disableAllHooks`, end to end with the real `arnes`: your own file turns every hook
off; a project's file only the project's own, never your guard hooks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import scripted_run


def guard(word: str) -> dict[str, Any]:
    block = {"type": "command", "command": f"echo {word} >&2; exit 2"}
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [block]}]}


def settings(path: Path, **keys: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(keys))


def ran(tmp_path: Path, ws: Path) -> tuple[list[str], list[str], str]:
    """(the hooks that ran, the tool results, all printed) of one `echo hello` call."""
    turns: list[dict[str, object]] = [{"tool_calls": [{"name": "Bash", "input": {"command": "echo hello"}}]}]
    trace, said = scripted_run(tmp_path, ws, [*turns, {"text": "done"}], "--trust")
    events = read_trace(trace)
    hooks = [e["command"] for e in events if e["event"] == "hook"]
    return hooks, [e["output"] for e in events if e["event"] == "tool_result"], said


def test_your_disable_all_hooks_turns_off_every_hook(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    settings(Path(os.environ["HOME"]) / ".claude" / "settings.json", disableAllHooks=True, hooks=guard("user-guard"))
    settings(ws / ".claude" / "settings.json", hooks=guard("project-guard"))
    hooks, outputs, said = ran(tmp_path, ws)
    assert hooks == [] and outputs == ["exit code: 0\nhello"], said


def test_a_projects_disable_all_hooks_turns_off_only_its_own(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    settings(Path(os.environ["HOME"]) / ".claude" / "settings.json", hooks=guard("user-guard"))
    settings(ws / ".claude" / "settings.json", disableAllHooks=True, hooks=guard("project-guard"))
    hooks, outputs, said = ran(tmp_path, ws)
    assert hooks == ["echo user-guard >&2; exit 2"], said
    assert "user-guard" in outputs[0] and "hello" not in outputs[0]
    assert said.count("disableAllHooks turns off only this project's own hooks; yours still run") == 1
