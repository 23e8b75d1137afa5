"""Tool-less replies that are not an answer (real Qwen2.5-Coder-1.5B outputs) get a nudge, not exit 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.adapt import unfinished as u
from arnes.agent.loop import Agent
from arnes.llm.script import ScriptProvider
from arnes.messages import Message, TextBlock
from arnes.session import Session
from tests.conftest import run_arnes

FAKE_RESULT = 'I ran it:\n<tool_response>\n{"name": "Bash", "content": "4 passed"}\n</tool_response>\nAll tests pass.'
CODE_IN_CHAT = "Here is the fix:\n```python\ndef page(items, number, size):\n    start = (number - 1) * size\n```"


def _nudges(messages: list[Message]) -> list[str]:
    return [b.text for m in messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)]


def _run(tmp_path: Path, turns: list[dict[str, Any]]) -> tuple[Agent, Any]:
    session = Session(
        workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits", steering_set="small"
    )
    agent = Agent(session)
    return agent, agent.run("task")


@pytest.mark.parametrize(
    ("text", "nudge"),
    [("", u.EMPTY), ("   \n", u.EMPTY), (FAKE_RESULT, u.FAKE), ("```\n1\n2\n3\n```", u.CODE), (CODE_IN_CHAT, u.CODE)],
)
def test_a_reply_that_is_not_an_answer_is_nudged_and_the_run_goes_on(tmp_path: Path, text: str, nudge: str) -> None:
    turns = [{"text": text}, {"tool_calls": [{"name": "Write", "input": {"file_path": "a.py", "content": "x\n"}}]}]
    agent, result = _run(tmp_path, [*turns, {"text": "I wrote a.py."}])
    assert nudge in _nudges(agent.messages)
    assert result.text == "I wrote a.py." and (tmp_path / "a.py").read_text() == "x\n"


def test_parroting_the_last_tool_error_is_nudged(tmp_path: Path) -> None:
    edit = {"name": "Edit", "input": {"file_path": "discount.txt", "old_string": "10%", "new_string": "15%"}}
    agent, result = _run(tmp_path, [{"tool_calls": [edit]}, {"text": "Edit changes an existing file."}, {"text": "ok"}])
    assert u.ECHO in _nudges(agent.messages) and result.text == "ok"


def test_real_answers_still_end_the_run_and_nudges_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    write = {"tool_calls": [{"name": "Write", "input": {"file_path": "b.py", "content": "y\n"}}]}
    # After a change, code in the answer is a report of it, not a missing Write.
    _, done = _run(tmp_path, [write, {"text": CODE_IN_CHAT}, {"text": "never"}])
    assert done.text == CODE_IN_CHAT and done.turns == 2
    agent, gave_up = _run(tmp_path, [{"text": ""}] * 5)
    assert gave_up.turns == 3 and gave_up.stop_reason == "end_turn"
    assert _nudges(agent.messages).count(u.EMPTY) == 2


def test_the_command_does_not_end_on_an_empty_first_reply(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    turns = [{"text": ""}, {"tool_calls": [{"name": "Write", "input": {"file_path": "hi.txt", "content": "hi"}}]}]
    script.write_text(json.dumps({"turns": [*turns, {"text": "Created hi.txt."}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    done = run_arnes(
        "--provider",
        "script",
        "--script",
        str(script),
        "-w",
        str(ws),
        "--permission-mode",
        "acceptEdits",
        "--steering",
        "small",
        "make hi.txt",
    )
    assert done.code == 0, done.err
    assert (ws / "hi.txt").read_text() == "hi" and "~ steered (nudge, nudge): [arnes] Your reply was empty." in done.out


def test_code_in_the_answer_of_a_plan_mode_run_is_the_answer(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([{"text": CODE_IN_CHAT}]), mode="plan")
    assert Agent(session).run("how should page() change?").text == CODE_IN_CHAT


def test_a_near_copy_of_the_last_error_is_an_echo_and_a_claimed_change_that_did_not_happen_is_nudged(
    tmp_path: Path,
) -> None:
    """The 1.5B model: after a refusal that showed the file it
    answered "To make the change, call Edit again, based on this content."; after a refused Write,
    "I changed the content of README.md to include the `## Usage` section." with nothing changed."""
    (tmp_path / "pricing.py").write_text("RATE = 0.10\n")
    # Two changes in one: no clear place for them in a file not read yet, so it is refused and shown.
    edit = {"name": "Edit", "input": {"file_path": "pricing.py", "old_string": "rate = 10 or 10",
                                      "new_string": "rate = 15 or 15"}}  # fmt: skip
    echo = "To make the change, call Edit again, based on this content."
    claim = "I changed the content of pricing.py to use 15 %."
    agent, result = _run(tmp_path, [{"tool_calls": [edit]}, {"text": echo}, {"text": claim}, {"text": "ok"}])
    assert _nudges(agent.messages)[-2:] == [u.ECHO, u.CLAIM] and result.text == "ok"
    assert u.unfinished(claim, None, wrote=False, can_write=True) is None  # nothing to check it against
    assert u.unfinished("The rate is set in pricing.py.", "old_string not found in pricing.py.", False, True) is None


CALC = "def add(a: int, b: int) -> int:\n    return a - b\n\n\ndef mul(a: int, b: int) -> int:\n    return a * b\n"


def test_code_in_chat_that_changes_a_read_file_a_little_is_answered_with_the_edit_that_makes_it(
    tmp_path: Path,
) -> None:
    """The 1.5B model: it Read calc.py, printed the fixed `add` (with a stray
    line number) in the chat, and, told only to call Edit, answered "The user's files are as they
    were." The nudge now spells out the one Edit; the model sending it fixes the file."""
    (tmp_path / "calc.py").write_text(CALC)
    chat = "```\n1\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
    edit = {"file_path": "calc.py", "old_string": "    return a - b", "new_string": "    return a + b"}
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]}
    agent, result = _run(
        tmp_path, [read, {"text": chat}, {"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "Fixed."}]
    )
    nudge = _nudges(agent.messages)[-1]
    assert nudge == u.CODE_CALL + json.dumps({"name": "Edit", "arguments": edit})
    assert (tmp_path / "calc.py").read_text() == CALC.replace("a - b", "a + b") and result.text == "Fixed."
    # A whole new version of a function the file defines once replaces that definition;
    # code like no file read gets the plain nudge.
    rewrite = u.edit_for("```\ndef add(a, b):\n    x = a\n    y = b\n    return x + y\n```", {"calc.py": CALC})
    assert rewrite is not None and json.loads(rewrite)["arguments"]["old_string"] == CALC.split("\n\n\n")[0]
    assert u.edit_for("```\nprint('hi')\n```", {"calc.py": CALC}) is None
    one = u.edit_for("```python\nDISCOUNT_RATE = 0.15\n```", {"p.py": "X = 1\nDISCOUNT_RATE = 0.10\n"})
    assert one is not None and json.loads(one)["arguments"]["old_string"] == "DISCOUNT_RATE = 0.10"


def test_the_same_code_sent_again_after_its_call_was_spelled_out_is_made_through_the_gate(tmp_path: Path) -> None:
    """The 1.5B model, greedy: `return a + b` printed in the chat, the Edit
    spelled out, and the very same reply again, twice; the run ended with calc.py unchanged."""
    (tmp_path / "calc.py").write_text(CALC)
    chat = "Here's the corrected version:\n```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]}
    agent, result = _run(tmp_path, [read, {"text": chat}, {"text": chat}, {"text": "Fixed."}])
    said = _nudges(agent.messages)
    assert said[-1].startswith("[arnes] You sent the same reply again, so arnes sent the call for you; it was made:")
    assert "Edited calc.py" in said[-1] and result.text == "Fixed."
    assert (tmp_path / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    # Shown once, then something else: nothing is made.
    (tmp_path / "calc.py").write_text(CALC)
    agent, _ = _run(tmp_path, [read, {"text": chat}, {"text": "No change is needed."}, {"text": "ok"}])
    assert (tmp_path / "calc.py").read_text() == CALC
    # In plan mode the gate refuses it as it would the model's own Edit.
    plan = Session(
        workspace=tmp_path, provider=ScriptProvider.from_turns([read, {"text": chat}, {"text": chat}]), mode="plan"
    )
    Agent(plan).run("task")
    assert (tmp_path / "calc.py").read_text() == CALC


def test_a_reply_that_only_shows_a_grep_hit_gets_that_line_as_an_edit_to_correct(tmp_path: Path) -> None:
    """The 1.5B model: it found `TAX_RATE = 0.12`, printed the hit in a code block,
    was told to call Edit and said "No changes needed."."""
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "rates.py").write_text("SHIPPING_FLAT = 4.95\nTAX_RATE = 0.12\n")
    grep = {"tool_calls": [{"name": "Grep", "input": {"pattern": "TAX", "output_mode": "content", "-n": True}}]}
    fixed = {"file_path": "billing/rates.py", "old_string": "TAX_RATE = 0.12", "new_string": "TAX_RATE = 0.21"}
    turns = [
        grep,
        {"text": "```\nbilling/rates.py:2:TAX_RATE = 0.12\n```"},
        {"tool_calls": [{"name": "Edit", "input": fixed}]},  # refused: not read; the refusal shows the file
        {"tool_calls": [{"name": "Edit", "input": fixed}]},
    ]
    agent, _ = _run(tmp_path, [*turns, {"text": "Fixed."}])
    shown = {"file_path": "billing/rates.py", "old_string": "TAX_RATE = 0.12", "new_string": "TAX_RATE = 0.12"}
    pointed = u.POINTED.format(line=2, path="billing/rates.py") + json.dumps({"name": "Edit", "arguments": shown})
    assert pointed in _nudges(agent.messages)
    assert "TAX_RATE = 0.21" in (tmp_path / "billing" / "rates.py").read_text()
    seen = u.Seen(agent.s.ctx)
    assert u.pointed_edit("```\nbilling/rates.py:1:TAX_RATE = 0.12\n```", seen) is None  # not what line 1 says
    assert u.pointed_edit("```\nbilling/rates.py:2:TAX_RATE = 0.12\nprint(1)\n```", seen) is None  # not only hits
    assert u.pointed_edit("```\n../outside.py:1:x\n```", seen) is None


def test_code_that_a_file_holds_as_it_is_is_told_so(tmp_path: Path) -> None:
    """The 1.5B model: told its code failed the tests, it printed the same code again;
    "no file was changed" then made it answer "No file was changed."."""
    (tmp_path / "calc.py").write_text(CALC)
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]}
    same = "```\n1\tdef add(a: int, b: int) -> int:\n2\t    return a - b\n```"
    agent, _ = _run(tmp_path, [read, {"text": same}, {"text": "It subtracts; that is the bug, but I will leave it."}])
    assert _nudges(agent.messages)[-1] == u.AS_IS.format(path="calc.py")
    assert u.shown_as_is("```\nreturn a - b\n```", {"calc.py": CALC}) is None  # one line is no evidence
    assert u.shown_as_is("```\ndef add(a, b):\n    return a + b\n```", {"calc.py": CALC}) is None


def test_parroting_the_last_nudge_is_an_echo(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "a.py"}}]}
    turns = [read, {"text": "```\nprint(1)\n```"}, {"text": "The user's files are as they were."}, {"text": "ok"}]
    agent, _ = _run(tmp_path, turns)
    assert _nudges(agent.messages)[-1] == u.ECHO
    # After "your reply was empty; if the task is done, say so", saying so in its words is an answer.
    _, done = _run(tmp_path, [read, {"text": ""}, {"text": "The task is done."}, {"text": "never"}])
    assert done.text == "The task is done."


def test_the_content_of_a_held_back_write_shown_in_the_chat_is_answered_with_that_write(tmp_path: Path) -> None:
    """The 1.5B model: YAML for config.json held back (not JSON), then the right
    JSON printed in the chat, then "The user's files are as they were." The nudge now spells out
    the Write; sending it creates the file."""
    yaml = {"name": "Write", "input": {"file_path": "config.json", "content": "name: shop\nport: 8080\n"}}
    chat = 'Here is the corrected content:\n```json\n{\n  "name": "shop",\n  "port": 8080\n}\n```'
    write = {"file_path": "config.json", "content": '{\n  "name": "shop",\n  "port": 8080\n}\n'}
    turns = [
        {"tool_calls": [yaml]},
        {"text": chat},
        {"tool_calls": [{"name": "Write", "input": write}]},
        {"text": "ok"},
    ]
    agent, result = _run(tmp_path, turns)
    nudge = _nudges(agent.messages)[-1]
    assert nudge == u.CODE_CALL + json.dumps({"name": "Write", "arguments": write})
    assert json.loads((tmp_path / "config.json").read_text()) == {"name": "shop", "port": 8080}
    assert result.text == "ok"


LABELS = "def labels(n: int) -> str:\n    raise NotImplementedError\n\n\ndef other() -> None:\n    pass\n"
LABELS_CHAT = """```python
def labels(n: int) -> str:
    if n % 15 == 0:
        return 'FooBar'
    if n % 3 == 0:
        return 'Fizz'
    if n % 5 == 0:
        return 'Buzz'
    return str(n)
```"""


def test_a_whole_new_version_of_a_function_in_the_chat_is_answered_with_the_edit_that_makes_it(
    tmp_path: Path,
) -> None:
    """The 1.5B model: refused a Python-breaking Edit, it printed the finished
    function in the chat and, told to call Edit, said no file needed a change."""
    (tmp_path / "labels.py").write_text(LABELS)
    new = LABELS_CHAT.split("\n", 1)[1].rsplit("\n```", 1)[0]
    edit = {"file_path": "labels.py", "old_string": "def labels(n: int) -> str:\n    raise NotImplementedError",
            "new_string": new}  # fmt: skip
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "labels.py"}}]}
    agent, result = _run(tmp_path, [read, {"text": LABELS_CHAT}, {"tool_calls": [{"name": "Edit", "input": edit}]},
                                    {"text": "Done."}])  # fmt: skip
    assert _nudges(agent.messages)[-1] == u.CODE_CALL + json.dumps({"name": "Edit", "arguments": edit})
    assert (tmp_path / "labels.py").read_text() == LABELS.replace(
        "    raise NotImplementedError", new.split("\n", 1)[1]
    )
    assert result.text == "Done."
    assert u.edit_for(LABELS_CHAT.replace("def labels", "    def labels"), {"f.py": LABELS}) is None  # indented


def test_a_change_described_in_words_is_answered_with_the_edit_that_makes_it(tmp_path: Path) -> None:
    """The 1.5B model: it Read billing/rates.py and said, twice and with no call,
    "To fix the tax rate, I replaced the line `TAX_RATE = 0.12` with `TAX_RATE = 0.21`."."""
    (tmp_path / "rates.py").write_text("SHIPPING_FLAT = 4.95\nTAX_RATE = 0.12\n")
    said = "To fix the tax rate, I replaced the line `TAX_RATE = 0.12` with `TAX_RATE = 0.21`."
    edit = {"file_path": "rates.py", "old_string": "TAX_RATE = 0.12", "new_string": "TAX_RATE = 0.21"}
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "rates.py"}}]}
    turns = [read, {"text": said}, {"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "Fixed."}]
    agent, result = _run(tmp_path, turns)
    assert _nudges(agent.messages)[-1] == u.DESCRIBED + json.dumps({"name": "Edit", "arguments": edit})
    assert (tmp_path / "rates.py").read_text() == "SHIPPING_FLAT = 4.95\nTAX_RATE = 0.21\n" and result.text == "Fixed."
    files = {"rates.py": "TAX_RATE = 0.21\n", "b.py": "TAX_RATE = 0.12\nTAX_RATE = 0.12\n"}
    assert u.described_edit(said, files) is None  # made already in one, twice in the other: no guess
    assert u.described_edit("I changed the rate from 21% to 21%.", {"rates.py": "RATE = 21\n"}) is None


def test_a_claimed_change_to_a_file_the_session_did_not_change_is_nudged(tmp_path: Path) -> None:
    """The 1.5B model: it renamed calc_total in shop/totals.py, was told the name still
    stands in shop/cart.py, and said "I changed ... in shop/totals.py and also in shop/cart.py"."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "totals.py").write_text("def calc_total(p):\n    return p\n")
    (tmp_path / "shop" / "cart.py").write_text("from shop.totals import calc_total\n")
    rename = {"file_path": "shop/totals.py", "old_string": "calc_total", "new_string": "order_total"}
    claim = "I changed the function `calc_total` to `order_total` in `shop/totals.py` and also in `shop/cart.py`."
    fix = {"file_path": "shop/cart.py", "old_string": "calc_total", "new_string": "order_total"}
    read = {"name": "Read", "input": {"file_path": "shop/totals.py"}}
    turns = [{"tool_calls": [read]}, {"tool_calls": [{"name": "Edit", "input": rename}]}, {"text": claim},
             {"tool_calls": [{"name": "Edit", "input": fix}]},  # refused: not read yet; the refusal shows it
             {"tool_calls": [{"name": "Edit", "input": fix}]}, {"text": claim}]  # fmt: skip
    agent, result = _run(tmp_path, turns)
    assert _nudges(agent.messages)[-1] == u.UNTOUCHED.format(files="shop/cart.py")
    assert (tmp_path / "shop" / "cart.py").read_text() == "from shop.totals import order_total\n"
    assert result.text == claim  # both files changed now: the same words end the run
    (tmp_path / "notes.md").write_text("unchanged\n")
    seen = u.Seen(agent.s.ctx)
    assert seen.unchanged_named("I updated shop/cart.py. The notes in notes.md still hold.") == []  # no claim
    assert seen.unchanged_named("I updated shop/cart.py and notes.md.") == ["notes.md"]


def test_code_in_chat_matching_a_test_file_is_never_answered_with_a_call_to_change_it(tmp_path: Path) -> None:
    """The tests are the judge: arnes never makes a call to a test file for the model, and it does
    not spell one out for it either (the plain code nudge stands instead)."""
    (tmp_path / "calc_test.py").write_text(CALC)
    chat = "```\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "calc_test.py"}}]}
    agent, _ = _run(tmp_path, [read, {"text": chat}, {"text": "ok"}])
    nudges = _nudges(agent.messages)
    assert nudges and not any("calc_test.py" in n and n.startswith(u.CODE_CALL) for n in nudges)
    assert (tmp_path / "calc_test.py").read_text() == CALC
