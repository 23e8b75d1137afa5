"""Before the model's answer stands after a change: arnes runs the project's tests.

Qwen2.5-Coder-1.5B: it changed paging.py to `start = number * size + 1` and said it
was done; the tests beside it, never run, would have shown the change was wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.adapt.selfcheck import FAILED, MOST_RUNS, STILL_RED, SelfCheck
from arnes.agent.trace import read_trace
from arnes.host.testcmd import runs_tests
from arnes.messages import ToolCall, ToolResultBlock
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

PAGING = (
    "def page(items: list[int], number: int, size: int) -> list[int]:\n"
    '    """Page `number` (1-based) of `items`, `size` items a page."""\n'
    "    start = (number - 1) * size + 1\n"
    "    return items[start : start + size]\n"
)
TEST_PAGING = (
    "import unittest\n\nfrom paging import page\n\n\nclass PageTest(unittest.TestCase):\n"
    "    def test_pages(self) -> None:\n"
    "        items = list(range(10))\n"
    "        self.assertEqual(page(items, 1, 4), [0, 1, 2, 3])\n"
    "        self.assertEqual(page(items, 3, 4), [8, 9])\n"
)


def paging(tmp_path: Path, with_tests: bool = True) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "paging.py").write_text(PAGING)
    if with_tests:
        (ws / "test_paging.py").write_text(TEST_PAGING)
    return ws


def edit(old: str, new: str) -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": "paging.py", "old_string": old, "new_string": new}}


def bash(command: str) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command}}


def user_texts(trace: Path) -> list[str]:
    return [
        b.get("text", "")
        for e in read_trace(trace)
        if e["event"] == "message" and e["role"] == "user"
        for b in e["content"]
        if b.get("type") == "text"
    ]


def as_llama(ws: Path, trace: Path, turns: list[dict[str, Any]]) -> tuple[Any, int]:
    """The real command against a server printing its calls as text, as llama.cpp with the 1.5B model
    does; the run and how many requests the server got."""
    with FakeLLMServer(turns, text_tool_calls=True) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b",
            "--edit-format", "tools",
            "-w", str(ws), "--permission-mode", "acceptEdits", "--trace", str(trace), "--output-format", "json",
            "`page(items, number, size)` in paging.py skips the first item of every page. Fix it.",
        )  # fmt: skip
        return run, len(server.requests)


def test_a_wrong_fix_is_tested_by_arnes_and_the_failure_goes_back_end_to_end(tmp_path: Path) -> None:
    ws, trace = paging(tmp_path), tmp_path / "t.jsonl"
    turns = [
        {"tool_calls": [edit("start = (number - 1) * size + 1", "start = number * size + 1")]},
        {"text": "I changed the line in paging.py to start = number * size + 1."},
        {"tool_calls": [edit("start = number * size + 1", "start = (number - 1) * size")]},
        {"text": "Fixed."},
    ]
    run, asked = as_llama(ws, trace, turns)
    assert run.code == 0, run.err
    out = json.loads(run.out)
    assert out["result"] == "Fixed." and asked == 4  # the green run after the fix costs no model call
    assert out["tool_calls"] == 2 and out["denials"] == []  # the model's calls; arnes's own are not counted
    assert "start = (number - 1) * size\n" in (ws / "paging.py").read_text()
    events = read_trace(trace)
    checks = [e for e in events if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash"]
    ran = {"command": "python -m unittest -q", "timeout": 300_000}  # verify.timeout's default, in ms
    assert [(c["name"], c["input"]) for c in checks] == [("Bash", ran)] * 2
    results = {e["id"]: e["is_error"] for e in events if e["event"] == "tool_result"}
    assert [results[c["id"]] for c in checks] == [True, False]  # red after the wrong fix, green after the right one
    [failed] = [t for t in user_texts(trace) if t.startswith("[arnes] You changed paging.py, and the project's tests")]
    assert "AssertionError" in failed and "arnes ran `python -m unittest -q`" in failed
    notices = [e["message"] for e in events if e["event"] == "notice"]
    assert notices.count("running the tests before the answer stands: python -m unittest -q") == 2


def test_a_fix_printed_as_numbered_code_after_a_red_check_is_spelled_out_as_its_edit(tmp_path: Path) -> None:
    """The 1.5B model: told its fix failed, it printed the whole file as Read numbers
    it, line 3 changed, and the run ended with the tests red."""
    ws, trace = paging(tmp_path), tmp_path / "t.jsonl"
    printed = (
        "```\n"
        + "\n".join(f"{n}\t{line}" for n, line in enumerate(PAGING.replace("+ 1\n", "\n").splitlines(), start=1))
        + "\n```"
    )
    fix = edit("    start = number * size", "    start = (number - 1) * size")
    turns = [
        {"tool_calls": [edit("start = (number - 1) * size + 1", "start = number * size + 1")]},
        {"text": "Done."},
        {"text": printed.replace("(number - 1) * size", "number * size")},  # still wrong: spelled out, made, red
        {"tool_calls": [edit("    start = number * size + 1", "    start = number * size")]},  # the copied call
        {"text": "Done again."},
        {"text": printed},  # the right one
        {"tool_calls": [fix]},
        {"text": "Fixed."},
    ]
    run, _ = as_llama(ws, trace, turns)
    assert run.code == 0, run.err
    said = user_texts(trace)
    spelled = [t for t in said if t.startswith("[arnes] No file was changed: your reply only shows code.")]
    assert len(spelled) == 2
    calls = [json.loads(t.split("\n", 1)[1])["arguments"] for t in spelled]
    assert [(c["old_string"], c["new_string"]) for c in calls] == [
        ("    start = number * size + 1", "    start = number * size"),
        ("    start = number * size", "    start = (number - 1) * size"),
    ]
    assert json.loads(run.out)["result"] == "Fixed."
    assert "start = (number - 1) * size\n" in (ws / "paging.py").read_text()


def test_the_check_shows_on_screen_and_a_green_one_costs_no_model_call(tmp_path: Path) -> None:
    ws = paging(tmp_path)
    turns = [{"tool_calls": [edit("size + 1", "size")]}, {"text": "Fixed."}]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                    "--permission-mode", "acceptEdits",
                    "fix paging.py")  # fmt: skip
    assert run.code == 0, run.err
    assert "running the tests before the answer stands: python -m unittest -q" in run.out
    assert "> (arnes) Bash python -m unittest -q" in run.out and "[end_turn] 2 turns" in run.out


def test_a_red_run_of_the_models_own_left_red_gets_one_more_word(tmp_path: Path) -> None:
    ws, trace = paging(tmp_path), tmp_path / "t.jsonl"
    turns = [
        {"tool_calls": [edit("start = (number - 1) * size + 1", "start = number * size + 1")]},
        {"tool_calls": [bash("python -m unittest -q")]},
        {"text": "Done."},
        {"text": "Done, really."},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                    "--permission-mode", "acceptEdits",
                    "--trace", str(trace), "fix paging.py")  # fmt: skip
    assert run.code == 0, run.err
    said = user_texts(trace)
    assert said.count(STILL_RED) == 1 and "Done, really." in run.out  # said once, then the answer stands
    assert not [
        e for e in read_trace(trace) if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash"
    ]


def test_no_check_without_tests_with_a_verify_command_opted_out_or_when_it_would_ask(tmp_path: Path) -> None:
    turns = [{"tool_calls": [edit("size + 1", "size")]}, {"text": "Fixed."}]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    cases = [
        (False, ["--permission-mode", "acceptEdits"]),
        (True, ["--permission-mode", "acceptEdits", "--verify", "python -m unittest -q"]),
        (True, ["--permission-mode", "acceptEdits", "--no-self-check"]),
        (True, ["--permission-mode", "acceptEdits", "--deny", "Bash(python:*)"]),
        (True, ["--permission-mode", "acceptEdits", "--sandbox", "off", "--trust"]),  # trusted, but Bash would ask
        (True, ["--permission-mode", "bypass", "--sandbox", "off"]),  # would run unconfined in an untrusted folder
        (True, ["--permission-mode", "bypass", "--sandbox", "landlock"]),  # no bubblewrap, not trusted
    ]
    for n, (with_tests, extra) in enumerate(cases):
        ws = paging(tmp_path / str(n), with_tests)
        trace = tmp_path / f"{n}.jsonl"
        run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                        "--trace", str(trace),
                        "--output-format", "json", *extra, "fix paging.py")  # fmt: skip
        assert run.code == 0, (extra, run.err)
        assert "(number - 1) * size\n" in (ws / "paging.py").read_text()
        events = read_trace(trace)
        assert not [
            e for e in events if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash"
        ], extra
        assert json.loads(run.out)["denials"] == [], extra  # a check left out is not a denial


def test_a_trusted_folder_is_checked_outside_bubblewrap_and_documentation_alone_never(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": [edit("size + 1", "size")]}, {"text": "Fixed."}]}))
    ws, trace = paging(tmp_path / "t"), tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                    "--trace", str(trace),
                    "--permission-mode", "bypass", "--sandbox", "off", "--trust", "fix paging.py")  # fmt: skip
    assert run.code == 0, run.err
    assert [
        e for e in read_trace(trace) if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash"
    ]
    docs = {"name": "Write", "input": {"file_path": "NOTES.md", "content": "# notes\n"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [docs]}, {"text": "Written."}]}))
    ws, trace = paging(tmp_path / "d"), tmp_path / "d.jsonl"
    run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                    "--trace", str(trace),
                    "--permission-mode", "acceptEdits", "write notes")  # fmt: skip
    assert run.code == 0 and (ws / "NOTES.md").exists(), run.err
    assert not [
        e for e in read_trace(trace) if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash"
    ]


def _check(tmp_path: Path, command: str | None = "python -m unittest -q") -> tuple[SelfCheck, list[Path]]:
    changed: list[Path] = []
    check = SelfCheck(tmp_path, lambda ws: command, lambda: list(changed), lambda p: p.name)
    return check, changed


def _ran(check: SelfCheck, command: str, red: bool) -> None:
    check.after_tools([ToolCall("1", "Bash", {"command": command})], [ToolResultBlock("1", "out", red)])


def test_a_check_is_due_for_what_changed_since_the_tests_last_ran(tmp_path: Path) -> None:
    check, changed = _check(tmp_path)
    assert check.due() is None  # nothing changed
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    changed.append(f)
    assert check.due() == "python -m unittest -q"
    _ran(check, "ls -la", red=False)  # not a test run
    assert check.due() is not None
    _ran(check, "python -m unittest -q", red=False)
    assert check.due() is None and check.still_red() is None  # the model's own green run
    f.write_text("x = 2\n")
    assert check.ran("failed", "  FAIL: x\n") == FAILED.format(
        files="a.py", command="python -m unittest -q", output="FAIL: x"
    )
    assert check.due() is None  # nothing changed since arnes ran them
    f.write_text("x = 3\n")
    assert check.ran("passed", "OK") is None
    f.write_text("x = 4\n")
    assert check.ran("failed", "FAIL") is not None and check.runs == MOST_RUNS
    f.write_text("x = 5\n")
    assert check.due() is None  # three runs per user message at most
    check.reset()
    assert check.due() is not None
    _ran(check, "pytest -x tests/", red=True)
    assert check.due() is None and check.still_red() == STILL_RED
    assert check.still_red() is None  # said once


def test_an_agent_is_not_checked_for_changes_made_before_it_started_or_without_a_test_command(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    changed = [f]
    child = SelfCheck(tmp_path, lambda ws: "pytest -q", lambda: list(changed), lambda p: p.name)
    assert child.due() is None  # the parent's change
    f.write_text("x = 2\n")
    assert child.due() == "pytest -q"  # its own
    none, more = _check(tmp_path, command=None)
    more.append(f)
    assert none.due() is None


def test_what_counts_as_a_test_run() -> None:
    for command in ("python -m pytest -q", "pytest", "npm test", "cargo test", "go test ./...", "make test",
                    "python -m unittest -q", "python test_paging.py", "tox -e py311"):  # fmt: skip
        assert runs_tests(command), command
    for command in ("ls", "cat latest.txt", "git status", "python app.py --contest"):
        assert not runs_tests(command), command
