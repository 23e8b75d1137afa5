"""Edit's hints for a small model: the near miss is shown, and the same refused call again is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.loop import Agent
from arnes.llm.script import ScriptProvider
from arnes.messages import ToolResultBlock
from arnes.session import Session
from arnes.tools.base import ToolError
from arnes.tools.defnames import dropped_names
from arnes.tools.editmatch import replace

PRICING = '"""Prices."""\n\nDISCOUNT_RATE = 0.10\n\n\ndef total(price):\n    return price * (1 - DISCOUNT_RATE)\n'


def test_a_near_miss_that_differs_in_case_and_name_shows_the_closest_line() -> None:
    with pytest.raises(ToolError) as err:
        replace(PRICING, "discount = 0.10", "discount = 0.15", False, "pricing.py")
    assert "closest match is at lines 3-3" in str(err.value) and "     3\tDISCOUNT_RATE = 0.10" in str(err.value)


def _edit_twice(tmp_path: Path, text: str, old: str, new: str) -> tuple[list[ToolResultBlock], str]:
    """The same Edit sent twice, the first refused because the file was not read (it is shown)."""
    (tmp_path / "pricing.py").write_text(text)
    edit: dict[str, Any] = {"name": "Edit", "input": {"file_path": "pricing.py", "old_string": old, "new_string": new}}
    turns = [{"tool_calls": [edit]}, {"tool_calls": [edit]}, {"text": "done"}]
    agent = Agent(Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits"))
    agent.run("raise the discount to 15%")
    results = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    return results, (tmp_path / "pricing.py").read_text()


def test_an_edit_of_an_unread_file_makes_its_one_change_on_the_closest_line(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B on the discount task: `discount = 10` -> `discount = 15` for a file it
    has not read. The change it means, 10 -> 15, is made on `DISCOUNT_RATE = 0.10`, the one
    closest line, the result says so and shows the file; the repeat it sends changes nothing more."""
    results, after = _edit_twice(tmp_path, PRICING, "discount = 10", "discount = 15")
    assert not results[0].is_error and "'10' -> '15'" in results[0].content and "line 3" in results[0].content
    assert "It had not been read; its content now" in results[0].content
    assert results[1].is_error
    assert after == PRICING.replace("DISCOUNT_RATE = 0.10", "DISCOUNT_RATE = 0.15")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("discount = 10 and 10", "discount = 15 and 15"),  # two changes: no guess
        ("discount = 0.10", "discount = 0.10 # 15"),  # an insertion: no anchor to carry it to
        ("rate = 0", "rate = 1"),  # `0` twice on the closest line (0.10)
    ],
)
def test_the_same_edit_again_gets_a_pointed_message_when_its_change_is_ambiguous(
    tmp_path: Path, old: str, new: str
) -> None:
    results, after = _edit_twice(tmp_path, PRICING, old, new)
    assert results[1].is_error and results[1].content.startswith("This is the same Edit as the one refused above")
    assert after == PRICING


def test_an_edit_naming_code_that_does_not_exist_yet_is_told_how_to_add_it(tmp_path: Path) -> None:
    """add-function: old_string names code to be added; the answer says how to append (the last
    line as old_string) instead of "Read it again". (A call of a missing function gets the Edit
    that adds its definition: the next test.)"""
    with pytest.raises(ToolError) as err:
        replace(TEXT_PY, "SLUG_SEPARATOR = '-'", "SLUG_SEPARATOR = '_'", False, "text.py")
    message = str(err.value)
    assert "To add new code, put the file's last line in old_string ('    return text.title()')" in message
    assert "Read text.py again" not in message


TEXT_PY = "def title_case(text):\n    return text.title()\n"
SLUGIFY_ONLY = "import re\n\n\ndef slugify(text):\n    return re.sub(r'\\W+', '-', text.lower()).strip('-')\n"


def _writes(tmp_path: Path, name: str, before: str, *writes: str) -> list[ToolResultBlock]:
    (tmp_path / name).write_text(before)
    calls = [{"tool_calls": [{"name": "Write", "input": {"file_path": name, "content": c}}]} for c in writes]
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": name}}]}, *calls, {"text": "done"}]
    agent = Agent(Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits"))
    agent.run("go")
    return [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]


def test_a_write_of_only_new_text_is_added_at_the_end_and_its_repeat_changes_nothing(tmp_path: Path) -> None:
    """add-function with Qwen2.5-Coder-1.5B: text.py was rewritten holding only the new slugify,
    and told to Edit instead it gave up. Adding the new text loses nothing; the repeat it sends
    word for word must not then drop title_case after all."""
    results = _writes(tmp_path, "text.py", TEXT_PY, SLUGIFY_ONLY, SLUGIFY_ONLY)
    assert not results[1].is_error and results[1].content.startswith("Added your text at the end of text.py")
    assert results[2].content.startswith("No change: this text was already added at the end of text.py")
    assert (tmp_path / "text.py").read_text() == TEXT_PY + "\n\n" + SLUGIFY_ONLY


def test_a_rewrite_that_keeps_some_lines_but_drops_the_names_is_refused_once(tmp_path: Path) -> None:
    """A real rewrite (it shares lines with the file) is the model's decision, after one warning."""
    before = "def calc_total(items):\n    return sum(item.price for item in items)\n"
    after = "def order_total(items):\n    return sum(item.price for item in items)\n"
    results = _writes(tmp_path, "shop.py", before, after, after)
    assert results[1].is_error and "drop calc_total" in results[1].content
    assert results[2].content.startswith("Overwrote shop.py")
    assert (tmp_path / "shop.py").read_text() == after


def test_an_edit_with_an_empty_old_string_adds_at_the_end(tmp_path: Path) -> None:
    """docs-section: `old_string: ""` and the new section; the model meant "insert it"."""
    (tmp_path / "README.md").write_text("# app\n\nA small app.\n")
    edit = {"file_path": "README.md", "old_string": "", "new_string": "## Usage\n\nRun `python app.py --help`.\n"}
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "README.md"}}]},
             {"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "done"}]  # fmt: skip
    agent = Agent(Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits"))
    agent.run("add a usage section")
    results = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert (
        results[1].content
        == "Added new_string at the end of README.md (old_string was empty, so nothing was replaced)."
    )
    assert (tmp_path / "README.md").read_text() == "# app\n\nA small app.\n\n## Usage\n\nRun `python app.py --help`.\n"


def test_the_approval_shows_the_append_that_will_be_made(tmp_path: Path) -> None:
    from arnes.tools.base import ToolContext
    from arnes.tools.files import Write, WriteArgs

    (tmp_path / "README.md").write_text("# app\n\nA small app.\n")
    ctx = ToolContext(workspace=tmp_path)
    ctx.files.record(tmp_path / "README.md")
    diff = Write().preview(WriteArgs(file_path="README.md", content="## Usage\nRun it.\n"), ctx)
    assert diff is not None and "+## Usage" in diff and "-# app" not in diff


@pytest.mark.parametrize(
    ("before", "after", "suffix", "gone"),
    [
        ("def a():\n    pass\n\nclass B:\n    pass\n", "def a():\n    return 1\n", ".py", ["B"]),
        ("def a():\n    pass\n", "def a():\n    pass\ndef c():\n    pass\n", ".py", []),
        ("def a(): ...\ndef b(): ...\ndef c(): ...\n", "def a(): ...\ndef b(): ...\n", ".py", []),  # 1 of 3
        ("export function calcTotal(x) {}\nconst f = (y) => y\n", "function other() {}\n", ".js", ["calcTotal", "f"]),
        ("# app\n\nA small app.\n", "## Usage\nRun it.\n", ".md", ["# app"]),  # docs-section's drop
        ("# app\n\n## Install\n", "# app\n\n## Install\n\n## Usage\n", ".md", []),
        ("# app\n\n```sh\n# not a heading\n```\n", "# app\n", ".md", []),  # a comment in a fence
        ("app\n", "other\n", ".txt", []),  # neither code nor a document we read
    ],
)
def test_dropped_names(before: str, after: str, suffix: str, gone: list[str]) -> None:
    assert dropped_names(before, after, suffix) == gone


def _results(tmp_path: Path, turns: list[dict[str, Any]]) -> list[ToolResultBlock]:
    agent = Agent(
        Session(workspace=tmp_path, provider=ScriptProvider.from_turns([*turns, {"text": "done"}]), mode="acceptEdits")
    )
    agent.run("do the task")
    return [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]


def test_a_readme_write_that_drops_its_heading_is_answered_with_the_edit_that_appends_it(tmp_path: Path) -> None:
    """docs-section: README.md (`# app`) rewritten as the new `## Usage` section and its old last
    line. The refusal spells out the Edit that adds the new lines after the last one; sent as
    given, the README keeps its heading and gains the section."""
    (tmp_path / "README.md").write_text("# app\n\nA small app.\n")
    content = "## Usage\nRun `python app.py --help`.\n\nA small app.\n"
    write = {"name": "Write", "input": {"file_path": "README.md", "content": content}}
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "README.md"}}]}
    append = {
        "file_path": "README.md",
        "old_string": "A small app.",
        "new_string": "A small app.\n\n## Usage\nRun `python app.py --help`.",
    }
    results = _results(tmp_path, [read, {"tool_calls": [write]}, {"tool_calls": [{"name": "Edit", "input": append}]}])
    assert results[1].is_error and "drop # app" in results[1].content
    assert json.dumps({"name": "Edit", "arguments": append}) in results[1].content
    assert (tmp_path / "README.md").read_text() == "# app\n\nA small app.\n\n## Usage\nRun `python app.py --help`.\n"
    # Sent twice (as the model did), the second would add the section again: refused.
    again = _results(tmp_path, [read, {"tool_calls": [{"name": "Edit", "input": append}]}])
    assert again[1].is_error and "this Edit was made before" in again[1].content
    assert (tmp_path / "README.md").read_text().count("## Usage") == 1


def test_a_json_file_written_as_yaml_is_shown_as_json_and_its_repeat_writes_that(tmp_path: Path) -> None:
    """config-file: `name: shop\nport: 8080\ndebug: false` written to config.json; told it is not
    JSON, the 1.5B model sent the same YAML again, twice. The refusal spells out the JSON it means;
    the word-for-word repeat writes that JSON. Content that is neither JSON nor a YAML mapping has no
    way out; a JSONC file (comments) keeps the "call it again" one."""
    yaml = {"name": "Write", "input": {"file_path": "config.json", "content": "name: shop\nport: 8080\ndebug: false"}}
    good = {"name": "Write", "input": {"file_path": "c2.json", "content": '{"name": "shop"}'}}
    prose = {"name": "Write", "input": {"file_path": "c3.json", "content": "the name is shop"}}
    jsonc = {"name": "Write", "input": {"file_path": "tsconfig.json", "content": '{\n  // strict\n  "a": 1\n}\n'}}
    turns = [[yaml], [good], [yaml], [prose], [prose], [jsonc], [jsonc]]
    results = _results(tmp_path, [{"tool_calls": calls} for calls in turns])
    assert results[0].is_error and results[0].content.startswith(
        "This Write was not made: config.json would not be valid JSON (Expecting value at line 1 column 1); "
        'the content is YAML. As JSON it reads:\n{\n  "name": "shop",\n  "port": 8080,\n  "debug": false\n}\n'
    )
    assert results[1].content.startswith("Created c2.json")
    assert results[2].content.startswith("Created config.json") and "written as the JSON" in results[2].content
    assert json.loads((tmp_path / "config.json").read_text()) == {"name": "shop", "port": 8080, "debug": False}
    assert results[3].is_error and results[4].is_error and not (tmp_path / "c3.json").exists()
    assert results[5].is_error and results[6].content.startswith("Created tsconfig.json")


def test_unknown_keys_are_dropped_with_a_note_when_the_call_is_valid_without_them(tmp_path: Path) -> None:
    """grep-bug: Glob given Grep's keys was refused whole; now it runs and the model is told."""
    (tmp_path / "invoice.py").write_text("x\n")
    glob = {"name": "Glob", "input": {"pattern": "*.py", "output_mode": "content", "-i": True}}
    bad = {"name": "Glob", "input": {"pattern": 3, "output_mode": "content"}}
    results = _results(tmp_path, [{"tool_calls": [glob, bad]}])
    assert results[0].content == "invoice.py\n[arnes: Glob takes no output_mode, -i; those arguments were ignored]"
    assert results[1].is_error and "output_mode: unknown key" in results[1].content


def test_an_edit_already_made_says_so_instead_of_how_to_add_code() -> None:
    """rename: the same replace_all Edit sent again after it had worked."""
    with pytest.raises(ToolError) as err:
        replace("from shop.totals import order_total\n", "calc_total", "order_total", True, "shop/cart.py")
    assert "new_string is there already: this change has been made" in str(err.value)
    assert "To add new code" not in str(err.value)


def test_a_tool_named_like_a_json_file_is_answered_with_the_write_of_its_arguments(tmp_path: Path) -> None:
    """config-file with the 1.5B model: `{"name": "config.json", "arguments": {"name": "shop", ...}}`."""
    wanted = {"name": "shop", "port": 8080, "debug": False}
    write = {"file_path": "config.json", "content": json.dumps(wanted, indent=2) + "\n"}
    turns = [
        {"tool_calls": [{"name": "config.json", "input": wanted}]},
        {"tool_calls": [{"name": "Write", "input": write}]},
    ]
    results = _results(tmp_path, turns)
    assert results[0].is_error and results[0].content.startswith("Unknown tool 'config.json'. Available tools:")
    assert results[0].content.endswith(json.dumps({"name": "Write", "arguments": write}))
    assert json.loads((tmp_path / "config.json").read_text()) == wanted
    other = _results(tmp_path, [{"tool_calls": [{"name": "notes.txt", "input": {"text": "x"}}]}, {"tool_calls": []}])
    assert "call Write with file_path 'notes.txt'" in other[0].content


def test_yaml_with_anchors_is_not_expanded_into_json() -> None:
    """Aliases are shared in YAML and copied out in JSON: a few lines would grow without end."""
    from arnes.tools.contentcheck import yaml_as_json

    bomb = "a: &a [x, x, x, x]\n" + "".join(f"b{i}: &b{i} [*{'a' if i == 0 else f'b{i - 1}'}] \n" for i in range(3))
    assert yaml_as_json(bomb) is None
    assert yaml_as_json("name: shop\nport: 8080\n") == '{\n  "name": "shop",\n  "port": 8080\n}\n'
    assert yaml_as_json("just words") is None and yaml_as_json("- [unclosed") is None


def test_a_rename_asked_for_again_changes_every_whole_word_use(tmp_path: Path) -> None:
    """rename: `calc_total` -> `order_total` in a file that imports and calls it, told it matches
    twice, sent again unchanged. In a file not read yet it is made at once (the model could not
    know there were two)."""
    cart = "from shop.totals import calc_total\n\n\ndef cart_total(items):\n    return calc_total(items)  # recalc\n"
    renamed = cart.replace("import calc_total", "import order_total").replace("return calc_total", "return order_total")
    edit = {"name": "Edit", "input": {"file_path": "cart.py", "old_string": "calc_total", "new_string": "order_total"}}
    (tmp_path / "cart.py").write_text(cart)
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "cart.py"}}]}
    results = _results(tmp_path, [read, {"tool_calls": [edit]}, {"tool_calls": [edit]}])
    assert results[1].is_error and "matches 2 times" in results[1].content
    assert not results[2].is_error and "all 2 whole-word uses were changed" in results[2].content
    assert (tmp_path / "cart.py").read_text() == renamed
    (tmp_path / "cart.py").write_text(cart)
    first = _results(tmp_path, [{"tool_calls": [edit]}])
    assert not first[0].is_error and "It had not been read" in first[0].content
    assert (tmp_path / "cart.py").read_text() == renamed


def test_a_hostile_readme_heading_is_read_in_linear_time() -> None:
    """Red team round 3: `# a`, 6,000 spaces and a letter made the old heading pattern backtrack
    for minutes on the model's ordinary Write of README.md; 20,001 unclosed fences did the same to
    the old fence pattern. Both are read line by line now (a slow regression shows as a slow test)."""
    hostile = "# shop\n\n# a" + " " * 6000 + "x\n\nSome text.\n"
    assert dropped_names(hostile, "# shop\n\nA small shop.\n", ".md") == ["# a" + " " * 6000 + "x"]
    assert dropped_names(hostile, "# shop\n\n# a x\n", ".md") == ["# a" + " " * 6000 + "x"]
    assert dropped_names("```\n" * 20_001 + "# x\n", "", ".md") == []  # inside an unclosed fence: no heading


def test_an_edit_that_undoes_the_last_one_is_refused_once(tmp_path: Path) -> None:
    """grep-bug with Qwen2.5-Coder-1.5B: it fixed TAX_RATE (0.12 -> 0.21), Grepped again, and put
    0.12 back, then said it had changed the rate."""
    (tmp_path / "rates.py").write_text("TAX_RATE = 0.12\n")
    fix = {
        "name": "Edit",
        "input": {"file_path": "rates.py", "old_string": "TAX_RATE = 0.12", "new_string": "TAX_RATE = 0.21"},
    }
    undo = {
        "name": "Edit",
        "input": {"file_path": "rates.py", "old_string": "TAX_RATE = 0.21", "new_string": "TAX_RATE = 0.12"},
    }
    results = _results(tmp_path, [{"tool_calls": [fix]}, {"tool_calls": [undo]}])
    assert results[1].is_error and "it would undo your last change to rates.py" in results[1].content
    assert (tmp_path / "rates.py").read_text() == "TAX_RATE = 0.21\n"
    (tmp_path / "rates.py").write_text("TAX_RATE = 0.12\n")
    again = _results(tmp_path, [{"tool_calls": [fix]}, {"tool_calls": [undo]}, {"tool_calls": [undo]}])
    assert not again[0].is_error and again[1].is_error and not again[2].is_error  # asked for twice: made
    assert (tmp_path / "rates.py").read_text() == "TAX_RATE = 0.12\n"


CALC = "def add(a: int, b: int) -> int:\n    return a - b\n\n\ndef mul(a: int, b: int) -> int:\n    return a * b\n"


def test_an_edit_whose_strings_are_the_same_gets_the_lines_it_points_at_as_a_call(tmp_path: Path) -> None:
    """failing-test with Qwen2.5-Coder-1.5B: `def add(a: int, b: int) -> int` as both strings, twice;
    the wrong line is the one below. The refusal spells out the function as a call to correct."""
    sig = "def add(a: int, b: int) -> int"
    same: dict[str, Any] = {"name": "Edit", "input": {"file_path": "calc.py", "old_string": sig, "new_string": sig}}
    head = "def add(a: int, b: int) -> int:\n    return a - b"
    fixed = {
        "name": "Edit",
        "input": {"file_path": "calc.py", "old_string": head, "new_string": head.replace("a - b", "a + b")},
    }
    (tmp_path / "calc.py").write_text(CALC)
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]}, {"tool_calls": [same]},
             {"tool_calls": [fixed]}, {"text": "done"}]  # fmt: skip
    agent = Agent(Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits"))
    agent.run("fix add")
    results = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    refused = results[1]
    assert refused.is_error and refused.content.startswith("old_string and new_string are the same")
    call = json.loads(refused.content.split("\n", 1)[1])
    assert call == {"name": "Edit", "arguments": {"file_path": "calc.py", "old_string": head, "new_string": head}}
    assert "return a + b" in (tmp_path / "calc.py").read_text() and not results[2].is_error


def test_the_lines_an_edit_points_at() -> None:
    from arnes.tools.editmatch import region_of

    assert region_of(CALC, "def add(a: int, b: int) -> int") == "def add(a: int, b: int) -> int:\n    return a - b"
    assert region_of(CALC, "a - b") == "    return a - b"  # whole lines
    assert region_of(CALC, "return a") is None  # twice: no one place
    assert region_of(CALC, "int") is None
    long = "def f():\n" + "".join(f"    x{i} = {i}\n" for i in range(20))
    assert region_of(long, "def f():") is None  # too long to copy


TEXT = 'def title_case(text: str) -> str:\n    return " ".join(word.capitalize() for word in text.split())\n'


def test_an_edit_of_a_function_the_file_lacks_gets_the_edit_that_adds_its_definition(tmp_path: Path) -> None:
    """add-function with Qwen2.5-Coder-1.5B: old_string `slugify(text)` for a text.py without it,
    then three replies of prose about copying the last line, and the run ended."""
    with pytest.raises(ToolError) as err:
        replace(TEXT, "slugify(text)", "slugify(text).lower()", False, "text.py")
    head, _, call = str(err.value).partition("\n")
    assert head.startswith("old_string not found in text.py. `slugify` is not in text.py yet.")
    stub = {"file_path": "text.py", "old_string": "", "new_string": "def slugify(text):\n    ..."}
    assert json.loads(call) == {"name": "Edit", "arguments": stub}
    (tmp_path / "text.py").write_text(TEXT)
    body = "def slugify(text):\n    return '-'.join(text.lower().split())"
    read = {"name": "Read", "input": {"file_path": "text.py"}}
    turns = [
        {"tool_calls": [read]},
        {"tool_calls": [{"name": "Edit", "input": {**stub, "new_string": body}}]},
        {"text": "done"},
    ]
    agent = Agent(Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits"))
    agent.run("add slugify")
    assert (tmp_path / "text.py").read_text() == TEXT + "\n\n" + body + "\n"  # added at the end, as the hint says
    for old, shown in (("title_case(text)", "text.py"), ("slugify(text)", "notes.md"), ("x = slugify(", "text.py")):
        with pytest.raises(ToolError) as other:
            replace(TEXT, old, "y", False, shown)
        assert "is not in" not in str(other.value), old
