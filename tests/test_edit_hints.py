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


def test_an_edit_naming_code_that_does_not_exist_yet_is_told_how_to_add_it(tmp_path: Path) -> None:
    """A small model: old_string names code to be added; the answer says how to append (the last
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


@pytest.mark.parametrize(
    ("before", "after", "suffix", "gone"),
    [
        ("def a():\n    pass\n\nclass B:\n    pass\n", "def a():\n    return 1\n", ".py", ["B"]),
        ("def a():\n    pass\n", "def a():\n    pass\ndef c():\n    pass\n", ".py", []),
        ("def a(): ...\ndef b(): ...\ndef c(): ...\n", "def a(): ...\ndef b(): ...\n", ".py", []),  # 1 of 3
        ("export function calcTotal(x) {}\nconst f = (y) => y\n", "function other() {}\n", ".js", ["calcTotal", "f"]),
        ("# app\n\nA small app.\n", "## Usage\nRun it.\n", ".md", ["# app"]),  # a README's heading dropped
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


def test_unknown_keys_are_dropped_with_a_note_when_the_call_is_valid_without_them(tmp_path: Path) -> None:
    """A small model: Glob given Grep's keys was refused whole; now it runs and the model is told."""
    (tmp_path / "invoice.py").write_text("x\n")
    glob = {"name": "Glob", "input": {"pattern": "*.py", "output_mode": "content", "-i": True}}
    bad = {"name": "Glob", "input": {"pattern": 3, "output_mode": "content"}}
    results = _results(tmp_path, [{"tool_calls": [glob, bad]}])
    assert results[0].content == "invoice.py\n[arnes: Glob takes no output_mode, -i; those arguments were ignored]"
    assert results[1].is_error and "output_mode: unknown key" in results[1].content


def test_an_edit_already_made_says_so_instead_of_how_to_add_code() -> None:
    """A small model: the same replace_all Edit sent again after it had worked."""
    with pytest.raises(ToolError) as err:
        replace("from shop.totals import order_total\n", "calc_total", "order_total", True, "shop/cart.py")
    assert "new_string is there already: this change has been made" in str(err.value)
    assert "To add new code" not in str(err.value)


def test_a_tool_named_like_a_json_file_is_answered_with_the_write_of_its_arguments(tmp_path: Path) -> None:
    """The 1.5B model: `{"name": "config.json", "arguments": {"name": "shop", ...}}`."""
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


def test_a_hostile_readme_heading_is_read_in_linear_time() -> None:
    """Red team round 3: `# a`, 6,000 spaces and a letter made the old heading pattern backtrack
    for minutes on the model's ordinary Write of README.md; 20,001 unclosed fences did the same to
    the old fence pattern. Both are read line by line now (a slow regression shows as a slow test)."""
    hostile = "# shop\n\n# a" + " " * 6000 + "x\n\nSome text.\n"
    assert dropped_names(hostile, "# shop\n\nA small shop.\n", ".md") == ["# a" + " " * 6000 + "x"]
    assert dropped_names(hostile, "# shop\n\n# a x\n", ".md") == ["# a" + " " * 6000 + "x"]
    assert dropped_names("```\n" * 20_001 + "# x\n", "", ".md") == []  # inside an unclosed fence: no heading


CALC = "def add(a: int, b: int) -> int:\n    return a - b\n\n\ndef mul(a: int, b: int) -> int:\n    return a * b\n"


def test_an_edit_whose_strings_are_the_same_gets_the_lines_it_points_at_as_a_call(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B: `def add(a: int, b: int) -> int` as both strings, twice;
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
