"""Calls models trained on Claude Code still make to tools arnes does not offer (survey 4, T4-01,
T4-02): `MultiEdit` is an Edit with several changes (all or none, through the same gate, hooks,
read-before-edit and rewind), `LS` lists a folder as a read of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import scripted_run

CALC = 'def add(a, b):\n    return a+b\n\nNAME = "old"\n'


def multi(path: str, *edits: tuple[str, str]) -> dict[str, Any]:
    listed = [{"old_string": old, "new_string": new} for old, new in edits]
    return {"name": "MultiEdit", "input": {"file_path": path, "edits": listed}}


def read(path: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": path}}


def results(trace: Path) -> list[tuple[str, bool, str]]:
    return [(e["name"], e["is_error"], str(e["output"])) for e in read_trace(trace) if e["event"] == "tool_result"]


def test_multiedit_applies_every_edit_or_none_as_an_edit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("calc.py", "bad.py", "unread.py", "locked.py", "hooked.py"):
        (ws / name).write_text(CALC)
    (ws / ".arnes").mkdir()
    guard = {"matcher": "Edit", "hooks": [{"type": "command", "command": "grep -q hooked.py && exit 2; exit 0"}]}
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [guard]}}))
    both = (("return a+b", "return a + b"), ('NAME = "old"', 'NAME = "new"'))
    turns: list[dict[str, object]] = [
        {"tool_calls": [read("calc.py"), read("bad.py"), read("locked.py"), read("hooked.py")]},
        {"tool_calls": [multi("calc.py", *both)]},
        # The second edit works on the first one's result: "a + b" is there only after it.
        {"tool_calls": [multi("bad.py", ("return a+b", "return a + b"), ("a+b", "a - b"))]},
        {"tool_calls": [multi("unread.py", *both)]},
        {"tool_calls": [multi("locked.py", *both)]},
        {"tool_calls": [multi("hooked.py", *both)]},
        {"text": "done"},
    ]
    trace, printed = scripted_run(tmp_path, ws, turns, "--permission-mode", "acceptEdits", "--trust",
                                  "--deny", "Edit(locked.py)")  # fmt: skip
    got = results(trace)[4:]
    assert [name for name, _, _ in got] == ["Edit"] * 5, printed
    assert (ws / "calc.py").read_text() == 'def add(a, b):\n    return a + b\n\nNAME = "new"\n', got[0]
    assert not got[0][1] and "2 edits" in got[0][2]
    assert got[1][1] and "edit 2 of 2" in got[1][2] and "No edit was made" in got[1][2], got[1]
    assert (ws / "bad.py").read_text() == CALC  # all or none
    assert got[2][1] and (ws / "unread.py").read_text() == CALC  # read before edit, as Edit
    assert got[3][1] and "Permission denied" in got[3][2] and (ws / "locked.py").read_text() == CALC
    assert got[4][1] and "PreToolUse hook" in got[4][2] and (ws / "hooked.py").read_text() == CALC


def test_ls_lists_a_folder_as_a_read_of_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("x = 1\n")
    (ws / "secrets").mkdir()
    ls = [{"tool_calls": [{"name": "LS", "input": {"path": "src"}}]},
          {"tool_calls": [{"name": "LS", "input": {"path": str(ws / "secrets")}}]}, {"text": "done"}]  # fmt: skip
    trace, out = scripted_run(tmp_path, ws, ls, "--deny", "Read(secrets/**)")
    (name, failed, listed), (_, refused, _) = results(trace)
    assert name == "Bash" and not failed and "main.py" in listed and "pkg/" in listed, out
    assert refused  # a folder a deny rule covers is not listed
