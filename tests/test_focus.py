"""One failing test at a time (adapt/focus.py): a reply that changes nothing while the tests are
red is asked again about one failing test, in the conversation as it was before the first attempt.

Tables for the output splitting, the bookkeeping and the piece (real unittest and pytest output,
no Session), then the real `arnes` command against the fake OpenAI server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arnes.adapt.failures import code_of_test, failures
from arnes.adapt.focus import Focusing
from arnes.adapt.piece import Env
from arnes.adapt.pieces.focus import Focus
from arnes.adapt.shared import TurnState
from arnes.agent.resume import parse_history
from arnes.agent.steering import Accept, Redraw, Reply
from arnes.tools.base import ToolContext
from arnes.tools.files import Write
from tests.test_fresh_draws import attempt
from tests.test_fresh_draws import run as run_calc

CODE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a // b\n"
TESTS = """\
import unittest

from calc import add, div, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)

    @unittest.skipIf(False, "never")
    def test_div(self):
        self.assertEqual(div(7, 2), 3.5)


if __name__ == "__main__":
    unittest.main()
"""


def run_tests(tmp_path: Path, *command: str) -> str:
    (tmp_path / "calc.py").write_text(CODE)
    (tmp_path / "calc_test.py").write_text(TESTS)
    done = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    return done.stdout + done.stderr


# ------------------------------------------------------------------------------ splitting


def test_unittest_output_is_split_per_failing_test_with_where_the_test_is(tmp_path: Path) -> None:
    output = run_tests(tmp_path, "unittest", "discover", "-q", "-s", ".", "-p", "*_test.py")
    found = failures(output)
    assert [f.name for f in found] == ["test_div", "test_mul"]  # unittest's order: by name
    div, mul = found
    assert div.file == str(tmp_path / "calc_test.py") and div.line == 15  # the test's frame, not calc.py's
    assert "AssertionError: 3 != 3.5" in div.report and "test_mul" not in div.report
    assert mul.report.startswith("FAIL: test_mul") and "AssertionError: 5 != 6" in mul.report
    assert "Ran 3 tests" not in mul.report  # the run's summary belongs to no test


def test_pytest_output_is_split_per_failing_test(tmp_path: Path) -> None:
    output = run_tests(tmp_path, "pytest", "-q", "-p", "no:cacheprovider", "calc_test.py")
    found = failures(output)
    assert [f.name for f in found] == ["test_div", "test_mul"]
    assert "def test_mul(self):" in found[1].report and "5 != 6" in found[1].report  # pytest shows the test
    assert "short test summary" not in found[1].report


@pytest.mark.parametrize(
    ("output", "names"),
    [
        ("error[E0308]: mismatched types\n --> src/lib.rs:3:5\n", [""]),  # another runner: the output whole
        ("", []),
        ("   \n", []),
    ],
)
def test_other_output_is_one_failure_or_none(output: str, names: list[str]) -> None:
    found = failures(output)
    assert [f.name for f in found] == names
    assert all(f.report == output.strip() for f in found)


def test_a_long_report_is_cut() -> None:
    found = failures("x" * 10_000)
    assert len(found[0].report) < 2_600 and found[0].report.endswith("... (cut)")


@pytest.mark.parametrize(
    ("name", "line", "first"),
    [
        ("test_mul", None, "def test_mul(self):"),
        ("test_div", 15, '@unittest.skipIf(False, "never")'),  # with its decorator
        ("test_div", 3, None),  # no test_div holds line 3
        ("test_nothing", None, None),
    ],
)
def test_the_code_of_a_test(name: str, line: int | None, first: str | None) -> None:
    code = code_of_test(TESTS, name, line)
    assert (code.split("\n")[0] if code else None) == first
    if code:
        assert not code.startswith(" ")  # dedented out of its class


def test_a_test_file_that_does_not_parse_shows_no_code() -> None:
    assert code_of_test("def test_x(:\n", "test_x") is None


# ------------------------------------------------------------------------------ bookkeeping


def ask(focusing: Focusing, output: str, code: str = CODE, tests: str | None = TESTS) -> str | None:
    asked = focusing.ask(output, {"calc.py": code}, lambda _: tests, "whole", "/ws")
    return asked[0] if asked else None


UNITTEST = """\
======================================================================
FAIL: test_mul (calc_test.CalcTest.test_mul)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/ws/calc_test.py", line 11, in test_mul
    self.assertEqual(mul(2, 3), 6)
AssertionError: 5 != 6

======================================================================
FAIL: test_add (calc_test.CalcTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/ws/calc_test.py", line 8, in test_add
    self.assertEqual(add(2, 3), 5)
AssertionError: 6 != 5

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=2)
"""


def test_each_ask_takes_the_next_failing_test_with_its_code_and_the_files_now() -> None:
    focusing = Focusing(most=6)
    first = ask(focusing, UNITTEST)
    assert first is not None
    assert "this is test 1 of the 2 that fail" in first
    assert "The test, from calc_test.py:\n```python\ndef test_mul(self):\n" in first
    assert 'File "calc_test.py", line 11' in first  # the workspace's path taken out
    assert "calc.py now holds:\n\ncalc.py\n```python\ndef add(a, b):" in first
    assert "reply with the whole corrected file" in first and "with Edit" not in first  # the format's words
    second = ask(focusing, UNITTEST)
    assert second is not None and "test 2 of the 2" in second and "def test_add(self):" in second
    assert ask(focusing, UNITTEST) is None  # both asked about on these very files
    again = ask(focusing, UNITTEST, code=CODE.replace("a // b", "a / b"))  # the files changed: ask again
    assert again is not None and "test 1 of the 2" in again
    assert focusing.made == 3
    focusing.new_turn()
    assert focusing.made == 0 and ask(focusing, UNITTEST) is not None


def test_the_asks_are_bounded_per_user_message() -> None:
    focusing = Focusing(most=2)
    assert ask(focusing, UNITTEST) is not None
    assert ask(focusing, UNITTEST, code="x = 1\n") is not None
    assert ask(focusing, UNITTEST, code="x = 2\n") is None


def test_a_test_file_that_may_not_be_read_is_not_shown() -> None:
    asked = ask(Focusing(), UNITTEST, tests=None)
    assert asked is not None and "The test, from" not in asked and "AssertionError: 5 != 6" in asked


def test_with_no_changed_file_there_is_nothing_to_ask() -> None:
    assert Focusing().ask(UNITTEST, {}, lambda _: TESTS, "whole", "/ws") is None


# ------------------------------------------------------------------------------ the piece


def reply(applied: bool = False) -> Reply:
    text = "calc.py\n```python\n...\n```"
    return Reply(text, wrote=True, can_write=True, can_run=True, last_error=None, applied=applied)


def changed_workspace(tmp_path: Path) -> ToolContext:
    """A workspace whose calc.py the session wrote, as the whole format's Write does."""
    ctx = ToolContext(tmp_path)
    (tmp_path / "calc_test.py").write_text(TESTS)
    Write().run(Write().args_model.model_validate({"file_path": "calc.py", "content": CODE}), ctx)
    return ctx


@pytest.mark.parametrize(
    ("red", "applied", "failure", "focus"),
    [
        (False, False, UNITTEST, True),  # the tests are not red: a reply that changes nothing may be the answer
        (True, True, UNITTEST, True),  # files were applied from the reply: the self-check runs next
        (True, False, "", True),  # no red run of arnes's to ask about
        (True, False, UNITTEST, False),  # the piece is not in the set
    ],
)
def test_the_piece_stands_back_unless_a_reply_changed_nothing_after_a_red_run(
    tmp_path: Path, red: bool, applied: bool, failure: str, focus: bool
) -> None:
    state = TurnState(red=red, focus=Focusing() if focus else None, failure=failure)
    piece = Focus(Env(changed_workspace(tmp_path), "whole"), state)
    assert piece.on_reply(reply(applied)) == Accept()


def test_a_reply_that_changed_nothing_after_a_red_run_is_asked_again_greedily_about_one_test(tmp_path: Path) -> None:
    failure = UNITTEST.replace("/ws/", f"{tmp_path}/")
    state = TurnState(red=True, focus=Focusing(), failure=failure)
    piece = Focus(Env(changed_workspace(tmp_path), "whole"), state)
    decision = piece.on_reply(reply())
    assert isinstance(decision, Redraw) and decision.piece == "focus"
    assert decision.sample is False  # a new question, not a new draw
    assert decision.then == decision.fallback  # said in place of the attempts, or after them when compacted
    assert "def test_mul(self):" in decision.then and "calc.py now holds:" in decision.then
    assert "one failing test at a time: test_mul (test 1 of the 2 that fail)" in decision.why
    piece.new_turn("next message")
    assert state.focus is not None and state.focus.made == 0


# ------------------------------------------------------------------------------ end to end


def run(tmp_path: Path, turns: list[dict[str, Any]], *flags: str) -> tuple[Path, list[dict[str, Any]], list[Any]]:
    """The fresh draws' end-to-end setting: calc.py with add and mul, their unittest file, the task."""
    ws, events, _, bodies = run_calc(tmp_path, turns, *flags)
    return ws, events, bodies


def redraws(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "steered" and e["action"] == "redraw"]


def test_a_repeated_reply_is_asked_again_about_one_test_without_the_failed_attempts(tmp_path: Path) -> None:
    half = attempt("a + b", "a + b")  # add passes, mul fails
    ws, events, bodies = run(tmp_path, [half, half, attempt("a + b", "a * b")], "--steering", "small,+focus")
    assert "return a * b" in (ws / "calc.py").read_text()
    [redrawn] = redraws(events)
    assert redrawn["piece"] == "focus" and redrawn["keep"] == 1  # back to the user's message
    assert "one failing test at a time: test_mul (test 1 of the 1 that fail)" in redrawn["ran"]
    assert len(bodies) == 3
    assert any("the project's tests fail now" in json.dumps(m) for m in bodies[1]["messages"])  # the repair try
    # The third request is the first one and a single new message: the test, the failure, the file now.
    assert bodies[2]["messages"][:-1] == bodies[0]["messages"]
    asked = bodies[2]["messages"][-1]
    assert asked["role"] == "user"
    text = json.dumps(asked["content"])
    assert "def test_mul(self):" in text and "AssertionError: 5 != 6" in text and "return a + b" in text
    assert str(ws) not in text  # the workspace's path taken out of the traceback
    assert bodies[2].get("temperature") == bodies[0].get("temperature") and "top_p" not in bodies[2]  # greedy still
    # Resuming sees what the model saw last: the user's message, the focused ask, the green reply.
    history = parse_history((tmp_path / "t.jsonl").read_text())
    assert [m.role for m in history] == ["user", "user", "assistant"]
    assert "def test_mul(self):" in history[1].text and "a * b" in history[2].text


def test_once_asking_one_test_at_a_time_a_red_run_after_a_change_asks_about_the_next(tmp_path: Path) -> None:
    half = attempt("a + b", "a + b")
    turns = [half, half, attempt("a - b", "a * b"), attempt("a + b", "a * b")]
    ws, events, bodies = run(tmp_path, turns, "--steering", "small,+focus")
    assert (ws / "calc.py").read_text().count("return a + b") == 1
    assert [e["piece"] for e in redraws(events)] == ["focus", "focus"]
    assert "test_add" in redraws(events)[1]["ran"]
    assert len(bodies) == 4
    assert bodies[3]["messages"][:-1] == bodies[0]["messages"]  # the earlier ask went with the attempts
    assert "def test_add(self):" in json.dumps(bodies[3]["messages"][-1])


def test_left_out_of_the_set_a_repeated_reply_gets_the_nudge_in_one_conversation(tmp_path: Path) -> None:
    half = attempt("a + b", "a + b")
    ws, events, bodies = run(tmp_path, [half, half, attempt("a + b", "a * b")], "--steering", "small")
    assert "return a * b" in (ws / "calc.py").read_text()
    assert redraws(events) == []
    assert bodies[2]["messages"][: len(bodies[1]["messages"])] == bodies[1]["messages"]
