"""Claude Code's collections and hooks, piece by piece (issue 24.6 and 24.8): tables of what each
reader makes of what real collections hold. The real `arnes` runs them in test_e2e_collections.py
and test_e2e_hooks_claude.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arnes.config_claude import translate_rule
from arnes.extensions.commands import load_catalog
from arnes.extensions.frontmatter import parse
from arnes.extensions.hooks_config import matches
from arnes.extensions.locations import linked, one_warning
from arnes.host.files import HostFiles
from arnes.llm.claude_ids import model_for
from arnes.tools.delegate import as_delegate
from arnes.tools.responses import structured_patch, tool_response
from arnes.tools.skill import SkillArgs

HUNTER_SAYS = 'Reviews. Examples:\n<example>\nContext: a PR\nuser: "review"\n</example>'
HUNTER = f"name: hunter\ndescription: {HUNTER_SAYS}\nmodel: inherit"  # unindented lines, colons: Claude Code loads it


@pytest.mark.parametrize(
    ("front", "meta"),
    [
        ("description: Use when: the tests fail", {"description": "Use when: the tests fail"}),
        ("name: rev\ndescription:\tReviews code", {"name": "rev", "description": "Reviews code"}),
        ("tools: Read, Grep, Glob\ndescription: a: b", {"tools": "Read, Grep, Glob", "description": "a: b"}),
        ("description: x: y\ntools:\n  - Read\n  - Grep", {"description": "x: y", "tools": ["Read", "Grep"]}),
        ("argument-hint: [pr] [priority]\ndescription: d", {"argument-hint": "[pr] [priority]", "description": "d"}),
        ('description: "say \\"hi\\": now"\nname: a: b', {"description": 'say "hi": now', "name": "a: b"}),
        ("name: x\n\tdescription: tab-indented: yes", {"name": "x", "description": "tab-indented: yes"}),
        (HUNTER, {"name": "hunter", "description": HUNTER_SAYS, "model": "inherit"}),
    ],
)
def test_front_matter_strict_yaml_refuses_is_read_line_by_line(front: str, meta: dict[str, Any]) -> None:
    doc = parse(f"---\n{front}\n---\nbody\n", Path("x.md"))
    assert doc.meta == meta and doc.lenient and doc.body == "body\n"


def test_valid_yaml_is_read_as_yaml_and_a_hint_list_as_written() -> None:
    doc = parse("---\nargument-hint: [file]\ndescription: >\n  folded\n  text\n---\n", Path("x.md"))
    assert not doc.lenient and doc.text("description") == "folded text"
    assert doc.text("argument-hint", literal=True) == "[file]"


def test_namespaced_commands_and_their_short_names(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for rel in (".claude/commands/tools/x.md", ".claude/commands/a/b/deep.md", ".arnes/commands/git/x.md",
                ".claude/commands/.hidden/no.md", ".claude/commands/tools/y.md"):  # fmt: skip
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"body of {rel}")
    (home / ".config/arnes/commands/mine").mkdir(parents=True)
    (home / ".config/arnes/commands/mine/y.md").write_text("user's y")
    os.symlink(tmp_path / "secret", ws / ".claude/commands/tools/leak.md")
    catalog = load_catalog(HostFiles(ws), frozenset(), {"HOME": str(home)})
    assert catalog.names() == ["a:b:deep", "git:x", "mine:y", "tools:x", "tools:y"]
    assert catalog.find("deep") is catalog.commands["a:b:deep"]  # one command ends so: its last name works
    assert catalog.find("x") is None and catalog.find("y") is None  # two do: say which
    assert catalog.find("tools:x") is not None and catalog.find("tools:z") is None
    assert [r.path.name for r in linked("commands", HostFiles(ws))] == ["leak.md"]  # named, never read


@pytest.mark.parametrize(
    ("model", "provider", "result"),
    [
        ("sonnet", "anthropic", ("claude-sonnet-4-5", None)),
        ("claude-opus-4-1", "anthropic", ("claude-opus-4-1", None)),
        ("inherit", "ollama", (None, None)),
        ("qwen2.5-coder:7b", "ollama", ("qwen2.5-coder:7b", None)),
        ("gpt-4o", "anthropic", ("gpt-4o", None)),  # the file's own choice
        ("Haiku", "openai", (None, "model 'Haiku' is a Claude model, which the openai provider does not serve")),
        ("claude-3-5-sonnet-20241022", "ollama", (None, "model 'claude-3-5-sonnet-20241022' is a Claude model")),
    ],
)
def test_claude_model_names_are_mapped_or_left_out(model: str, provider: str, result: tuple[Any, Any]) -> None:
    got, note = model_for(model, provider)
    assert got == result[0]
    assert (note is None) == (result[1] is None) and (result[1] is None or result[1] in (note or ""))


@pytest.mark.parametrize(
    ("name", "raw", "args"),
    [
        (
            "Task",
            {"description": "d", "prompt": "find x", "subagent_type": "scout"},
            {"task": "find x", "agent": "scout"},
        ),
        ("Task", {"prompt": "p", "subagent_type": "general-purpose"}, {"task": "p"}),
        ("Agent", {"prompt": "p", "subagent_type": "Explore"}, {"task": "p", "read_only": True}),
        ("Task", {"prompt": "p", "model": "haiku"}, {"task": "p", "model": "haiku"}),  # Delegate drops it, with a note
        ("Delegate", {"task": "t"}, None),
    ],
)
def test_a_task_call_is_delegates(name: str, raw: dict[str, Any], args: dict[str, Any] | None) -> None:
    assert as_delegate(name, raw) == args


def test_claude_code_names_in_matchers_rules_and_the_skill_tool() -> None:
    assert matches("Task", "Delegate") and matches("Agent|Bash", "Delegate") and matches("Edit|MultiEdit", "Edit")
    assert matches("^Ta", "Delegate") and not matches("Task", "Bash") and not matches("Delegate", "Task")
    assert translate_rule("Task") == "Delegate" and translate_rule("Read(./src/**)") == "Read(src/**)"
    assert SkillArgs.model_validate({"skill": "pdf", "args": "a.pdf"}) == SkillArgs(name="pdf", args="a.pdf")
    assert SkillArgs.model_validate({"command": "pdf"}).name == "pdf"


def test_unused_files_make_one_line() -> None:
    assert one_warning("skill files", []) is None
    assert one_warning("skill files", ["a.md: bad"]) == "a.md: bad"
    many = one_warning("agent definition files", ["a", "b", "c"])
    assert many == "3 agent definition files not used, or used in part; `arnes doctor` lists each with why"


TWENTY = "".join(f"{i}\n" for i in range(20))
HUNKS = [(1, 6, 1, 5, [" 0", " 1", "-2", " 3", " 4", " 5"]), (15, 6, 14, 5, [" 14", " 15", " 16", "-17", " 18", " 19"])]


@pytest.mark.parametrize(
    ("before", "after", "hunks"),
    [
        ("", "a\nb\n", [(0, 0, 1, 2, ["+a", "+b"])]),
        ("a\nb\n", "", [(1, 2, 0, 0, ["-a", "-b"])]),
        (TWENTY, TWENTY.replace("\n2\n", "\n").replace("\n17\n", "\n"), HUNKS),
    ],
)
def test_structured_patch_is_jsdiffs_shape(before: str, after: str, hunks: list[tuple[Any, ...]]) -> None:
    keys = ("oldStart", "oldLines", "newStart", "newLines", "lines")
    assert structured_patch(before, after) == [dict(zip(keys, h, strict=True)) for h in hunks]


def test_tool_responses_read_back_from_text(tmp_path: Path) -> None:
    ws = tmp_path
    listed = tool_response("Grep", {"pattern": "x"}, "a.py\nb/c.py\n... (3 more lines; narrow)", ws, 5)
    assert listed == {"mode": "files_with_matches", "filenames": [str(ws / "a.py"), str(ws / "b/c.py")], "numFiles": 2}
    counted = tool_response("Grep", {"pattern": "x", "output_mode": "count"}, "a.py:3\nb.py:4", ws, 5)
    assert counted["numMatches"] == 7 and counted["numFiles"] == 2
    one = tool_response(
        "Grep", {"pattern": "x"}, "[arnes: a.py is one file, so its matching lines are shown]\n2:x", ws, 5
    )
    assert one["mode"] == "content" and one["content"] == "2:x"
    assert tool_response("Glob", {"pattern": "*"}, "No files match '*' in the workspace.", ws, 7)["filenames"] == []
    cut = tool_response("Glob", {"pattern": "*"}, "a\n... (9 more)", ws, 7)
    assert cut["truncated"] is True and cut["numFiles"] == 1
    assert tool_response("mcp__db__query", {}, "rows", ws, 1) == [{"type": "text", "text": "rows"}]
    assert tool_response("ReadDoc", {}, "text", ws, 1) == {"output": "text"}
