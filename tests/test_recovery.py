"""Tool calls printed as text, in every shape Qwen2.5-Coder-1.5B and friends print them.

The fixtures are written as these models answer on llama.cpp (`--jinja`) and Ollama: the whole
message content, prose and all. A call found gets its arguments; a block that tries to be a call
and cannot be read becomes an unreadable call (the loop answers it with a parse error); prose
that merely shows JSON stays prose.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.llm.recovery import REASON, UNREADABLE, Recovered, parse_arguments, runaway, split_tool_calls

TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep"]
HELLO = {"file_path": "hello.txt", "content": "hi"}

# Each: what the model printed -> the calls in it.
FORMATS = {
    "hermes tags": (
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "hello.txt", "content": "hi"}}\n</tool_call>',
        [("Write", HELLO)],
    ),
    "tools tags": (
        '<tools>\n{"name": "Bash", "arguments": {"command": "python -m pytest -q"}}\n</tools>',
        [("Bash", {"command": "python -m pytest -q"})],
    ),
    "fenced json after prose": (
        "To see the current implementation, I will read the file first.\n\n"
        '```json\n{\n  "name": "Read",\n  "arguments": {\n    "file_path": "calc.py"\n  }\n}\n```',
        [("Read", {"file_path": "calc.py"})],
    ),
    "doubled braces": (
        '{{"name": "Write", "arguments": {"file_path": "hello.txt", "content": "hi"}}}',
        [("Write", HELLO)],
    ),
    "one closing brace too many": (
        '{"name": "Read", "arguments": {"file_path": "calc.py"}}}',
        [("Read", {"file_path": "calc.py"})],
    ),
    "call then a sentence": (
        '{"name": "Write", "arguments": {"file_path": "hello.txt", "content": "hi"}}\n'
        'This will create a file named hello.txt containing the text "hi".',
        [("Write", HELLO)],
    ),
    "arguments as a JSON string": (
        '<tool_call>\n{"name": "Read", "arguments": "{\\"file_path\\": \\"calc.py\\"}"}\n</tool_call>',
        [("Read", {"file_path": "calc.py"})],
    ),
    "parameters instead of arguments": (
        '{"name": "Glob", "parameters": {"pattern": "**/*.py"}}',
        [("Glob", {"pattern": "**/*.py"})],
    ),
    "docstring quotes inside a JSON string": (
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "calc.py", "content": '
        '"def add(a, b):\\n    """Return the sum of a and b."""\\n    return a + b\\n"}}\n</tool_call>',
        [
            (
                "Write",
                {
                    "file_path": "calc.py",
                    "content": 'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n',
                },
            )
        ],
    ),
    "python triple-quoted value with real newlines": (
        '{"name": "Write", "arguments": {"file_path": "calc.py", "content": """def add(a, b):\n    return a + b\n"""}}',
        [("Write", {"file_path": "calc.py", "content": "def add(a, b):\n    return a + b\n"})],
    ),
    "raw newlines inside a string": (
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "a.py", "content": "x = 1\ny = 2\n"}}\n</tool_call>',
        [("Write", {"file_path": "a.py", "content": "x = 1\ny = 2\n"})],
    ),
    "python dict literal": (
        "{'name': 'Read', 'arguments': {'file_path': 'calc.py'}}",
        [("Read", {"file_path": "calc.py"})],
    ),
    "openai function shape in a list": (
        '[{"type": "function", "function": {"name": "Read", "arguments": {"file_path": "a.py"}}}, '
        '{"type": "function", "function": {"name": "Read", "arguments": {"file_path": "b.py"}}}]',
        [("Read", {"file_path": "a.py"}), ("Read", {"file_path": "b.py"})],
    ),
    "closing braces forgotten at the end": (
        '{"name": "Bash", "arguments": {"command": "pytest -q"',
        [("Bash", {"command": "pytest -q"})],
    ),
    "qwen3-coder xml in tool_call tags": (
        "<tool_call>\n<function=Write>\n<parameter=file_path>\nhello.txt\n</parameter>\n"
        "<parameter=content>\nhi\n</parameter>\n</function>\n</tool_call>",
        [("Write", HELLO)],
    ),
    "llama 3.1 function tag with json": (
        '<function=Read>{"file_path": "calc.py"}</function>',
        [("Read", {"file_path": "calc.py"})],
    ),
    "flattened arguments of a known tool": (
        '<tool_call>\n{"name": "Read", "file_path": "calc.py"}\n</tool_call>',
        [("Read", {"file_path": "calc.py"})],
    ),
}


@pytest.mark.parametrize("text,calls", FORMATS.values(), ids=FORMATS.keys())
def test_every_format_is_recovered(text: str, calls: list[tuple[str, dict[str, object]]]) -> None:
    _, found = split_tool_calls(text, TOOLS)
    assert [(c.name, c.input) for c in found] == calls


def test_several_tool_call_blocks_none_dropped_and_prose_kept() -> None:
    text = (
        "I'll read both files to understand the code.\n"
        '<tool_call>\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "Read", "arguments": {"file_path": "test_calc.py"}}\n</tool_call>'
    )
    prose, found = split_tool_calls(text, TOOLS)
    assert prose == "I'll read both files to understand the code."
    assert [c.input["file_path"] for c in found] == ["calc.py", "test_calc.py"]


def test_the_same_call_printed_twice_in_one_reply_runs_once() -> None:
    block = '<tool_call>\n{"name": "Bash", "arguments": {"command": "echo x >> log.txt"}}\n</tool_call>\n'
    _, found = split_tool_calls(block * 3, TOOLS)
    assert found == [Recovered("Bash", {"command": "echo x >> log.txt"})]


def test_the_sentence_after_a_call_stays_as_prose() -> None:
    text, _ = FORMATS["call then a sentence"]
    prose, _ = split_tool_calls(text, TOOLS)
    assert prose == 'This will create a file named hello.txt containing the text "hi".'


def test_one_bad_call_does_not_drop_the_good_one_beside_it() -> None:
    text = (
        '<tool_call>\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "Edit", "arguments": {"file_path": "calc.py", "old_string": "return a - b", '
        '"new_string": "return a + b",}\n</tool_call>'
    )
    _, found = split_tool_calls(text, TOOLS)
    assert found[0] == Recovered("Read", {"file_path": "calc.py"})
    assert found[1].name == "Edit" and UNREADABLE in found[1].input and found[1].input[REASON]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "calc.py", "content": "def add(a, b):\\n    ret',
        '```json\n{"name": "Edit", "arguments": {"file_path": "calc.py", "old_string": "a - b" '
        '"new_string": "a + b"}}\n```',
        '{"name": "Bash", "arguments": {"command": "pytest -q',
        "<tool_call>\nRead(file_path='calc.py')\n</tool_call>",
    ],
    ids=["cut mid-string", "missing comma in a fence", "unclosed bare call", "python call syntax"],
)
def test_text_that_tries_to_be_a_call_becomes_an_unreadable_call(text: str) -> None:
    _, found = split_tool_calls(text, TOOLS)
    assert len(found) == 1 and UNREADABLE in found[0].input and found[0].input[REASON]


def test_an_unknown_tool_name_is_still_a_call_for_the_registry_to_answer() -> None:
    _, found = split_tool_calls('<tool_call>\n{"name": "write_file", "arguments": {"path": "a"}}\n</tool_call>', TOOLS)
    assert found == [Recovered("write_file", {"path": "a"})]


@pytest.mark.parametrize(
    "text",
    [
        "The tests pass now. The function `add` returns a + b.",
        'Settings are JSON, for example {"debug": true, "level": 2}, in config.json.',
        '```json\n{\n  "name": "shop",\n  "version": "1.0.0",\n  "scripts": {"test": "jest"}\n}\n```',
        '```python\ndef parse(data):\n    return {"name": data[0], "arguments": data[1:]}\n```',
        'Use `{"name": ...}` objects to describe people.',
        '{"answer": 42}',
    ],
    ids=["prose", "inline json", "package.json", "python code", "mention", "plain object"],
)
def test_prose_that_merely_shows_json_is_left_alone(text: str) -> None:
    assert split_tool_calls(text, TOOLS) == (text, [])


def test_native_arguments_get_the_same_repairs_and_a_reason_when_they_fail() -> None:
    assert parse_arguments('{"file_path": "a.py", "content": "x = 1\ny = 2\n"}') == {
        "file_path": "a.py",
        "content": "x = 1\ny = 2\n",
    }
    assert parse_arguments("") == {}
    bad = parse_arguments('{"file_path": "a.py" "content": 1}')
    assert bad[UNREADABLE] == '{"file_path": "a.py" "content": 1}' and "delimiter" in bad[REASON]
    assert UNREADABLE in parse_arguments("[1, 2]")


_PIECES = ['{', '}', '{{', '}}}', '[', ']', '"', '"""', "'", ':', ',', '\n', '\\', '<tool_call>', '</tool_call>',
           '<tools>', '```json\n', '```', '"name"', '"arguments"', '"Read"', '"file_path"', '"a.py"', 'text ',
           '<function=Read>', '<parameter=x>', '</function>', 'null', '1']  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_recovery_never_fails_on_any_text(pieces: list[str]) -> None:
    text = "".join(pieces)
    prose, calls = split_tool_calls(text, TOOLS)
    assert all(isinstance(c.input, dict) and isinstance(c.name, str) for c in calls)
    if not calls:
        assert prose == text


def test_a_fence_inside_a_json_string_does_not_end_the_fenced_call() -> None:
    """Qwen2.5-Coder-1.5B's reply (realmodel findings): a README with a ```bash example."""
    content = "## Usage\nRun it from a terminal:\n```bash\npython app.py --help\n```"
    text = (
        'Here is the section.\n```json\n{\n  "name": "Write",\n  "arguments": {\n'
        f'    "file_path": "README.md",\n    "content": {json.dumps(content)}\n  }}\n}}\n```\nDone.'
    )
    prose, calls = split_tool_calls(text, TOOLS)
    assert calls == [Recovered("Write", {"file_path": "README.md", "content": content})]
    assert prose == "Here is the section.\n\nDone."


def test_runaway_is_the_end_of_the_last_call_once_a_long_text_after_it_starts_no_call() -> None:
    call = '```json\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n```\n'
    fake = "<tool_response>\n" + "1   def add(a, b):\n" * 40
    assert runaway(call + fake, ["Read"]) == len(call) - 1  # the fence closed, its newline not kept
    assert runaway(call + "This reads the file.", ["Read"]) is None  # a sentence after a call
    plan = call + ("Then:\n" + call) * 8  # calls after calls: a plan, not a made-up result
    assert runaway(plan, ["Read"]) is None
    assert runaway("No call here.\n" + fake, ["Read"]) is None
