"""Glob and Grep (ripgrep underneath) and ReadDoc, on real files in a temporary workspace."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from arnes.tools import rgstream, search
from arnes.tools.base import ToolContext, ToolError
from arnes.tools.docs import ReadDoc
from arnes.tools.search import GLOB_LIMIT, GREP_LINE_LIMIT, OVERFLOW_LINES, Glob, Grep

BASE_TIME = 1_700_000_000


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def put(ctx: ToolContext, rel: str, text: str = "", age: int | None = None) -> Path:
    """Create a file; `age` seconds before BASE_TIME as its mtime (bigger is older)."""
    path = ctx.workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if age is not None:
        os.utime(path, (BASE_TIME - age, BASE_TIME - age))
    return path


def glob(ctx: ToolContext, pattern: str, path: str | None = None) -> str:
    return Glob().run(Glob.args_model(pattern=pattern, path=path), ctx)


def grep(ctx: ToolContext, **raw: Any) -> str:
    """Grep with raw arguments as the model sends them (`-i`, `-n` by alias)."""
    if "i" in raw:
        raw["-i"] = raw.pop("i")
    if "n" in raw:
        raw["-n"] = raw.pop("n")
    return Grep().run(Grep.args_model.model_validate(raw), ctx)


def fake_git_repo(ctx: ToolContext) -> None:
    """A .git folder with the usual files, without needing git installed."""
    put(ctx, ".git/HEAD", "ref: refs/heads/main\n")
    put(ctx, ".git/config", "[core]\n\tbare = false\n")
    put(ctx, ".git/objects/ab/cdef", "needle\n")
    put(ctx, ".git/hooks/pre-commit.py", "needle\n")


# --------------------------------------------------------------------------------------------- Glob


def test_glob_matches_patterns(ctx: ToolContext) -> None:
    put(ctx, "a.py", age=3)
    put(ctx, "src/b.py", age=2)
    put(ctx, "src/c.ts", age=1)
    put(ctx, "README.md", age=4)
    assert glob(ctx, "*.py").splitlines() == ["src/b.py", "a.py"]
    assert glob(ctx, "**/*.py").splitlines() == ["src/b.py", "a.py"]
    assert glob(ctx, "src/*").splitlines() == ["src/c.ts", "src/b.py"]
    assert glob(ctx, "*.md") == "README.md"


def test_glob_newest_first(ctx: ToolContext) -> None:
    put(ctx, "old.txt", age=300)
    put(ctx, "newest.txt", age=1)
    put(ctx, "middle.txt", age=100)
    assert glob(ctx, "*.txt").splitlines() == ["newest.txt", "middle.txt", "old.txt"]
    os.utime(ctx.workspace / "old.txt", (BASE_TIME + 10, BASE_TIME + 10))
    assert glob(ctx, "*.txt").splitlines() == ["old.txt", "newest.txt", "middle.txt"]


def test_glob_no_match(ctx: ToolContext) -> None:
    put(ctx, "a.py")
    assert glob(ctx, "*.rs") == "No files match '*.rs' in the workspace."
    assert glob(ctx, "*.rs", path=".").startswith("No files match '*.rs'")


def test_glob_honours_gitignore_without_a_git_repository(ctx: ToolContext) -> None:
    assert not (ctx.workspace / ".git").exists()
    put(ctx, ".gitignore", "build/\n*.log\n")
    put(ctx, "keep.py", age=2)
    put(ctx, "debug.log", age=1)
    put(ctx, "build/out.py", age=1)
    put(ctx, "sub/.gitignore", "secret.py\n", age=5)
    put(ctx, "sub/secret.py", age=1)
    put(ctx, "sub/open.py", age=3)
    assert glob(ctx, "*.py").splitlines() == ["keep.py", "sub/open.py"]
    assert "debug.log" not in glob(ctx, "*")


def test_glob_star_does_not_reach_into_ignored_folders(ctx: ToolContext) -> None:
    # ripgrep's --glob would override .gitignore: `*` matches node_modules itself and lists it all.
    put(ctx, ".gitignore", "node_modules/\n*.log\n", age=3)
    put(ctx, "node_modules/pkg/index.js", age=1)
    put(ctx, "debug.log", age=1)
    put(ctx, "src/app.js", age=2)
    for pattern in ("*", "**", "**/*", "*.js", "**/*.js", "*.{js,log}"):
        out = glob(ctx, pattern)
        assert "node_modules" not in out, pattern
        assert "debug.log" not in out, pattern
        assert "src/app.js" in out, pattern


def test_glob_path_patterns_honour_gitignore(ctx: ToolContext) -> None:
    put(ctx, ".gitignore", "src/generated_*.py\n")
    put(ctx, "src/generated_api.py", age=1)
    put(ctx, "src/main.py", age=2)
    put(ctx, "src/deep/util.py", age=3)
    put(ctx, "other/x.py", age=4)
    assert glob(ctx, "src/*.py") == "src/main.py"
    assert glob(ctx, "src/**/*.py").splitlines() == ["src/main.py", "src/deep/util.py"]
    assert glob(ctx, "/src/gen*") == "No files match '/src/gen*' in the workspace."


def test_glob_honours_gitignore_in_a_git_repository(ctx: ToolContext) -> None:
    fake_git_repo(ctx)
    put(ctx, ".gitignore", "*.tmp\n")
    put(ctx, "a.tmp")
    put(ctx, "a.py")
    assert glob(ctx, "a.*") == "a.py"


def test_glob_finds_dotfiles_but_never_git_internals(ctx: ToolContext) -> None:
    fake_git_repo(ctx)
    put(ctx, ".env", age=1)
    put(ctx, ".github/workflows/ci.yml", age=2)
    put(ctx, "main.py", age=3)
    put(ctx, "vendor/lib/.git", "gitdir: ../../.git/modules/lib\n", age=4)  # a submodule's .git file
    for pattern in ("*", "**", "**/*", "**/HEAD", ".git/**", "*.py"):
        out = glob(ctx, pattern)
        listed = [] if out.startswith("No files match") else out.splitlines()
        assert not [p for p in listed if p.startswith(".git/") or "/.git" in p or p.endswith("HEAD")], pattern
    assert glob(ctx, "*").splitlines() == [".env", ".github/workflows/ci.yml", "main.py"]
    assert glob(ctx, ".env") == ".env"


def test_glob_path_argument(ctx: ToolContext) -> None:
    put(ctx, "top.py", age=1)
    put(ctx, "src/a.py", age=3)
    put(ctx, "src/deep/b.py", age=2)
    assert glob(ctx, "*.py", path="src").splitlines() == ["src/deep/b.py", "src/a.py"]
    assert glob(ctx, "*.py", path=str(ctx.workspace / "src")).splitlines() == ["src/deep/b.py", "src/a.py"]
    assert glob(ctx, "*.py", path="src/deep") == "src/deep/b.py"
    assert glob(ctx, "*.rs", path="src") == "No files match '*.rs' in src."


def test_glob_path_outside_the_workspace_is_shown_absolute(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    other = tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    (other / "x.py").write_text("")
    ctx = ToolContext(ws)
    assert glob(ctx, "*.py", path="../other") == str(other / "x.py")


def test_glob_missing_path(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"Path does not exist: nowhere\. The workspace has no files yet\. Use Glob"):
        glob(ctx, "*", path="nowhere")


def test_glob_path_that_is_a_file(ctx: ToolContext) -> None:
    put(ctx, "a.py")
    with pytest.raises(ToolError, match=r"a\.py is a file; Glob needs a folder"):
        glob(ctx, "*", path="a.py")


def test_glob_bad_pattern(ctx: ToolContext) -> None:
    put(ctx, "a.py")
    with pytest.raises(ToolError, match="Glob failed"):
        glob(ctx, "a[")


def test_glob_caps_results_at_the_limit(ctx: ToolContext) -> None:
    total = GLOB_LIMIT + 7
    for i in range(total):
        put(ctx, f"f{i:03}.txt", age=i)  # f000 is the newest
    lines = glob(ctx, "*.txt").splitlines()
    assert len(lines) == GLOB_LIMIT + 1
    assert lines[0] == "f000.txt"
    assert lines[GLOB_LIMIT - 1] == f"f{GLOB_LIMIT - 1:03}.txt"
    assert lines[-1] == "... (7 more; use a narrower pattern or path)"


def test_glob_past_the_order_cap_lists_by_path_and_counts_every_match(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the cap no match is stat'ed (newest first would cost one stat per match): the first
    by path are shown, every match is still counted, and the note says why the order changed."""
    monkeypatch.setattr(search, "GLOB_ORDER_CAP", 5)
    monkeypatch.setattr(search, "GLOB_LIMIT", 3)
    for i in range(5):
        put(ctx, f"f{i}.txt", age=i)  # f0 is the newest
    assert glob(ctx, "*.txt").splitlines() == [
        "f0.txt",
        "f1.txt",
        "f2.txt",
        "... (2 more; use a narrower pattern or path)",
    ]
    put(ctx, "y.txt", age=0)
    put(ctx, "z.txt", age=0)
    os.utime(ctx.workspace / "f4.txt", (BASE_TIME + 99, BASE_TIME + 99))  # the newest, yet last by path
    assert glob(ctx, "*.txt").splitlines() == [
        "f0.txt", "f1.txt", "f2.txt", "... (4 more, listed by path: over 5 match; use a narrower pattern or path)"
    ]  # fmt: skip
    stats: list[str] = []
    monkeypatch.setattr(search, "_mtime", lambda path: stats.append(str(path)) or 0.0)
    glob(ctx, "*.txt")
    assert stats == []


def test_glob_exactly_at_the_limit_has_no_note(ctx: ToolContext) -> None:
    for i in range(GLOB_LIMIT):
        put(ctx, f"f{i:03}.txt", age=i)
    lines = glob(ctx, "*.txt").splitlines()
    assert len(lines) == GLOB_LIMIT
    assert not lines[-1].startswith("...")


# --------------------------------------------------------------------------------------------- Grep


def test_grep_files_with_matches_is_the_default(ctx: ToolContext) -> None:
    put(ctx, "a.py", "import os\nneedle = 1\n", age=2)
    put(ctx, "src/b.py", "x = needle\n", age=1)
    put(ctx, "c.py", "nothing here\n", age=0)
    assert grep(ctx, pattern="needle").splitlines() == ["src/b.py", "a.py"]


def test_grep_files_with_matches_newest_first(ctx: ToolContext) -> None:
    put(ctx, "a.py", "needle\n", age=1)
    put(ctx, "b.py", "needle\n", age=50)
    put(ctx, "c.py", "needle\n", age=20)
    assert grep(ctx, pattern="needle").splitlines() == ["a.py", "c.py", "b.py"]


def test_grep_content_with_line_numbers(ctx: ToolContext) -> None:
    put(ctx, "a.py", "one\nneedle two\nthree\nneedle four\n")
    assert grep(ctx, pattern="needle", output_mode="content") == "a.py:2:needle two\na.py:4:needle four"


def test_grep_content_without_line_numbers(ctx: ToolContext) -> None:
    put(ctx, "a.py", "one\nneedle two\n")
    assert grep(ctx, pattern="needle", output_mode="content", n=False) == "a.py:needle two"


def test_grep_count(ctx: ToolContext) -> None:
    put(ctx, "a.py", "needle\nneedle\nhay\n")
    put(ctx, "sub/b.py", "needle\n")
    out = sorted(grep(ctx, pattern="needle", output_mode="count").splitlines())
    assert out == ["a.py:2", "sub/b.py:1"]


def test_grep_case_insensitive(ctx: ToolContext) -> None:
    put(ctx, "a.py", "NeEdLe\n")
    assert grep(ctx, pattern="need.e").startswith("No matches for 'need.e'")  # a regex is not loosened
    assert grep(ctx, pattern="needle", i=True) == "a.py"
    assert grep(ctx, pattern="needle", i=True, output_mode="content") == "a.py:1:NeEdLe"


def test_grep_glob_filter(ctx: ToolContext) -> None:
    put(ctx, "a.py", "needle\n")
    put(ctx, "b.ts", "needle\n")
    put(ctx, "src/c.py", "needle\n")
    assert sorted(grep(ctx, pattern="needle", glob="*.py").splitlines()) == ["a.py", "src/c.py"]
    assert grep(ctx, pattern="needle", glob="*.ts") == "b.ts"


def test_grep_context(ctx: ToolContext) -> None:
    put(ctx, "a.py", "l1\nl2\nneedle\nl4\nl5\nl6\n")
    out = grep(ctx, pattern="needle", output_mode="content", context=1)
    assert out == "a.py-2-l2\na.py:3:needle\na.py-4-l4"


def test_grep_head_limit(ctx: ToolContext) -> None:
    put(ctx, "a.txt", "".join(f"needle {i}\n" for i in range(10)))
    out = grep(ctx, pattern="needle", output_mode="content", head_limit=3).splitlines()
    assert out == [
        "a.txt:1:needle 0",
        "a.txt:2:needle 1",
        "a.txt:3:needle 2",
        "... (7 more lines; narrow the search or raise head_limit)",
    ]


def test_grep_default_line_cap(ctx: ToolContext) -> None:
    put(ctx, "a.txt", "needle\n" * (GREP_LINE_LIMIT + 4))
    out = grep(ctx, pattern="needle", output_mode="content").splitlines()
    assert len(out) == GREP_LINE_LIMIT + 1
    assert out[-1].startswith("... (4 more lines")


def test_grep_path_to_a_single_file(ctx: ToolContext) -> None:
    put(ctx, "src/a.py", "needle\nhay\nneedle\n")
    put(ctx, "src/b.py", "needle\n")
    assert grep(ctx, pattern="needle", path="src/a.py") == (  # listing the one file would say only "yes"
        "[arnes: src/a.py is one file, so its matching lines are shown]\nsrc/a.py:1:needle\nsrc/a.py:3:needle"
    )
    assert grep(ctx, pattern="needle", path="src/a.py", output_mode="content") == "src/a.py:1:needle\nsrc/a.py:3:needle"
    assert grep(ctx, pattern="needle", path="src/a.py", output_mode="count") == "src/a.py:2"
    absolute = str(ctx.workspace / "src" / "a.py")
    assert grep(ctx, pattern="needle", path=absolute, output_mode="count") == "src/a.py:2"


def test_grep_path_to_a_folder(ctx: ToolContext) -> None:
    put(ctx, "a.py", "needle\n")
    put(ctx, "src/b.py", "needle\n")
    assert grep(ctx, pattern="needle", path="src") == "src/b.py"
    assert grep(ctx, pattern="needle", path="src", output_mode="content") == "src/b.py:1:needle"


def test_grep_paths_are_relative_to_the_workspace(ctx: ToolContext) -> None:
    put(ctx, "deep/er/x.py", "needle\n")
    for out in (grep(ctx, pattern="needle"), grep(ctx, pattern="needle", path=".")):
        assert out == "deep/er/x.py"
    assert not grep(ctx, pattern="needle", output_mode="content").startswith("./")


def test_grep_honours_gitignore(ctx: ToolContext) -> None:
    put(ctx, ".gitignore", "ignored/\n*.min.js\n")
    put(ctx, "ignored/a.py", "needle\n")
    put(ctx, "app.min.js", "needle\n")
    put(ctx, "app.js", "needle\n")
    assert grep(ctx, pattern="needle") == "app.js"


def test_grep_glob_filter_honours_gitignore(ctx: ToolContext) -> None:
    # ripgrep's --glob would override .gitignore for every file and folder it matches.
    put(ctx, ".gitignore", "node_modules/\n*.gen.py\nsrc/secret_*\n", age=9)
    put(ctx, "node_modules/pkg/index.js", "needle\n", age=1)
    put(ctx, "api.gen.py", "needle\n", age=1)
    put(ctx, "src/secret_key.py", "needle\n", age=1)
    put(ctx, "src/main.py", "needle\n", age=2)
    put(ctx, "app.js", "needle\n", age=3)
    for g in ("*", "**", "**/*", "*.py", "**/*.py", "*.{py,js}"):
        out = grep(ctx, pattern="needle", glob=g).splitlines()
        assert "node_modules/pkg/index.js" not in out, g
        assert "api.gen.py" not in out, g
        assert "src/secret_key.py" not in out, g
        assert "src/main.py" in out, g
    for g in ("src/*", "src/**", "/src/*.py"):
        assert grep(ctx, pattern="needle", glob=g) == "src/main.py", g
        assert grep(ctx, pattern="needle", glob=g, output_mode="count") == "src/main.py:1", g
        assert grep(ctx, pattern="needle", glob=g, output_mode="content") == "src/main.py:1:needle", g


def test_grep_path_glob_keeps_context_groups_tidy(ctx: ToolContext) -> None:
    put(ctx, ".gitignore", "src/b.py\n")
    text = "x\nneedle\ny\n"
    for name in ("a.py", "b.py", "c.py"):
        put(ctx, f"src/{name}", text)
    out = grep(ctx, pattern="needle", glob="src/*.py", output_mode="content", context=1).split("\n--\n")
    assert sorted(out) == [f"src/{n}-1-x\nsrc/{n}:2:needle\nsrc/{n}-3-y" for n in ("a.py", "c.py")]
    out = grep(ctx, pattern="needle", glob="src/*.py", output_mode="content", context=1, n=False)
    assert "b.py" not in out
    assert "\0" not in out
    assert sorted(out.split("\n--\n")) == [f"src/{n}-x\nsrc/{n}:needle\nsrc/{n}-y" for n in ("a.py", "c.py")]


def test_grep_text_with_colons_and_dashes(ctx: ToolContext) -> None:
    put(ctx, "my-file:odd.txt", "a: b - c\nneedle: x -- y\n")
    out = grep(ctx, pattern="needle", output_mode="content", context=1)
    assert out == "my-file:odd.txt-1-a: b - c\nmy-file:odd.txt:2:needle: x -- y"
    assert grep(ctx, pattern="needle", output_mode="count") == "my-file:odd.txt:1"
    assert grep(ctx, pattern="needle", glob="*odd*") == "my-file:odd.txt"


def test_grep_searches_dotfiles_but_not_git_internals(ctx: ToolContext) -> None:
    fake_git_repo(ctx)
    put(ctx, ".env", "needle\n", age=1)
    put(ctx, "a.py", "needle\n", age=2)
    for g in (None, "*", "**", "**/*", "*.py"):
        out = grep(ctx, pattern="needle", glob=g)
        assert ".git/" not in out, g
    assert grep(ctx, pattern="needle").splitlines() == [".env", "a.py"]


def test_grep_bad_regex(ctx: ToolContext) -> None:
    put(ctx, "a.py", "x\n")
    with pytest.raises(ToolError, match=r"(?s)Grep failed: .*regex parse error.*Check the regular expression"):
        grep(ctx, pattern="(unclosed")


def test_grep_pattern_starting_with_a_dash(ctx: ToolContext) -> None:
    put(ctx, "a.py", "x = 1\n--verbose\n")
    assert grep(ctx, pattern="--verbose", output_mode="content") == "a.py:2:--verbose"


def test_grep_no_matches(ctx: ToolContext) -> None:
    put(ctx, "a.py", "hay\n")
    assert grep(ctx, pattern="needle") == "No matches for 'needle' in the workspace."
    assert grep(ctx, pattern="needle", path="a.py") == "No matches for 'needle' in a.py."


def test_grep_missing_path(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"Path does not exist: nope"):
        grep(ctx, pattern="x", path="nope")


def test_grep_regex_syntax(ctx: ToolContext) -> None:
    put(ctx, "a.py", "def foo(x):\ndef bar():\nfoo = 1\n")
    out = grep(ctx, pattern=r"^def \w+\(", output_mode="content")
    assert out == "a.py:1:def foo(x):\na.py:2:def bar():"


# ------------------------------------------------------------------------------------------ ReadDoc


def read_doc(ctx: ToolContext, topic: str) -> str:
    return ReadDoc().run(ReadDoc.args_model(topic=topic), ctx)


def test_read_doc_loads_the_topic(ctx: ToolContext) -> None:
    put(ctx, "docs/architecture.md", "# Architecture\nLayers.\n")
    assert read_doc(ctx, "architecture") == "# Architecture\nLayers.\n"


def test_read_doc_tolerates_the_md_suffix(ctx: ToolContext) -> None:
    put(ctx, "docs/testing.md", "run pytest\n")
    assert read_doc(ctx, "testing.md") == "run pytest\n"


def test_read_doc_names_with_dots_dashes_and_underscores(ctx: ToolContext) -> None:
    put(ctx, "docs/v1.2_release-notes.md", "notes\n")
    assert read_doc(ctx, "v1.2_release-notes") == "notes\n"


def test_read_doc_missing_topic_lists_the_available_ones(ctx: ToolContext) -> None:
    put(ctx, "docs/testing.md", "x")
    put(ctx, "docs/architecture.md", "x")
    put(ctx, "docs/notes.txt", "x")
    with pytest.raises(ToolError) as err:
        read_doc(ctx, "deploy")
    assert str(err.value) == "No document docs/deploy.md. Available topics: architecture, testing."


def test_read_doc_without_a_docs_folder(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="there is no docs/ folder"):
        read_doc(ctx, "anything")


@pytest.mark.parametrize(
    "topic", ["../secret", "..", "sub/../x", "/etc/passwd", "a/b", ".hidden", "", "-rf", "a b", "..md", "x..y"]
)
def test_read_doc_refuses_odd_names(ctx: ToolContext, topic: str) -> None:
    put(ctx, "docs/a.md", "x")
    put(ctx, "secret.md", "top secret\n")
    put(ctx, "docs/sub/x.md", "x")
    with pytest.raises(ToolError) as err:
        read_doc(ctx, topic)
    assert "top secret" not in str(err.value)
    assert "is not a topic name" in str(err.value)
    assert str(err.value).endswith("Topics: a.")


def test_read_doc_traversal_is_refused_as_a_name(ctx: ToolContext) -> None:
    put(ctx, "docs/a.md", "x")
    put(ctx, "secret.md", "top secret\n")
    with pytest.raises(ToolError, match=r"'\.\./secret' is not a topic name\. Topics: a\."):
        read_doc(ctx, "../secret")


def test_read_doc_target_is_the_document(ctx: ToolContext) -> None:
    (target,) = ReadDoc().targets(ReadDoc.args_model(topic="testing.md"), ctx)
    assert target.path == ctx.workspace / "docs" / "testing.md"
    assert target.access == "read"


# ------------------------------------------------------------------------------- bounded searches


class RecordedPopen(subprocess.Popen[bytes]):
    """Popen that remembers each rg it started, to check afterwards that none is left running."""

    started: ClassVar[list[subprocess.Popen[bytes]]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        RecordedPopen.started.append(self)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    RecordedPopen.started = []
    monkeypatch.setattr(rgstream.subprocess, "Popen", RecordedPopen)
    return RecordedPopen.started


def test_grep_stops_reading_at_the_cap_and_kills_ripgrep(
    ctx: ToolContext, recorded: list[subprocess.Popen[bytes]]
) -> None:
    """4 MB of matches cannot fit a pipe: rg is still writing when the cap is reached, so it
    must have been killed (not waited for to the end) and reaped."""
    put(ctx, "big.txt", "needle\n" * 600_000)
    out = grep(ctx, pattern="needle", output_mode="content", head_limit=5).splitlines()
    assert out[:5] == [f"big.txt:{n}:needle" for n in range(1, 6)]
    assert out[5:] == [f"... (over {OVERFLOW_LINES} more lines; narrow the search or raise head_limit)"]
    (rg,) = recorded
    assert rg.returncode == -signal.SIGKILL  # stopped early, and reaped: no rg left running


def test_grep_count_mode_is_capped_too(ctx: ToolContext, recorded: list[subprocess.Popen[bytes]]) -> None:
    for i in range(12):
        put(ctx, f"f{i:02}.txt", "needle\n")
    out = grep(ctx, pattern="needle", output_mode="count", head_limit=4).splitlines()
    assert len(out) == 5 and all(line.endswith(":1") for line in out[:4])
    assert out[4] == "... (8 more lines; narrow the search or raise head_limit)"
    assert all(rg.returncode is not None for rg in recorded)


def test_grep_files_mode_shows_the_newest_up_to_head_limit(ctx: ToolContext) -> None:
    for i in range(10):
        put(ctx, f"f{i}.txt", "needle\n", age=i)
    out = grep(ctx, pattern="needle", head_limit=3).splitlines()
    assert out == ["f0.txt", "f1.txt", "f2.txt", "... (7 more lines; narrow the search or raise head_limit)"]


def test_hits_a_rule_hides_are_neither_shown_nor_counted(tmp_path: Path) -> None:
    ctx = ToolContext(
        tmp_path, read_rules=lambda: True, rule_hides=lambda tool, path: "deny" in path,
        listable=lambda tool, path: "deny" not in path,
    )  # fmt: skip
    for i in range(GLOB_LIMIT + 3):
        put(ctx, f"ok{i:03}.txt")
    for i in range(50):
        put(ctx, f"deny{i:03}.txt")
    lines = glob(ctx, "*.txt").splitlines()
    assert not any("deny" in line for line in lines)
    assert lines[-1] == "... (3 more; use a narrower pattern or path)"


def test_without_rules_every_shown_hit_is_still_checked_for_links(tmp_path: Path) -> None:
    """No rule can match, so counting skips the rule test; what is shown still passes `listable`
    (the no-link check), so a hit that fails it never appears."""
    ctx = ToolContext(tmp_path, listable=lambda tool, path: "linked" not in path)
    put(ctx, "linked/secret.py", "needle\n", age=0)  # the newest: first in line to be shown
    put(ctx, "plain.py", "needle\n", age=5)
    assert glob(ctx, "**/*.py") == "plain.py"
    assert grep(ctx, pattern="needle") == "plain.py"
    assert grep(ctx, pattern="needle", output_mode="content") == "plain.py:1:needle"


def test_the_cap_never_ends_on_a_group_separator(ctx: ToolContext) -> None:
    put(ctx, "a.txt", "needle\nhay\nhay\nhay\nneedle\n")
    out = grep(ctx, pattern="needle", output_mode="content", context=1, head_limit=3).splitlines()
    assert out == ["a.txt:1:needle", "a.txt-2-hay", "... (2 more lines; narrow the search or raise head_limit)"]


def test_grep_in_words_that_finds_nothing_shows_the_identifiers_they_name(ctx: ToolContext) -> None:
    """Qwen2.5-Coder-1.5B: Grep "tax rate" three times, "No matches", while
    billing/rates.py says TAX_RATE = 0.12. The literal comes first; only when it finds nothing are
    the words matched ignoring case with _ or - between them, and the answer says so."""
    put(ctx, "billing/rates.py", "TAX_RATE = 0.12\n")
    put(ctx, "notes.txt", "the tax-rate is set in billing\n")
    out = grep(ctx, pattern="tax rate", output_mode="content")
    assert out.splitlines()[0].startswith("[arnes: no exact match for 'tax rate'; these match it ignoring case")
    assert sorted(out.splitlines()[1:]) == [
        "billing/rates.py:1:TAX_RATE = 0.12",
        "notes.txt:1:the tax-rate is set in billing",
    ]
    assert "billing/rates.py" in grep(ctx, pattern="tax rate", i=True)  # -i given, as the model did: still loosened
    assert grep(ctx, pattern="tax-rate") == "notes.txt"  # a literal hit: no loosening
    assert grep(ctx, pattern="vat rate") == "No matches for 'vat rate' in the workspace."


def test_a_pattern_that_finds_nothing_as_a_regex_is_tried_as_plain_text(ctx: ToolContext) -> None:
    """Qwen2.5-Coder-1.5B: `def add(a: int, b: int) -> int` found nothing in the
    file holding that line (the parentheses are a group); it Grepped again and again."""
    (ctx.workspace / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a - b\n")
    out = grep(ctx, pattern="def add(a: int, b: int) -> int", path="calc.py", output_mode="content")
    assert out == (
        "[arnes: no match for 'def add(a: int, b: int) -> int' as a regular expression; these match it as plain "
        "text:]\ncalc.py:1:def add(a: int, b: int) -> int:"
    )
    assert grep(ctx, pattern="def add(b)", path="calc.py").startswith("No matches for 'def add(b)'")
    assert grep(ctx, pattern=r"add\(a", path=".") == "calc.py"  # a regex that matches: as it is


def test_grep_of_one_file_shows_its_matching_lines_not_its_name(ctx: ToolContext) -> None:
    """Qwen2.5-Coder-1.5B: `tax rate` in billing/rates.py answered `billing/rates.py`
    (files_with_matches, the default), twice; the line to change was never shown."""
    put(ctx, "billing/rates.py", "SHIPPING_FLAT = 4.95\nTAX_RATE = 0.12\n")
    out = grep(ctx, pattern="tax rate", path="billing/rates.py", n=True, context=20, head_limit=1)
    assert out == (
        "[arnes: no exact match for 'tax rate'; these match it ignoring case, with _ or - for spaces "
        "('tax[ _-]?rate' -i):]\nbilling/rates.py:2:TAX_RATE = 0.12"
    ), out
    assert grep(ctx, pattern="TAX", path="billing/rates.py") == (
        "[arnes: billing/rates.py is one file, so its matching lines are shown]\nbilling/rates.py:2:TAX_RATE = 0.12"
    )
    assert grep(ctx, pattern="TAX", path="billing") == "billing/rates.py"  # a folder: files, as asked
