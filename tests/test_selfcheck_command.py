"""The self-check runs the command that fits the project, and a run of no tests is neither green nor red.

Measured before: with tests in `mathutil_test.py` (the `*_test.py` style) the self-check ran
`python -m unittest -q`, which found nothing, and took "Ran 0 tests" for green.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.adapt.selfcheck import NONE_RAN, STILL_RED, SelfCheck
from arnes.agent.trace import read_trace
from arnes.config import load_config
from arnes.errors import ConfigError
from arnes.messages import ToolCall, ToolResultBlock
from tests.conftest import run_arnes

MATHUTIL = "def add(a: int, b: int) -> int:\n    return a + b\n"
MATHUTIL_TEST = (
    "import unittest\n\nfrom mathutil import add\n\n\nclass AddTest(unittest.TestCase):\n"
    "    def test_add(self) -> None:\n        self.assertEqual(add(2, 3), 5)\n"
)
DISCOVER = "python -m unittest discover -q -s . -p '*_test.py'"


def suffix_tests(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "mathutil.py").write_text(MATHUTIL)
    (ws / "mathutil_test.py").write_text(MATHUTIL_TEST)
    return ws


def edit(old: str, new: str) -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": "mathutil.py", "old_string": old, "new_string": new}}


def scripted(
    tmp_path: Path, ws: Path, turns: list[dict[str, Any]], env: dict[str, str] | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    run = run_arnes("--provider", "script", "--steering", "small", "--script", str(script), "-w", str(ws),
                    "--trace", str(trace),
                    "--permission-mode", "acceptEdits", "fix add in mathutil.py", env=env)  # fmt: skip
    return run, read_trace(trace)


def checks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["input"] for e in events if e["event"] == "tool_call" and e.get("by") == "arnes"]


def user_texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        b.get("text", "")
        for e in events
        if e["event"] == "message" and e["role"] == "user"
        for b in e["content"]
        if b.get("type") == "text"
    ]


def test_suffix_named_tests_are_found_and_their_failure_reaches_the_model(tmp_path: Path) -> None:
    ws = suffix_tests(tmp_path)
    turns = [
        {"tool_calls": [edit("return a + b", "return a - b")]},
        {"text": "Done."},
        {"tool_calls": [edit("return a - b", "return b + a")]},
        {"text": "Fixed."},
    ]
    run, events = scripted(tmp_path, ws, turns)
    assert run.code == 0, run.err
    assert [c["command"] for c in checks(events)] == [DISCOVER, DISCOVER]  # red, then green
    [red] = [t for t in user_texts(events) if t.startswith("[arnes] You changed mathutil.py")]
    assert "Ran 1 test" in red and "AssertionError: -1 != 5" in red and "FAILED (failures=1)" in red
    assert "Fixed." in run.out and "none ran" not in run.out


def test_a_run_of_no_tests_lets_the_answer_stand_and_says_it_is_unchecked(tmp_path: Path) -> None:
    """The user's verify.command names the old bare command: it finds no `*_test.py` file. Neither
    green (nothing checked the change) nor red (nothing faulted the code); verify.timeout bounds it."""
    settings = tmp_path / "config" / "arnes" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"verify": {"command": "python -m unittest -q", "timeout": 42}}))
    ws = suffix_tests(tmp_path)
    turns = [{"tool_calls": [edit("return a + b", "return a - b")]}, {"text": "Done."}, {"text": "not reached"}]
    run, events = scripted(tmp_path, ws, turns, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert run.code == 0, run.err
    assert checks(events) == [{"command": "python -m unittest -q", "timeout": 42_000}]
    made = {e["id"] for e in events if e["event"] == "tool_call" and e.get("by") == "arnes"}
    results = [e for e in events if e["event"] == "tool_result" and e["id"] in made]
    assert "Ran 0 tests" in results[0]["output"]
    none_ran = NONE_RAN.format(command="python -m unittest -q")
    assert none_ran == "the tests: none ran (`python -m unittest -q`); the answer stands unchecked"
    assert none_ran in [e["message"] for e in events if e["event"] == "notice"] and none_ran in run.out
    assert not [t for t in user_texts(events) if t.startswith("[arnes]")]  # the model is not sent to fix code
    assert "Done." in run.out and "not reached" not in run.out and "[end_turn] 2 turns" in run.out


def test_doctor_and_init_name_the_command_and_where_it_came_from(tmp_path: Path) -> None:
    ws = suffix_tests(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": []}))
    model = ("--provider", "script", "--script", str(script))
    doctor = run_arnes("-w", str(ws), *model, "doctor")
    assert f"tests: {DISCOVER} (detected from *_test.py)" in doctor.out, doctor.out
    init = run_arnes("-w", str(ws), "init")
    assert init.code == 0 and f"arnes init: tests: {DISCOVER} (detected from *_test.py)" in init.out
    assert f"- Tests: `{DISCOVER}` (detected from *_test.py)" in (ws / "AGENTS.md").read_text()
    project = ws / ".arnes" / "settings.json"
    project.write_text(json.dumps({"verify": {"command": "make check"}}))
    untrusted = run_arnes("-w", str(ws), *model, "doctor")
    assert f"tests: {DISCOVER} (detected from *_test.py)" in untrusted.out  # a project's command waits for trust
    assert "verify.command" in untrusted.err  # named in the warning of ignored grants
    trusted = run_arnes("-w", str(ws), *model, "--trust", "doctor")
    assert f"tests: make check (verify.command in {project})" in trusted.out
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run_arnes("-w", str(empty), *model, "doctor")
    assert "tests: none found" in none.out


def test_a_projects_command_is_a_grant_and_the_users_own_applies_everywhere(tmp_path: Path) -> None:
    ws = suffix_tests(tmp_path)
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"command": "make check", "timeout": 9}}))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    untrusted = load_config(ws, env, trusted=False)
    assert untrusted.configured_tests() is None and untrusted.verify_timeout == 300
    assert set(untrusted.ignored[ws / ".arnes" / "settings.json"]) == {"verify.command", "verify.timeout"}
    found = untrusted.test_command(ws)
    assert found is not None and found.command == DISCOVER
    trusted = load_config(ws, env, trusted=True)
    assert trusted.configured_tests() is not None and trusted.verify_timeout == 9
    user = tmp_path / "config" / "arnes" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"verify": {"command": "pytest -q"}}))
    (ws / ".arnes" / "settings.json").unlink()
    mine = load_config(ws, env, trusted=False).configured_tests()
    assert mine is not None and (mine.command, mine.why) == ("pytest -q", f"verify.command in {user}")


def test_a_bad_timeout_is_one_line_naming_the_file_and_the_key(tmp_path: Path) -> None:
    user = tmp_path / "config" / "arnes" / "settings.json"
    user.parent.mkdir(parents=True)
    for value in (0, 601, "soon"):
        user.write_text(json.dumps({"verify": {"timeout": value}}))
        try:
            load_config(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "config")}, trusted=False)
        except ConfigError as exc:
            message = str(exc)
        else:
            raise AssertionError(f"verify.timeout {value!r} was taken")
        assert message.startswith(f"{user}: invalid settings: verify.timeout: ") and "\n" not in message
    run = run_arnes("-w", str(tmp_path), "doctor", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert run.code == 2 and f"{user}: invalid settings: verify.timeout: " in run.err


def test_a_models_own_run_of_no_tests_is_neither_a_red_nor_a_green_run(tmp_path: Path) -> None:
    """Python 3.12's unittest exits 5 when it ran nothing: that was "the tests failed" to the model."""
    f = tmp_path / "mathutil.py"
    f.write_text(MATHUTIL)
    changed: list[Path] = []
    check = SelfCheck(tmp_path, lambda ws: DISCOVER, lambda: list(changed), lambda p: p.name)
    f.write_text(MATHUTIL.replace("+", "-"))
    changed.append(f)
    none = "exit code: 5\n\nRan 0 tests in 0.000s\n\nNO TESTS RAN"
    check.after_tools([ToolCall("1", "Bash", {"command": "python -m unittest -q"})], [ToolResultBlock("1", none, True)])
    assert check.still_red() is None and check.due() == DISCOVER  # not red, and arnes's own run is still due
    assert check.ran("no_tests", "Ran 0 tests") is None and check.due() is None  # the same files: not again
    red = "exit code: 1\nRan 1 test in 0.001s\n\nFAILED (failures=1)"
    check.after_tools([ToolCall("2", "Bash", {"command": DISCOVER})], [ToolResultBlock("2", red, True)])
    assert check.still_red() == STILL_RED


def test_doctor_names_the_command_of_a_rust_project_whose_tests_folder_looks_like_python(tmp_path: Path) -> None:
    """Issue 24.9: `arnes doctor` says which command the self-check runs; a Rust crate's `tests/`
    with a helper script in it is still `cargo test` (host/testcmd.py, tests/test_testcmd.py)."""
    ws = tmp_path / "crate"
    (ws / "tests").mkdir(parents=True)
    (ws / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    (ws / "tests" / "add.rs").write_text("#[test]\nfn add() {}\n")
    (ws / "tests" / "test_helper.py").write_text("")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": []}))
    doctor = run_arnes("-w", str(ws), "--provider", "script", "--script", str(script), "doctor")
    assert "tests: cargo test (detected from Cargo.toml)" in doctor.out, doctor.out
