"""Grep takes every argument of Claude Code's Grep (`type`, `-A`/`-B`/`-C`, `multiline`, `offset`,
`head_limit` 0) and gives them to ripgrep, while a file the rules hide still shows no line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arnes.tools.base import ToolContext, ToolError, spec_of
from arnes.tools.search import GREP_LINE_LIMIT, Grep
from tests.conftest import scripted_outputs

# Claude Code's Grep input schema, key for key (tools reference, GrepTool).
CLAUDE_CODE_KEYS = {
    "pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "multiline", "head_limit",
    "offset",
}  # fmt: skip


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def put(ctx: ToolContext, rel: str, text: str) -> None:
    path = ctx.workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def grep(ctx: ToolContext, **raw: Any) -> str:
    return Grep().run(Grep.args_model.model_validate(raw), ctx)


def test_the_schema_offers_every_key_of_claude_codes_grep() -> None:
    assert set(spec_of(Grep()).input_schema["properties"]) == CLAUDE_CODE_KEYS


def test_type_keeps_files_of_that_ripgrep_type(ctx: ToolContext) -> None:
    put(ctx, "src/a.py", "needle\n")
    put(ctx, "src/b.js", "needle\n")
    put(ctx, "docs/c.md", "needle\n")
    assert grep(ctx, pattern="needle", type="py") == "src/a.py"
    assert grep(ctx, pattern="needle", type="js", output_mode="content") == "src/b.js:1:needle"


def test_a_glob_with_a_type_decides_as_in_ripgrep(ctx: ToolContext) -> None:
    """Claude Code passes both to ripgrep, where a --glob that matches includes the file whatever
    its type; arnes's own trick (a name glob made a type) would have listed both files."""
    put(ctx, "a.py", "needle\n")
    put(ctx, "b.md", "needle\n")
    assert grep(ctx, pattern="needle", glob="*.md", type="py") == "b.md"


def test_an_unknown_type_says_what_to_give(ctx: ToolContext) -> None:
    put(ctx, "a.py", "needle\n")
    with pytest.raises(ToolError, match=r"unrecognized file type: nosuch.*ripgrep type"):
        grep(ctx, pattern="needle", type="nosuch")
    with pytest.raises(ToolError, match="unrecognized file type"):
        grep(ctx, pattern="needle", type="--files")  # a value, never a flag


@pytest.mark.parametrize(
    ("context", "shown"),
    [
        ({"-C": 1}, ["l2", "needle", "l4"]),
        ({"context": 1}, ["l2", "needle", "l4"]),  # arnes's old name for -C
        ({"-B": 2}, ["l1", "l2", "needle"]),
        ({"-A": 2}, ["needle", "l4", "l5"]),
        ({"-B": 1, "-A": 2}, ["l2", "needle", "l4", "l5"]),
        ({"-C": 0, "-A": 2}, ["needle"]),  # as Claude Code: -C decides both sides
    ],
)
def test_context_lines_before_and_after(ctx: ToolContext, context: dict[str, int], shown: list[str]) -> None:
    put(ctx, "a.py", "l1\nl2\nneedle\nl4\nl5\nl6\n")
    out = grep(ctx, pattern="needle", output_mode="content", **context)
    assert [line.split("-", 2)[-1].split(":", 2)[-1] for line in out.splitlines()] == shown


def test_multiline_matches_across_lines(ctx: ToolContext) -> None:
    put(ctx, "a.go", "type S struct {\n\tname string\n}\n")
    assert grep(ctx, pattern=r"struct \{.*name", output_mode="content").startswith("No matches")
    out = grep(ctx, pattern=r"struct \{.*name", output_mode="content", multiline=True)
    assert out == "a.go:1:type S struct {\na.go:2:\tname string"


def test_offset_pages_through_each_mode(ctx: ToolContext) -> None:
    put(ctx, "a.txt", "".join(f"needle {i}\n" for i in range(6)))
    out = grep(ctx, pattern="needle", output_mode="content", head_limit=2, offset=3).splitlines()
    assert out == ["a.txt:4:needle 3", "a.txt:5:needle 4", "... (1 more lines; the next ones from offset 5)"]
    for i in range(4):
        put(ctx, f"f{i}.txt", "needle\n")
    counted = grep(ctx, pattern="needle", output_mode="count", offset=4).splitlines()
    assert len(counted) == 1 and counted[0].endswith(":1")
    assert len(grep(ctx, pattern="needle").splitlines()) == 5
    assert len(grep(ctx, pattern="needle", offset=2).splitlines()) == 3
    assert grep(ctx, pattern="needle", offset=9) == "No matches for 'needle' in the workspace past offset 9."


def test_head_limit_zero_shows_all_that_fits_the_output(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, max_output_chars=20_000)
    put(ctx, "a.txt", "needle\n" * (GREP_LINE_LIMIT + 50))
    out = grep(ctx, pattern="needle", output_mode="content", head_limit=0).splitlines()
    assert len(out) == GREP_LINE_LIMIT + 50 and out[-1] == f"a.txt:{GREP_LINE_LIMIT + 50}:needle"
    put(ctx, "b.txt", "needle\n" * 5000)
    out = grep(ctx, pattern="needle", output_mode="content", head_limit=0).splitlines()
    assert sum(len(line) + 1 for line in out) < 20_000 + 200 and out[-1].startswith("... (over ")


def test_context_lines_never_show_a_hidden_file(tmp_path: Path) -> None:
    """Context lines come from the file of the match, so the file-level check covers them: a
    file a Read rule hides shows neither its match nor the lines around it, and no separator."""
    hidden = ToolContext(
        tmp_path, read_rules=lambda: True, rule_hides=lambda tool, path: "secret" in path,
        listable=lambda tool, path: "secret" not in path,
    )  # fmt: skip
    put(hidden, "a.py", "x\nneedle\ny\n")
    put(hidden, "secret.py", "API_KEY=1\nneedle\nTOKEN=2\n")
    for context in ({"-C": 3}, {"-A": 3}, {"-B": 3}, {"-A": 1, "-B": 1}):
        out = grep(hidden, pattern="needle", output_mode="content", multiline=True, **context)
        assert "secret" not in out and "API_KEY" not in out and "TOKEN" not in out
        assert "a.py:2:needle" in out and not out.startswith("--") and not out.endswith("--")


def test_claude_codes_call_runs_end_to_end_with_nothing_ignored(tmp_path: Path) -> None:
    """The survey's call (T3-03): `type` and `-C` used to be dropped with a note."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a\nTODO: one\nb\n")
    (ws / "src" / "b.js").write_text("todo two\n")
    call = {"pattern": "todo", "-i": True, "output_mode": "content", "-n": True, "-C": 1, "type": "py"}
    turns: list[dict[str, object]] = [{"tool_calls": [{"name": "Grep", "input": call}]}, {"text": "done"}]
    (out,) = scripted_outputs(tmp_path, ws, turns)
    assert out == "src/a.py-1-a\nsrc/a.py:2:TODO: one\nsrc/a.py-3-b"
