"""Each adaptation piece as a table: what the model sent -> the decision, with no Session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.adapt.build import build_steering
from arnes.adapt.formats.search_replace import changes
from arnes.adapt.formats.whole import FileBlock, blocks, merge_python, path_of
from arnes.adapt.piece import Env
from arnes.adapt.pieces.check_before_done import CheckBeforeDone
from arnes.adapt.pieces.contract_help import ContentCheck, RenameLeftovers, UndoGuard, WholeSmallFile
from arnes.adapt.pieces.edit_format import NO_PATH, SearchReplace, WholeFiles
from arnes.adapt.pieces.nudges import Nudges
from arnes.adapt.shared import TurnState
from arnes.agent.madecalls import is_test_file, left_alone, off_limits
from arnes.agent.steering import Accept, Act, NoSteering, Nudge, Refuse, Reply, Rewrite
from arnes.llm.profiles import PIECES, STEERING, profile_for
from arnes.messages import ToolCall, ToolResultBlock
from arnes.tools.base import ToolContext
from arnes.tools.files import Edit, Read, Write


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall("c1", name, args)


def run(ctx: ToolContext, c: ToolCall) -> ToolResultBlock:
    tool = {"Read": Read(), "Write": Write(), "Edit": Edit()}[c.name]
    try:
        return ToolResultBlock(c.id, tool.run(tool.args_model.model_validate(c.input), ctx), False)
    except Exception as exc:
        return ToolResultBlock(c.id, str(exc), True)


def reply(text: str, **kw: Any) -> Reply:
    base: dict[str, Any] = {"wrote": False, "can_write": True, "can_run": True, "last_error": None}
    return Reply(text, **{**base, **kw})


# ------------------------------------------------------------------------------ profiles
@pytest.mark.parametrize(
    ("model", "steering", "edit_format"),
    [
        ("claude-sonnet-4-5", "off", "tools"),
        ("gpt-5", "off", "tools"),
        ("o3-mini", "off", "tools"),
        ("qwen2.5-coder-1.5b-instruct", "small", "auto"),
        ("ollama/llama3.2:3b", "small", "auto"),
        ("some-unknown-model", "off", "tools"),
    ],
)
def test_profiles_by_model_name(model: str, steering: str, edit_format: str) -> None:
    p = profile_for(model)
    assert (p.steering, p.edit_format) == (steering, edit_format)


def test_overrides_win_and_off_builds_no_pipeline(ctx: ToolContext) -> None:
    p = profile_for("qwen2.5-coder-1.5b", steering="off", edit_format="tools")
    assert (p.steering, p.edit_format) == ("off", "tools")
    assert isinstance(build_steering("off", Env(ctx)), NoSteering)
    assert STEERING["off"] == ()


# ------------------------------------------------------------------------------ edit formats
@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("mathutil.py", "mathutil.py"),
        ("**src/mathutil.py**", "src/mathutil.py"),
        ("# mathutil.py", "mathutil.py"),
        ("File: mathutil.py:", "mathutil.py"),
        ("`mathutil.py`", "mathutil.py"),
        ("Here is the code:", None),
        ("../etc/passwd.txt", None),
        ("", None),
    ],
)
def test_the_path_a_line_names(line: str, path: str | None) -> None:
    assert path_of(line) == path


def test_whole_blocks_take_the_path_before_the_fence_or_in_its_info_and_drop_a_cut_block() -> None:
    text = (
        "Here you go.\n\nmathutil.py\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
        "```python other.py\nx = 1\n```\n\n```python\nprint(add(1, 2))\n```\n\nlast.py\n```python\nhalf = ("
    )
    assert blocks(text) == [
        FileBlock("mathutil.py", "def add(a, b):\n    return a + b\n"),
        FileBlock("other.py", "x = 1\n"),
        FileBlock(None, "print(add(1, 2))\n"),
    ]


def test_a_block_with_a_longer_fence_keeps_an_inner_fence() -> None:
    text = "README.md\n````markdown\n# Title\n```sh\nmake\n```\n````\n"
    assert blocks(text) == [FileBlock("README.md", "# Title\n```sh\nmake\n```\n")]


def test_search_replace_blocks_under_their_paths() -> None:
    text = (
        "mathutil.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\nnew.py\n```\n<<<<<<< SEARCH\n=======\ny = 1\n"
        ">>>>>>> REPLACE\n```\n"
    )
    found = [(c.path, c.search, c.replace) for c in changes(text)]
    assert found == [
        ("mathutil.py", "    return a - b\n", "    return a + b\n"),
        ("mathutil.py", "x = 1\n", "x = 2\n"),
        ("new.py", "", "y = 1\n"),
    ]


def test_whole_acts_with_writes_and_reports_what_was_not_applied(ctx: ToolContext) -> None:
    piece = WholeFiles(Env(ctx, "whole"))
    text = "mathutil.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    decision = piece.on_reply(reply(text))
    assert isinstance(decision, Act) and decision.piece == "whole"
    assert [(c.name, c.input) for c in decision.calls] == [
        ("Write", {"file_path": "mathutil.py", "content": "def add(a, b):\n    return a + b\n"})
    ]
    ok = [ToolResultBlock("x", "Created mathutil.py (2 lines).", False)]
    assert piece.on_acted(decision, list(ok), reply(text)) == Accept()
    bad = piece.on_acted(decision, [ToolResultBlock("x", "denied", True)], reply(text))
    assert isinstance(bad, Nudge) and "- mathutil.py: NOT applied: denied" in bad.text
    assert piece.on_reply(reply(text, can_write=False)) == Accept()  # plan mode, a reviewer
    assert piece.on_reply(reply("All done, no code here.")) == Accept()


def test_a_block_that_holds_the_file_as_it_is_changes_nothing_and_the_reply_is_judged_as_such(ctx: ToolContext) -> None:
    (ctx.workspace / "m.py").write_text("def f():\n    pass\n")
    piece = WholeFiles(Env(ctx, "whole"))
    assert piece.on_reply(reply("m.py\n```python\ndef f():\n    pass\n```")) == Accept()
    both = piece.on_reply(reply("m.py\n```python\ndef f():\n    pass\n```\nn.py\n```python\nx = 1\n```"))
    assert isinstance(both, Act) and [c.input["file_path"] for c in both.calls] == ["n.py"]


def test_a_nameless_block_goes_to_the_one_seen_file_whose_definitions_it_repeats(ctx: ToolContext) -> None:
    (ctx.workspace / "mathutil.py").write_text("def add(a, b):\n    pass\n")
    (ctx.workspace / "mathutil_test.py").write_text("def add(a, b):\n    pass\n")
    for name in ("mathutil.py", "mathutil_test.py"):
        run(ctx, call("Read", file_path=name))
    piece = WholeFiles(Env(ctx, "whole"))
    code = "```python\ndef add(a, b):\n    return a + b\n```\n"
    decision = piece.on_reply(reply(code))
    assert isinstance(decision, Act) and decision.calls[0].input["file_path"] == "mathutil.py"
    usage = "```python\nx = 1\ny = 2\nreturn x\n```\n"  # code, but no file's definitions: which file?
    assert piece.on_reply(reply(usage)) == Nudge("whole", NO_PATH)


def test_whole_reads_an_edit_that_carries_a_whole_file_as_its_write(ctx: ToolContext) -> None:
    piece = WholeFiles(Env(ctx, "whole"))
    decision = piece.before_call(call("Edit", file_path="m.py", content="x = 1\n"))
    assert isinstance(decision, Rewrite) and (decision.call.name, decision.call.input) == (
        "Write",
        {"file_path": "m.py", "content": "x = 1\n"},
    )
    assert piece.before_call(call("Edit", file_path="m.py", old_string="x", new_string="y")) == Accept()


def test_search_replace_acts_with_edits(ctx: ToolContext) -> None:
    piece = SearchReplace(Env(ctx, "search-replace"))
    text = "m.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n"
    decision = piece.on_reply(reply(text))
    assert isinstance(decision, Act)
    assert [c.input for c in decision.calls] == [
        {"file_path": "m.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}
    ]


# ------------------------------------------------------------------------------ before a call
PROSE = "return 'A' for multiples of 3, 'B' for multiples of 5."


def test_content_check_refuses_a_broken_python_edit_once_then_lets_it_through(ctx: ToolContext) -> None:
    (ctx.workspace / "m.py").write_text("def f(n):\n    raise NotImplementedError\n")
    piece = ContentCheck(Env(ctx))
    bad = call("Edit", file_path="m.py", old_string="raise NotImplementedError", new_string=PROSE)
    decision = piece.before_call(bad)
    assert isinstance(decision, Refuse)
    assert decision.text.startswith("This Edit was not made: m.py would not be valid Python (invalid syntax at line 2")
    assert piece.before_call(bad) == Accept()  # the same call again: the model means it
    good = call("Edit", file_path="m.py", old_string="raise NotImplementedError", new_string="return 'A'")
    assert piece.before_call(good) == Accept()


@pytest.mark.parametrize(
    ("name", "before", "content", "refused"),
    [
        ("new.py", None, f"def f():\n    {PROSE}\n", "would not be valid Python"),
        ("c.json", None, "name: x\nport: 8080\n", "the content is YAML. As JSON it reads"),
        ("c.json", None, '{"a": 1,}', "would not be valid JSON"),
        ("m.py", "def a():\n    pass\n\n\ndef b():\n    pass\n", "def c():\n    pass\n", "drops a, b"),
        ("m.py", "def a():\n    pass\n", "def a():\n    return 1\n", None),
        ("notes.txt", "x\n", "anything", None),
    ],
)
def test_content_check_for_writes(
    ctx: ToolContext, name: str, before: str | None, content: str, refused: str | None
) -> None:
    if before is not None:
        (ctx.workspace / name).write_text(before)
    decision = ContentCheck(Env(ctx)).before_call(call("Write", file_path=name, content=content))
    if refused is None:
        assert decision == Accept()
    else:
        assert isinstance(decision, Refuse) and refused in decision.text


def test_undo_guard_refuses_putting_back_the_last_edit_once(ctx: ToolContext) -> None:
    (ctx.workspace / "rates.py").write_text("RATE = 0.12\n")
    run(ctx, call("Read", file_path="rates.py"))
    assert not run(ctx, call("Edit", file_path="rates.py", old_string="0.12", new_string="0.21")).is_error
    piece = UndoGuard(Env(ctx))
    undo = call("Edit", file_path="rates.py", old_string="0.21", new_string="0.12")
    assert isinstance(piece.before_call(undo), Refuse)
    assert piece.before_call(undo) == Accept()
    assert piece.before_call(call("Edit", file_path="rates.py", old_string="0.21", new_string="0.3")) == Accept()


def test_small_read_rewrites_a_tiny_limit_of_a_short_file(ctx: ToolContext) -> None:
    (ctx.workspace / "short.py").write_text("x = 1\n" * 6)
    (ctx.workspace / "long.py").write_text("x = 1\n" * 500)
    piece = WholeSmallFile(Env(ctx))
    decision = piece.before_call(call("Read", file_path="short.py", offset=1, limit=1))
    assert isinstance(decision, Rewrite) and decision.call.input == {"file_path": "short.py"}
    assert piece.before_call(call("Read", file_path="long.py", offset=1, limit=1)) == Accept()
    assert piece.before_call(call("Read", file_path="short.py", limit=50)) == Accept()


# ------------------------------------------------------------------------------ after a result
def test_rename_leftovers_names_the_files_that_still_use_the_old_name(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("def calc_total():\n    pass\n")
    (ctx.workspace / "b.py").write_text("from a import calc_total\n")
    run(ctx, call("Read", file_path="a.py"))
    edit = call("Edit", file_path="a.py", old_string="calc_total", new_string="order_total")
    result = run(ctx, edit)
    decision = RenameLeftovers(Env(ctx)).after_result(edit, result)
    assert isinstance(decision, Nudge) and "`calc_total` is still in: b.py (line 1)" in decision.text
    assert RenameLeftovers(Env(ctx)).after_result(edit, ToolResultBlock("c1", "err", True)) == Accept()


# ------------------------------------------------------------------------------ replies
@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("", "[arnes] Your reply was empty."),
        ("I will read the file first.", "[arnes] You said what you will do next"),
        ("<tool_response>ok</tool_response>", "[arnes] Your reply contains a tool result you wrote yourself"),
        ("I updated notes.txt as asked.", "[arnes] No file has been changed in this session"),
        ("The answer is 42.", None),
    ],
)
def test_nudges(ctx: ToolContext, text: str, starts: str | None) -> None:
    (ctx.workspace / "notes.txt").write_text("x\n")
    decision = Nudges(Env(ctx), TurnState()).on_reply(reply(text))
    if starts is None:
        assert decision == Accept()
    else:
        assert isinstance(decision, Nudge) and decision.text.startswith(starts)


def test_nudges_are_bounded_and_skip_a_reply_whose_files_were_applied(ctx: ToolContext) -> None:
    piece = Nudges(Env(ctx), TurnState())
    assert isinstance(piece.on_reply(reply("")), Nudge)
    assert isinstance(piece.on_reply(reply("")), Nudge)
    assert piece.on_reply(reply("")) == Accept()  # two per user message
    piece.new_turn("next")
    assert piece.on_reply(reply("", applied=True)) == Accept()


def test_the_same_reply_after_a_spelled_call_acts_only_with_same_reply_on(ctx: ToolContext) -> None:
    (ctx.workspace / "calc.py").write_text("def sub(a, b):\n    return a + b\n")
    run(ctx, call("Read", file_path="calc.py"))
    text = "```python\ndef sub(a, b):\n    return a - b\n```"
    for make, expected in ((True, Act), (False, Nudge)):
        piece = Nudges(Env(ctx), TurnState(), make_offered=make)
        first = piece.on_reply(reply(text))
        assert isinstance(first, Nudge) and '"old_string": "    return a + b"' in first.text
        assert isinstance(piece.on_reply(reply(text)), expected)


class FakeChanges:
    def __init__(self, paths: list[Path]):
        self.paths = paths

    def changed(self) -> list[Path]:
        return self.paths


def test_self_check_acts_quietly_and_reads_red_green_and_not_allowed(ctx: ToolContext) -> None:
    (ctx.workspace / "m.py").write_text("x = 1\n")
    env = Env(ctx, "tools", lambda: True, lambda _: "python -m unittest -q")
    piece = CheckBeforeDone(env, TurnState())
    (ctx.workspace / "m.py").write_text("x = 2\n")
    ctx.changes.before_write(ctx.workspace / "m.py", None)
    piece.check.changed = lambda: [ctx.workspace / "m.py"]
    decision = piece.on_reply(reply("done", wrote=True))
    assert isinstance(decision, Act) and decision.quiet
    assert decision.calls[0].input == {"command": "python -m unittest -q", "timeout": 300_000}
    red = piece.on_acted(decision, [ToolResultBlock("t", "FAILED (failures=1)", True)], reply("done"))
    assert isinstance(red, Nudge) and "the project's tests fail now" in red.text
    assert piece.on_reply(reply("done", can_run=False)) == Accept()
    assert piece.on_reply(reply("done", verified_later=True)) == Accept()
    off = CheckBeforeDone(Env(ctx, "tools", lambda: False, lambda _: "true"), TurnState())
    assert off.on_reply(reply("done", wrote=True)) == Accept()  # untrusted folder, no bubblewrap


# ------------------------------------------------------------------------------ what is never made
@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("test_x.py", True),
        ("x_test.py", True),
        ("tests/helpers.py", True),
        ("src/app.test.ts", True),
        ("pkg/x_test.go", True),
        ("conftest.py", True),
        ("x.py", False),
        ("src/contest.py", False),
        ("latest.py", False),
    ],
)
def test_test_files(tmp_path: Path, path: str, test: bool) -> None:
    assert is_test_file(tmp_path / path, tmp_path) is test


def test_files_the_task_says_to_leave_alone(tmp_path: Path) -> None:
    task = (
        "Implement add in mathutil.py. The tests are in checks.py; they are correct, don't change them. "
        "Leave config.json alone. Update notes.md."
    )
    assert left_alone(task) == {"checks.py", "config.json"}
    assert (
        off_limits(task, [tmp_path / "config.json"], tmp_path) == "the user's message says to leave config.json alone."
    )
    assert off_limits(task, [tmp_path / "test_m.py"], tmp_path) is not None
    assert off_limits(task, [tmp_path / "mathutil.py"], tmp_path) is None


def test_every_piece_of_every_set_is_built(ctx: ToolContext) -> None:
    for name, pieces in STEERING.items():
        built = build_steering(name, Env(ctx, "whole", draws=6))
        got = [p.name for p in getattr(built, "pieces", [])]
        assert got == ["whole", *(p for p in pieces if p != "spare-kept")], name  # a setting of named-files
        assert json.dumps(got)
    everything = ",".join(["off", *(f"+{p}" for p in PIECES)])  # a piece in no set is built when added
    built = build_steering(everything, Env(ctx, "whole", draws=6))
    made = getattr(built, "pieces", [])
    # spare-kept is a setting of named-files, not a piece of its own
    assert [p.name for p in made] == ["whole", *(p for p in PIECES if p != "spare-kept")]
    assert [getattr(p, "spare_kept", None) for p in made if p.name == "named-files"] == [True]


def test_the_examples_the_prompts_show_are_read_by_their_own_parsers() -> None:
    from arnes.adapt.pieces.edit_format import SEARCH_REPLACE_PROMPT, WHOLE_PROMPT

    assert blocks(WHOLE_PROMPT) == [FileBlock("mathutil.py", "def add(a, b):\n    return a + b\n")]
    assert [(c.path, c.search, c.replace) for c in changes(SEARCH_REPLACE_PROMPT)] == [
        ("mathutil.py", "    return a - b\n", "    return a + b\n")
    ]


TWO = "import math\n\n\ndef encode(t, a, b):\n    pass\n\n\n@cache\ndef decode(t, a, b):\n    pass\n"


@pytest.mark.parametrize(
    ("block", "merged"),
    [
        (  # one definition of two: put in place, decorator and all; the other kept; a new import added
            "import string\n\ndef decode(t, a, b):\n    return t[::-1]\n",
            "import string\nimport math\n\n\ndef encode(t, a, b):\n    pass\n\n\n"
            "def decode(t, a, b):\n    return t[::-1]\n",
        ),
        ("def encode(t, a, b):\n    return 1\n\ndef decode(t, a, b):\n    return 2\n", None),  # whole
        ("print(encode('x', 1, 2))\n", None),  # defines nothing
        ("def other():\n    pass\n", None),  # none of the file's: not a part of it
        ("def decode(:\n", None),  # does not parse
    ],
)
def test_a_partial_python_block_is_put_in_place_of_its_definitions(block: str, merged: str | None) -> None:
    assert merge_python(TWO, block) == merged


def test_whole_merges_a_block_that_gives_only_some_of_a_files_definitions(ctx: ToolContext) -> None:
    (ctx.workspace / "cipher.py").write_text("def encode(t):\n    pass\n\n\ndef decode(t):\n    pass\n")
    piece = WholeFiles(Env(ctx, "whole"))
    decision = piece.on_reply(reply("cipher.py\n```python\ndef decode(t):\n    return t[::-1]\n```"))
    assert isinstance(decision, Act) and "only some definitions given" in decision.say
    assert decision.calls[0].input["content"] == "def encode(t):\n    pass\n\n\ndef decode(t):\n    return t[::-1]\n"


def test_whole_never_reads_a_file_a_read_rule_hides(ctx: ToolContext) -> None:
    (ctx.workspace / "secret.py").write_text("def a():\n    pass\n\n\ndef b():\n    return 'TOKEN'\n")
    ctx.hidden = lambda tool, path: path.name == "secret.py"
    decision = WholeFiles(Env(ctx, "whole")).on_reply(reply("secret.py\n```python\ndef a():\n    return 1\n```"))
    assert isinstance(decision, Act)
    assert "TOKEN" not in decision.calls[0].input["content"]  # not merged with what the rule hides


@pytest.mark.parametrize("message", ["AS_IS", "CLAIM", "UNTOUCHED", "CODE"])
def test_nudges_say_how_to_change_a_file_in_the_session_s_edit_format(message: str) -> None:
    from arnes.adapt import unfinished
    from arnes.adapt.phrasing import for_format
    from arnes.adapt.selfcheck import STILL_RED

    for text in (getattr(unfinished, message), STILL_RED):
        assert for_format(text, "tools") == text
        whole = for_format(text, "whole")
        assert "Edit" not in whole and "corrected call" not in whole, whole
        assert "whole corrected file" in whole


@pytest.mark.parametrize(
    ("name", "before", "call_input", "barred"),
    [
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\na = 1\n",
            {"content": "[tool.pytest.ini_options]\na = 2\n"},
            True,
        ),
        ("pyproject.toml", "[project]\nv = 1\n", {"content": "[project]\nv = 2\n"}, False),
        ("pyproject.toml", "[project]\n", {"content": '[project]\n[tool.pytest]\naddopts = ["-k", "x"]\n'}, True),
        (
            "setup.cfg",
            "[metadata]\nname = x\n",
            {"content": "[metadata]\nname = x\n[tool:pytest]\naddopts = -k x\n"},
            True,
        ),
        ("setup.cfg", "[metadata]\nname = x\n", {"content": "[metadata]\nname = y\n"}, False),
        ("pyproject.toml", "[tool.pytest.ini_options]\na = 1\n", {"old_string": "a = 1", "new_string": "a = 3"}, True),
        (
            "pyproject.toml",
            "[project]\nv = 1\n[tool.pytest.ini_options]\n",
            {"old_string": "v = 1", "new_string": "v = 2"},
            False,
        ),
        ("pyproject.toml", "[project]\n", {"old_string": "not there", "new_string": "[tool.pytest.ini_options]"}, True),
    ],
)
def test_a_made_call_never_changes_pytests_settings(
    tmp_path: Path, name: str, before: str, call_input: dict[str, Any], barred: bool
) -> None:
    (tmp_path / name).write_text(before)
    made = ToolCall("c1", "Write" if "content" in call_input else "Edit", {"file_path": name, **call_input})
    why = off_limits("Fix the code.", [tmp_path / name], tmp_path, made)
    assert (why is not None) == barred, why
    assert off_limits("Fix the code.", [tmp_path / name], tmp_path) is None  # without the call: by name only
