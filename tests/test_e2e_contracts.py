"""The file tools keep their contract for every model, and the `off` profile changes and makes no call.

The real `arnes` command against the fake OpenAI server, answering as a frontier model and as a
small local one: read-before-edit, Write replaces, Edit replaces exactly old_string.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

MODULE = "def price(x):\n    return x * 2\n\n\ndef tax(x):\n    return x * 0.2\n"
REWRITE = "def price(x):\n    return x * 3\n"

# (model, extra flags): a frontier model, a small local one with native calls, and its profile forced off.
PROFILES = [
    ("claude-sonnet-4-5", []),
    ("gpt-5", []),
    ("qwen2.5-coder-1.5b-instruct", []),  # the small profile's whole format: a native call still keeps the contract
    ("qwen2.5-coder-1.5b-instruct", ["--edit-format", "tools"]),
    ("qwen2.5-coder-1.5b-instruct", ["--edit-format", "search-replace"]),
    ("qwen2.5-coder-1.5b-instruct", ["--steering", "off", "--edit-format", "tools"]),
]


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


def run(tmp_path: Path, model: str, flags: list[str], turns: list[dict[str, Any]]) -> Any:
    task = "change the price function"  # names no file: the small profile would show a named one
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "util.py").write_text(MODULE)
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([*turns, {"text": "Done."}]) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", model, *flags,
            "-w", str(ws), "--permission-mode", "acceptEdits", "--trace", str(trace), "--output-format", "json", task,
        )  # fmt: skip
    assert done.code == 0, done.err
    return ws, read_trace(trace), json.loads(done.out)


def results(events: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    return [(e["name"], e["is_error"], e["output"]) for e in events if e["event"] == "tool_result"]


@pytest.mark.parametrize(("model", "flags"), PROFILES)
def test_a_write_over_an_unread_file_is_refused_then_replaces_it_whole(tmp_path: Path, model: str, flags: Any) -> None:
    write = call("Write", file_path="util.py", content=REWRITE)
    ws, events, _ = run(tmp_path, model, flags, [{"tool_calls": [write]}, {"tool_calls": [write]}])
    first, second = results(events)
    assert first[1] and first[2].startswith("util.py has not been read yet, so this Write was not made.")
    assert not second[1] and second[2] == "Overwrote util.py (2 lines)."
    assert (ws / "util.py").read_text() == REWRITE  # replaced, not appended below the old module


@pytest.mark.parametrize(("model", "flags"), PROFILES)
def test_an_edit_replaces_exactly_old_string_and_nothing_is_guessed(tmp_path: Path, model: str, flags: Any) -> None:
    read = call("Read", file_path="util.py")
    unread = call("Edit", file_path="util.py", old_string="return x * 2", new_string="return x * 4")
    guess = call("Edit", file_path="util.py", old_string="rate = 0.2", new_string="rate = 0.3")
    empty = call("Edit", file_path="util.py", old_string="", new_string="def extra():\n    pass\n")
    turns = [{"tool_calls": [unread]}, {"tool_calls": [read]}, {"tool_calls": [guess]}, {"tool_calls": [guess]},
             {"tool_calls": [empty]}, {"tool_calls": [unread]}]  # fmt: skip
    ws, events, _ = run(tmp_path, model, flags, turns)
    got = results(events)
    edits = [r for r in got if r[0] == "Edit"]
    assert edits[0][1] and "has not been read yet" in edits[0][2]
    assert edits[1][1] and edits[2][1] and "old_string not found" in edits[2][2]  # asked twice: still no guess
    assert edits[3][1] and "old_string is empty" in edits[3][2]
    assert edits[4] == ("Edit", False, "Edited util.py: replaced 1 occurrence.")
    assert (ws / "util.py").read_text() == MODULE.replace("return x * 2", "return x * 4")


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5"])
def test_with_off_no_call_is_changed_or_made_and_nothing_is_steered(tmp_path: Path, model: str) -> None:
    """The boundary: a frontier model's replies, calls and results pass untouched."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_util.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                                     "        self.assertTrue(False)\n")  # fmt: skip
    read = call("Read", file_path="util.py", offset=1, limit=1)  # the small profile would widen this
    write = call("Write", file_path="util.py", content="x = {\n")  # broken Python: small would refuse once
    turns = [
        {"tool_calls": [read]},
        {"tool_calls": [write]},
        {"text": "```python\ndef price(x):\n    return x * 5\n```"},  # code in the chat: small would nudge
        {"text": "```python\ndef price(x):\n    return x * 5\n```"},
    ]
    done_ws, events, out = run(tmp_path, model, ["--sandbox", "off", "--trust"], turns)
    assert [e for e in events if e["event"] == "steered"] == []
    assert all(e.get("by", "model") == "model" for e in events if e["event"] == "tool_call")
    calls = [(e["name"], e["input"]) for e in events if e["event"] == "tool_call"]
    assert calls == [(c["name"], c["input"]) for c in (read, write)]
    assert results(events)[0][2].startswith("     1\tdef price(x):\n... (5 more lines")
    assert (done_ws / "util.py").read_text() == "x = {\n"
    assert out["tool_calls"] == 2 and out.get("arnes_calls", 0) == 0
    assert out["result"].startswith("```python")  # the reply stood as the answer


def test_the_small_profile_shows_its_interventions_in_trace_and_stream_json(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "util.py").write_text(MODULE)
    turns = [{"text": ""}, {"tool_calls": [call("Read", file_path="util.py", limit=1)]}, {"text": "Done."}]
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(turns) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b",
            "--edit-format", "tools", "-w", str(ws), "--trace", str(trace), "--output-format", "stream-json", "look",
        )  # fmt: skip
    assert done.code == 0, done.err
    steered = [e for e in read_trace(trace) if e["event"] == "steered"]
    assert [(e["piece"], e["moment"], e["action"]) for e in steered] == [
        ("nudge", "reply", "nudge"),
        ("small-read", "call", "rewrite"),
    ]
    assert steered[1]["sent"] == 'Read {"file_path": "util.py", "limit": 1}'  # what the model sent, then what ran
    assert steered[1]["ran"].endswith('Read {"file_path": "util.py"}')
    lines = [json.loads(line) for line in done.out.splitlines()]
    system = [(o["piece"], o["action"]) for o in lines if o.get("type") == "system" and o.get("subtype") == "steered"]
    assert system == [("nudge", "nudge"), ("small-read", "rewrite")]


MATH_TEST = (
    "import unittest\n\nfrom mathutil import add\n\n\nclass T(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


def test_the_whole_format_writes_the_reply_s_files_never_the_tests_and_the_tests_judge(tmp_path: Path) -> None:
    """A small model's reply in aider's `whole` format: applied through the gate as Writes (Write is not
    offered, yet the format's Writes run), a test file in it is refused, and the self-check runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mathutil.py").write_text("def add(a, b):\n    pass\n")
    (ws / "mathutil_test.py").write_text(MATH_TEST)
    wrong = "mathutil.py\n```python\ndef add(a, b):\n    return a - b\n```\n"
    cheat = "mathutil_test.py\n```python\nimport unittest\n```\n"
    right = "mathutil.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    turns = [{"text": wrong + "\n" + cheat}, {"text": right}, {"text": "never asked"}]
    trace = tmp_path / "t.jsonl"
    task = "Implement add in mathutil.py. The tests are in mathutil_test.py; they are correct, don't change them."
    with FakeLLMServer(turns) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b-instruct",
            "-w", str(ws), "--permission-mode", "bypass", "--sandbox", "off", "--trust",
            "--trace", str(trace), "--output-format", "json", task,
        )  # fmt: skip
        offered = [t["function"]["name"] for t in server.requests[0][1]["tools"]]
    assert done.code == 0, done.err
    assert offered == ["Bash"]  # the small profile in `whole`: the reply changes files, the files are shown
    assert (ws / "mathutil.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (ws / "mathutil_test.py").read_text() == MATH_TEST
    events = read_trace(trace)
    made = [(e["name"], e["input"].get("file_path") or e["input"].get("command")) for e in events
            if e["event"] == "tool_call" and e.get("by") == "arnes"]  # fmt: skip
    assert made[0] == ("Write", "mathutil.py")
    assert ("Bash", "python -m unittest discover -q -s . -p '*_test.py'") in made
    said = [b.get("text", "") for e in events if e["event"] == "message" and e["role"] == "user" for b in e["content"]]
    assert any("mathutil_test.py: NOT applied" in t and "test file" in t for t in said)
    out = json.loads(done.out)
    assert out["result"] == right and out["tool_calls"] == 0 and out["arnes_calls"] >= 3


@pytest.mark.parametrize(
    ("flags", "offered"), [((), ["Bash"]), (("--tools", "Grep,Read,Write,Edit,Bash"), ["Read", "Grep", "Bash"])]
)
def test_the_users_tools_list_replaces_the_profiles(tmp_path: Path, flags: tuple[str, ...], offered: list[str]) -> None:
    """The small profile hides Read, Glob and Grep in `whole` (a task naming its file) when nobody said;
    `--tools` is the user's word."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer([{"text": "ok"}]) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b-instruct",
            "--steering", "tests", "-w", str(ws), *flags, "Add a title to notes.md",
        )  # fmt: skip
        sent = [t["function"]["name"] for t in server.requests[0][1]["tools"]]
    assert done.code == 0, done.err
    assert sent == offered


@pytest.mark.parametrize(
    ("task", "offered"),
    [
        ("Fix the rounding in util.py", ["Bash"]),  # names a file of the workspace: whole, as the profile
        ("Create notes.md with a title", ["Bash"]),  # names a file to create
        ("Invoices show the wrong total; find where and fix it", ["Read", "Glob", "Grep", "Write", "Edit", "Bash"]),
    ],
)
def test_the_auto_edit_format_is_whole_when_the_task_names_files(tmp_path: Path, task: str, offered: list[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "util.py").write_text(MODULE)
    with FakeLLMServer([{"text": "ok"}]) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b-instruct",
            "--steering", "tests", "--edit-format", "auto", "-w", str(ws), "--trace", str(tmp_path / "t.jsonl"), task,
        )  # fmt: skip
        sent = [t["function"]["name"] for t in server.requests[0][1]["tools"]]
    assert done.code == 0, done.err
    assert [name for name in sent if name not in ("BashOutput", "KillShell")] == offered
    [start] = [e for e in read_trace(tmp_path / "t.jsonl") if e["event"] == "session_start"]
    assert start["edit_format"] == ("whole" if offered == ["Bash"] else "tools")


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--provider", "openai", "--model", "gpt-5"], "profile: frontier (steering off: none; edit format tools)"),
        (["--model", "qwen2.5-coder:7b"], "profile: small-local (steering small: named-files,"),
        (["--model", "qwen2.5-coder:7b", "--steering", "small,+fresh-draws"], "6 fresh draws at temperature 0.7)"),
        (["--model", "qwen2.5-coder:7b", "--steering", "off", "--edit-format", "tools"], "(steering off: none; edit"),
        (["--model", "qwen2.5-coder:7b", "--steering", "small,-nudge"], "small,-nudge: named-files,"),
    ],
)
def test_doctor_names_the_profile_and_its_overrides(tmp_path: Path, flags: list[str], shown: str) -> None:
    done = run_arnes("-w", str(tmp_path), *flags, "doctor")
    assert shown in done.out


def test_the_closing_line_counts_the_calls_arnes_made_apart(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "notes.md\n```markdown\n# notes\n```\n"}]}))
    done = run_arnes(
        "--provider", "script", "--script", str(script), "--steering", "small", "--edit-format", "whole",
        "-w", str(ws), "--permission-mode", "acceptEdits", "write notes",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert (ws / "notes.md").read_text() == "# notes\n"
    assert "[end_turn] 1 turns, 0 calls (+1 by arnes)," in done.out
