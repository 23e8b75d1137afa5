"""Fresh draws (adapt/draws.py): after the repair try, each attempt starts again from the user's
message, sampled, and the tests judge it; the best attempt is what the workspace keeps.

Tables for the bookkeeping and the piece, then the real `arnes` command against the fake OpenAI
server answering as a small local model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.adapt.draws import Attempt, Draws
from arnes.adapt.pieces.fresh_draws import FreshDraws
from arnes.adapt.shared import TurnState
from arnes.agent.resume import parse_history
from arnes.agent.steering import Accept, Redraw, Reply
from arnes.agent.trace import read_trace
from arnes.host.testcmd import passed
from arnes.llm.profiles import pieces_of
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

# ------------------------------------------------------------------------------ bookkeeping


def test_the_first_red_is_repaired_then_drawn_until_the_draws_run_out() -> None:
    draws = Draws(most=2)
    assert not draws.can_draw()  # before the repair try, a reply that changed nothing is no reason to draw
    assert draws.after_red(Attempt({"a.py": "1"}, 3)) == "repair"
    assert draws.can_draw()
    assert draws.after_red(Attempt({"a.py": "2"}, 1)) == "draw"
    assert draws.draw() == 1
    assert draws.after_red(Attempt({"a.py": "3"}, 2)) == "draw"
    assert draws.draw() == 2
    assert not draws.can_draw()
    assert draws.after_red(Attempt({"a.py": "4"}, 0)) == "done"
    best = draws.restore()
    assert best is not None and best.files == {"a.py": "1"} and best.passed == 3
    draws.new_turn()
    assert (draws.made, draws.repaired, draws.best) == (0, False, None)


@pytest.mark.parametrize(
    ("attempts", "restored"),
    [
        ([("1", 3), ("2", 1)], "1"),  # the first passed more: put back
        ([("1", 1), ("2", 3)], None),  # the last is the best: nothing to put back
        ([("1", 2), ("2", 2)], None),  # a tie keeps what is there
        ([("1", 2), ("1", 0)], None),  # the same files: nothing to write
        ([("1", None), ("2", None)], None),  # no counts: nothing is known to be better
        ([("1", 2), ("2", None)], "1"),  # the last ran no test it could count (a syntax error before any)
    ],
)
def test_what_is_put_back(attempts: list[tuple[str, int | None]], restored: str | None) -> None:
    draws = Draws(most=0)
    for text, count in attempts:
        draws.after_red(Attempt({"a.py": text}, count))
    best = draws.restore()
    assert (best.files["a.py"] if best else None) == restored


@pytest.mark.parametrize(
    ("output", "count"),
    [
        ("Ran 10 tests in 0.001s\n\nFAILED (failures=2, errors=1)\n", 7),
        ("Ran 10 tests in 0.001s\n\nOK (skipped=1)\n", 9),  # a skipped test did not pass
        ("Ran 1 test in 0.000s\n\nFAILED (errors=1)\n", 0),  # an import error: nothing passed
        ("===== 2 failed, 3 passed in 0.12s =====", 3),
        ("===== 2 failed in 0.12s =====", 0),
        ("test result: FAILED. 3 passed; 2 failed; 0 ignored", 3),
        ("Tests:       1 failed, 4 passed, 5 total", 4),
        ("--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\n--- PASS: TestC (0.00s)", 2),
        ("Traceback (most recent call last):\nSyntaxError: invalid syntax", None),
    ],
)
def test_how_many_tests_a_run_passed(output: str, count: int | None) -> None:
    assert passed(output) == count


# ------------------------------------------------------------------------------ the piece


def reply(text: str, **kw: Any) -> Reply:
    base: dict[str, Any] = {"wrote": False, "can_write": True, "can_run": True, "last_error": None}
    return Reply(text, **{**base, **kw})


@pytest.mark.parametrize(
    ("red", "repaired", "left", "applied", "draws"),
    [
        (True, True, True, False, True),  # red, a reply that changed nothing: draw
        (False, True, True, False, False),  # green (or changed since): nothing to do
        (True, False, True, False, False),  # the repair try not given yet
        (True, True, False, False, False),  # no draw left
        (True, True, True, True, False),  # files were applied from it: the tests judge it
    ],
)
def test_a_reply_that_changes_nothing_while_red(
    red: bool, repaired: bool, left: bool, applied: bool, draws: bool
) -> None:
    state = TurnState(red=red, draws=Draws(most=1 if left else 0, repaired=repaired))
    decision = FreshDraws(state).on_reply(reply("```python\nx = 1\n```", applied=applied))
    assert isinstance(decision, Redraw) == draws
    if draws:
        assert isinstance(decision, Redraw) and decision.piece == "fresh-draws" and "draw 1 of 1" in decision.why
    else:
        assert isinstance(decision, Accept)


def test_a_steering_value_may_leave_pieces_out_or_add_them_and_says_what_it_knows() -> None:
    assert "fresh-draws" not in pieces_of("small")
    assert pieces_of("small,+fresh-draws")[0] == "fresh-draws"
    assert pieces_of("small,-nudge") == tuple(p for p in pieces_of("small") if p != "nudge")
    with pytest.raises(ValueError, match="unknown steering set 'big'"):
        pieces_of("big")
    with pytest.raises(ValueError, match=r"leave out as -PIECE \(the pieces of tests: self-check\) or another"):
        pieces_of("tests,-nudge")
    assert pieces_of("tests,+fresh-draws") == ("fresh-draws", "self-check")  # in the order pieces decide
    for wrong in ("small,+nudge", "tests,+nothing", "tests,nudge"):
        with pytest.raises(ValueError, match=r"to add as \+PIECE \(every piece: fresh-draws, focus, named-files"):
            pieces_of(wrong)


# ------------------------------------------------------------------------------ end to end

TESTS = """\
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
"""
TASK = "Implement add and mul in calc.py. The tests are in calc_test.py; don't change them."


def attempt(add: str, mul: str) -> dict[str, Any]:
    """A reply in the whole format: calc.py with these two bodies."""
    code = f"def add(a, b):\n    return {add}\n\n\ndef mul(a, b):\n    return {mul}\n"
    return {"text": f"calc.py\n```python\n{code}```"}


def run(tmp_path: Path, turns: list[dict[str, Any]], *flags: str) -> tuple[Path, list[dict[str, Any]], Any, list[Any]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    pass\n\n\ndef mul(a, b):\n    pass\n")
    (ws / "calc_test.py").write_text(TESTS)
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(turns) as server:
        done = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b-instruct",
            *flags, "-w", str(ws), "--permission-mode", "acceptEdits", "--trace", str(trace),
            "--output-format", "json", TASK,
        )  # fmt: skip
        bodies = [body for path, body in server.requests if path.endswith("/chat/completions")]
    assert done.code == 0, done.err
    return ws, read_trace(trace), json.loads(done.out), bodies


def steered(events: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "steered" and e["action"] == action]


def test_after_the_repair_try_each_attempt_is_a_fresh_sampled_draw_from_the_users_message(tmp_path: Path) -> None:
    half = attempt("a + b", "a + b")  # add passes, mul fails
    turns = [half, half, attempt("a - b", "a + b"), attempt("a + b", "a * b")]
    ws, events, out, bodies = run(tmp_path, turns, "--steering", "small,+fresh-draws")
    assert "return a * b" in (ws / "calc.py").read_text()
    assert out["result"].startswith("calc.py")  # the green draw's reply stands
    redraws = steered(events, "redraw")
    assert [e["piece"] for e in redraws] == ["fresh-draws"] * 2
    assert "draw 1 of 6: the reply changed no file while the tests fail" in redraws[0]["ran"]
    assert [e["keep"] for e in redraws] == [1, 1]  # the user's message: the first attempt was the first reply
    assert "draw 2 of 6: the tests failed on the last attempt" in redraws[1]["ran"]
    # The repair try is greedy, in one conversation with the failure; each draw starts again from
    # the user's message alone and is sampled as the profile says.
    assert len(bodies) == 4
    assert "top_p" not in bodies[0] and "top_p" not in bodies[1]
    assert any("the project's tests fail now" in json.dumps(m) for m in bodies[1]["messages"])
    for draw in bodies[2:]:
        assert (draw["temperature"], draw["top_p"]) == (0.7, 0.8)
        assert draw["messages"] == bodies[0]["messages"]
    # Resuming the session sees the conversation the model saw last: the user's message, the green draw.
    history = parse_history((tmp_path / "t.jsonl").read_text())
    assert [m.role for m in history] == ["user", "assistant"]
    assert "a * b" in history[1].text


def test_when_the_draws_run_out_the_attempt_that_passed_most_is_put_back(tmp_path: Path) -> None:
    first = attempt("a + b", "a + b")  # 1 of 2 passes
    worse = [attempt(f"a - b - {n}", "a + b") for n in range(7)]  # 0 of 2, each different
    ws, events, _, bodies = run(tmp_path, [first, *worse], "--steering", "small,+fresh-draws")
    assert len(bodies) == 8  # the first try, the repair try, six draws
    assert len(steered(events, "redraw")) == 6
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
    made = [e for e in events if e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Write"]
    assert made[-1]["id"].startswith("arnes_fresh-draws_")
    notices = [e["message"] for e in events if e["event"] == "notice"]
    assert "putting back the attempt that passed the most tests: calc.py" in notices
    assert any(
        "the tests still fail after 6 fresh draws; calc.py put back as the attempt that passed 1 tests" in n
        for n in notices
    )


@pytest.mark.parametrize("flags", [[], ["--steering", "small,+fresh-draws,-fresh-draws"]])
def test_left_out_of_the_set_there_is_no_draw_and_nothing_is_sampled(tmp_path: Path, flags: list[str]) -> None:
    """The small profile's default: fresh draws are opt-in (they measured worse on Exercism)."""
    half = attempt("a + b", "a + b")
    turns = [half, attempt("a - b", "a + b"), attempt("a + b", "a * b")]
    ws, events, _, bodies = run(tmp_path, turns, *flags)
    assert "return a * b" in (ws / "calc.py").read_text()
    assert steered(events, "redraw") == []
    assert all("top_p" not in body for body in bodies)
    assert bodies[2]["messages"][: len(bodies[1]["messages"])] == bodies[1]["messages"]  # one conversation


def test_a_draw_keeps_what_the_model_read_before_its_first_attempt(tmp_path: Path) -> None:
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]}
    half = attempt("a + b", "a + b")
    ws, events, _, bodies = run(
        tmp_path, [read, half, half, attempt("a + b", "a * b")], "--steering", "small,+fresh-draws"
    )
    assert "return a * b" in (ws / "calc.py").read_text()
    [redrawn] = steered(events, "redraw")
    assert redrawn["keep"] == 3  # the user's message, the Read, its result
    assert bodies[3]["messages"] == bodies[1]["messages"]  # sampled from where the first attempt was
    history = parse_history((tmp_path / "t.jsonl").read_text())
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[1].tool_calls[0].name == "Read" and "a * b" in history[3].text
