"""Read, Write, Edit and the tool registry, on real files in a temporary workspace."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.host import atomic
from arnes.tools.base import ToolArgs, ToolContext, ToolError, ToolRegistry
from arnes.tools.docs import ReadDoc
from arnes.tools.files import DEFAULT_READ_LINES, Edit, Read, Write
from arnes.tools.readformat import MAX_LINE_CHARS
from arnes.tools.search import Glob, Grep


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def read(ctx: ToolContext, file_path: str, **kw: Any) -> str:
    return Read().run(Read.args_model(file_path=file_path, **kw), ctx)


def write(ctx: ToolContext, file_path: str, content: str) -> str:
    return Write().run(Write.args_model(file_path=file_path, content=content), ctx)


def edit(ctx: ToolContext, file_path: str, old: str, new: str, replace_all: bool = False) -> str:
    args = Edit.args_model(file_path=file_path, old_string=old, new_string=new, replace_all=replace_all)
    return Edit().run(args, ctx)


def temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".arnes-" in p.name]


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


# --------------------------------------------------------------------------------------------- Read


def test_read_numbers_lines_cat_n_style(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("alpha\nbeta\n\ngamma\n")
    assert read(ctx, "a.py") == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


def test_read_right_aligns_wide_line_numbers(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 12)))
    out = read(ctx, "a.txt").splitlines()
    assert out[0] == "     1\tl1"
    assert out[9] == "    10\tl10"
    assert out[10] == "    11\tl11"


def test_read_last_line_without_newline(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("one\ntwo")
    assert read(ctx, "a.txt") == "     1\tone\n     2\ttwo"


def test_read_offset_and_limit_with_more_lines_note(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("".join(f"line{i}\n" for i in range(1, 211)))
    out = read(ctx, "a.txt", offset=3, limit=2)
    rest = 206
    assert out == f"     3\tline3\n     4\tline4\n... ({rest} more lines; call Read with offset=5 to continue)"


def test_read_offset_to_the_end_has_no_note(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    out = read(ctx, "a.txt", offset=9, limit=50)
    assert out == "     9\tline9\n    10\tline10"
    assert "more lines" not in read(ctx, "a.txt", offset=8, limit=30)


def test_read_keeps_its_offset_and_limit_for_every_model(ctx: ToolContext) -> None:
    """Read returns the lines asked for: widening a tiny limit is a piece of the small profile only."""
    (ctx.workspace / "calc.py").write_text("".join(f"x{i} = {i}\n" for i in range(1, 7)))
    assert (
        read(ctx, "calc.py", offset=1, limit=1)
        == "     1\tx1 = 1\n... (5 more lines; call Read with offset=2 to continue)"
    )


def test_read_default_limit(ctx: ToolContext) -> None:
    total = DEFAULT_READ_LINES + 5
    (ctx.workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(1, total + 1)))
    out = read(ctx, "big.txt").splitlines()
    assert len(out) == DEFAULT_READ_LINES + 1
    assert out[-2] == f"{DEFAULT_READ_LINES:>6}\t{DEFAULT_READ_LINES}"
    assert out[-1] == f"... (5 more lines; call Read with offset={DEFAULT_READ_LINES + 1} to continue)"


def test_read_offset_past_the_end(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=r"offset 3 is past the end of a\.txt, which has 2 lines"):
        read(ctx, "a.txt", offset=3)


def test_read_empty_file_says_so_and_records_a_snapshot(ctx: ToolContext) -> None:
    path = ctx.workspace / "empty.txt"
    path.write_text("")
    assert read(ctx, "empty.txt") == "(empty.txt is empty)"
    assert ctx.files.check_writable(path, "empty.txt") is None
    assert write(ctx, "empty.txt", "now full\n") == "Overwrote empty.txt (1 lines)."


def test_read_missing_file_suggests_close_names(ctx: ToolContext) -> None:
    (ctx.workspace / "src").mkdir()
    (ctx.workspace / "src" / "main.py").write_text("x\n")
    with pytest.raises(ToolError) as err:
        read(ctx, "mian.py")
    msg = str(err.value)
    assert "File does not exist: mian.py." in msg
    assert "Existing files with similar names: src/main.py." in msg
    assert "Glob" in msg


def test_a_missing_file_names_what_a_small_workspace_has_but_not_what_a_rule_hides(ctx: ToolContext) -> None:
    """discount (real model): `Edit discount.txt` where the workspace holds pricing.py and its test."""
    for name in ("pricing.py", "test_pricing.py", ".gitignore", "build.log", "secret-keys.txt"):
        (ctx.workspace / name).write_text("x\n")
    (ctx.workspace / ".gitignore").write_text("*.log\n")
    ctx.hidden = lambda tool, path: path.name == "secret-keys.txt"
    with pytest.raises(ToolError) as err:
        read(ctx, "zzzzzzzz.txt")
    assert "The workspace's files are: .gitignore, pricing.py, test_pricing.py." in str(err.value)
    with pytest.raises(ToolError) as missing:
        edit(ctx, "discount.txt", "10%", "15%")
    assert str(missing.value).startswith("File does not exist: discount.txt. The workspace's files are: .gitignore")
    # Never "To create a file, use Write": the 1.5B model then created the guessed discount.txt.
    assert "Write" not in str(missing.value) and "give its real path" in str(missing.value)


def test_read_missing_folder(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"File does not exist: no/such/file\.txt"):
        read(ctx, "no/such/file.txt")


def test_read_folder(ctx: ToolContext) -> None:
    (ctx.workspace / "src").mkdir()
    with pytest.raises(ToolError, match=r"src is a folder, not a file.*Glob"):
        read(ctx, "src")


def test_read_binary(ctx: ToolContext) -> None:
    (ctx.workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match=r"img\.png is a binary file"):
        read(ctx, "img.png")


def test_read_not_utf8(ctx: ToolContext) -> None:
    (ctx.workspace / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(ToolError, match=r"latin1\.txt is not UTF-8 text \(.* at byte 3\)"):
        read(ctx, "latin1.txt")
    assert ctx.files.check_writable(ctx.workspace / "latin1.txt", "latin1.txt") is not None


def test_read_cuts_long_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "min.js").write_text("a" * (MAX_LINE_CHARS * 3) + "\nshort\n")
    first, second = read(ctx, "min.js").splitlines()
    assert first == "     1\t" + "a" * MAX_LINE_CHARS
    assert second == "     2\tshort"


def test_read_records_a_snapshot(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("hello\n")
    assert ctx.files.check_writable(path, "a.txt") == "File has not been read yet. Read a.txt before modifying it."
    read(ctx, "a.txt")
    assert ctx.files.check_writable(path, "a.txt") is None


def test_read_crlf_shows_no_carriage_returns(ctx: ToolContext) -> None:
    (ctx.workspace / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read(ctx, "win.txt") == "     1\tone\n     2\ttwo"


def test_read_numbers_lines_like_grep_despite_form_feeds(ctx: ToolContext) -> None:
    # str.splitlines would break at \f and U+2028 and shift every later line number.
    (ctx.workspace / "odd.txt").write_text("a\fb\nc\u2028d\ntarget\n")
    out = read(ctx, "odd.txt").splitlines()
    assert out[-1] == "     3\ttarget"
    grep = Grep().run(Grep.args_model(pattern="target", output_mode="content"), ctx)
    assert grep == "odd.txt:3:target"


def test_read_absolute_path_inside_workspace_is_shown_relative(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    (ctx.workspace / "sub" / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match=r"offset 9 is past the end of sub/a\.txt"):
        read(ctx, str(ctx.workspace / "sub" / "a.txt"), offset=9)
    assert read(ctx, str(ctx.workspace / "sub" / ".." / "sub" / "a.txt")) == "     1\tx"


# -------------------------------------------------------------------------------------------- Write


def test_write_creates_parent_folders(ctx: ToolContext) -> None:
    assert write(ctx, "deep/er/new.txt", "one\ntwo\n") == "Created deep/er/new.txt (2 lines)."
    assert (ctx.workspace / "deep" / "er" / "new.txt").read_text() == "one\ntwo\n"


def test_write_counts_a_last_line_without_newline(ctx: ToolContext) -> None:
    assert write(ctx, "a.txt", "one\ntwo") == "Created a.txt (2 lines)."
    assert write(ctx, "b.txt", "") == "Created b.txt (0 lines)."
    assert (ctx.workspace / "b.txt").read_bytes() == b""


def test_write_new_file_gets_default_mode(ctx: ToolContext, umask_022: None) -> None:
    write(ctx, "new.txt", "x\n")
    assert stat.S_IMODE((ctx.workspace / "new.txt").stat().st_mode) == 0o644


def test_write_over_unread_file_is_refused_with_its_content_and_then_allowed(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\nsecond\n")
    with pytest.raises(ToolError) as err:
        write(ctx, "a.txt", "new\n")
    assert str(err.value) == (
        "a.txt has not been read yet, so this Write was not made. Its current content is below, and it "
        "now counts as read: call Write again, based on this content.\n     1\toriginal\n     2\tsecond"
    )
    assert path.read_text() == "original\nsecond\n"
    assert temp_files(ctx.workspace) == []
    assert write(ctx, "a.txt", "new\n") == "Overwrote a.txt (1 lines)."  # the refusal counted as a Read


def test_a_refused_write_shows_a_long_file_only_up_to_the_cap(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, max_output_chars=2000)
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    with pytest.raises(ToolError) as err:
        edit(ctx, "long.txt", "LINE 999", "x")  # not in the file as written: the guard shows the file
    msg = str(err.value)
    assert "     1\tline 1\n" in msg and "\tline 999" not in msg and len(msg) < 2000
    shown = msg.count("\tline ")
    assert msg.endswith(f"... ({1000 - shown} more lines; Read with offset={shown + 1} to see them)")
    assert edit(ctx, "long.txt", "line 999", "x") == "Edited long.txt: replaced 1 occurrence."


def test_a_refused_write_over_a_binary_file_keeps_the_plain_refusal(ctx: ToolContext) -> None:
    (ctx.workspace / "b.bin").write_bytes(b"\0\1\2")
    for _ in range(2):
        with pytest.raises(ToolError, match=r"^File has not been read yet\. Read b\.bin before modifying it\.$"):
            write(ctx, "b.bin", "x")


def test_write_after_read_overwrites(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\n")
    read(ctx, "a.txt")
    assert write(ctx, "a.txt", "new\ncontent\n") == "Overwrote a.txt (2 lines)."
    assert path.read_text() == "new\ncontent\n"
    # The snapshot follows the write: a second Write needs no new Read.
    assert write(ctx, "a.txt", "again\n") == "Overwrote a.txt (1 lines)."
    assert path.read_text() == "again\n"


def _assert_modified_refused(ctx: ToolContext, path: Path, before: str) -> None:
    with pytest.raises(ToolError) as err:
        write(ctx, path.name, "mine\n")
    assert str(err.value).startswith(f"{path.name} was modified since it was last read, so this Write was not made.")
    assert "     1\t" + before.splitlines()[0] in str(err.value)
    assert path.read_text() == before
    # The refusal showed the new content, so the next write goes through.
    write(ctx, path.name, "mine\n")
    assert path.read_text() == "mine\n"


def test_write_refused_when_size_changed_since_read(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\n")
    read(ctx, "a.txt")
    path.write_text("changed by someone else\n")
    _assert_modified_refused(ctx, path, "changed by someone else\n")


def test_write_refused_when_mtime_changed_since_read(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\n")
    read(ctx, "a.txt")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    _assert_modified_refused(ctx, path, "original\n")


def test_write_refused_when_only_content_changed_via_hash(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\n")
    read(ctx, "a.txt")
    st = path.stat()
    path.write_text("ORIGINAL\n")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert path.stat().st_size == st.st_size
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    _assert_modified_refused(ctx, path, "ORIGINAL\n")


def test_write_after_the_read_file_was_deleted_recreates_it(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("original\n")
    read(ctx, "a.txt")
    path.unlink()
    assert write(ctx, "a.txt", "back\n") == "Created a.txt (1 lines)."
    assert path.read_text() == "back\n"


def test_write_keeps_the_mode(ctx: ToolContext) -> None:
    path = ctx.workspace / "run.sh"
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o755)
    read(ctx, "run.sh")
    write(ctx, "run.sh", "#!/bin/sh\necho bye\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert path.read_text() == "#!/bin/sh\necho bye\n"


def test_write_keeps_crlf(ctx: ToolContext) -> None:
    path = ctx.workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    read(ctx, "win.txt")
    write(ctx, "win.txt", "three\nfour\n")
    assert path.read_bytes() == b"three\r\nfour\r\n"


def test_write_keeps_lf(ctx: ToolContext) -> None:
    path = ctx.workspace / "unix.txt"
    path.write_bytes(b"one\ntwo\n")
    read(ctx, "unix.txt")
    write(ctx, "unix.txt", "three\nfour\n")
    assert path.read_bytes() == b"three\nfour\n"


def test_write_content_with_crlf_is_left_alone(ctx: ToolContext) -> None:
    path = ctx.workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    read(ctx, "win.txt")
    write(ctx, "win.txt", "a\r\nb\r\n")
    assert path.read_bytes() == b"a\r\nb\r\n"


def test_write_through_a_symlink_writes_the_target(ctx: ToolContext) -> None:
    target = ctx.workspace / "real.txt"
    target.write_text("old\n")
    link = ctx.workspace / "link.txt"
    link.symlink_to("real.txt")
    read(ctx, "link.txt")
    assert write(ctx, "link.txt", "new\n") == "Overwrote link.txt (1 lines)."
    assert link.is_symlink()
    assert os.readlink(link) == "real.txt"
    assert target.read_text() == "new\n"
    assert temp_files(ctx.workspace) == []


def test_a_read_of_the_target_covers_a_write_through_the_link(ctx: ToolContext) -> None:
    (ctx.workspace / "real.txt").write_text("old\n")
    (ctx.workspace / "link.txt").symlink_to("real.txt")
    read(ctx, "real.txt")
    write(ctx, "link.txt", "new\n")
    assert (ctx.workspace / "real.txt").read_text() == "new\n"


def test_write_through_a_dangling_symlink_creates_the_target(ctx: ToolContext) -> None:
    link = ctx.workspace / "link.txt"
    link.symlink_to("sub/target.txt")
    assert write(ctx, "link.txt", "made\n") == "Created link.txt (1 lines)."
    assert link.is_symlink()
    assert (ctx.workspace / "sub" / "target.txt").read_text() == "made\n"


def test_write_to_a_folder_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "src").mkdir()
    with pytest.raises(ToolError, match="src is a folder"):
        write(ctx, "src", "x")


def test_write_leaves_no_temporary_files(ctx: ToolContext) -> None:
    write(ctx, "a.txt", "1\n")
    read(ctx, "a.txt")
    write(ctx, "a.txt", "2\n")
    write(ctx, "sub/b.txt", "3\n")
    assert temp_files(ctx.workspace) == []
    assert temp_files(ctx.workspace / "sub") == []


def test_write_is_atomic_when_the_rename_fails(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("precious\n")
    read(ctx, "a.txt")

    def boom(src: Any, dst: Any, **fds: Any) -> None:
        assert os.stat(src, dir_fd=fds["src_dir_fd"]).st_size == len("half-baked\n")  # fully written first
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError, match="disk on fire"):
        write(ctx, "a.txt", "half-baked\n")
    assert path.read_text() == "precious\n"
    assert temp_files(ctx.workspace) == []


def test_write_new_file_atomic_when_the_rename_fails(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(src: Any, dst: Any, **fds: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write(ctx, "new.txt", "x\n")
    assert not (ctx.workspace / "new.txt").exists()
    assert temp_files(ctx.workspace) == []


def test_changelog_records_the_original(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("first\n")
    read(ctx, "a.txt")
    write(ctx, "a.txt", "second\n")
    write(ctx, "a.txt", "third\n")
    write(ctx, "new.txt", "brand new\n")
    originals = ctx.changes.originals
    assert originals[path.resolve()] == b"first\n"  # the content before the session's first write
    assert originals[(ctx.workspace / "new.txt").resolve()] is None
    assert set(ctx.changes.changed()) == {path.resolve(), (ctx.workspace / "new.txt").resolve()}


def test_changelog_forgets_nothing_but_reports_only_real_changes(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.txt"
    path.write_text("same\n")
    read(ctx, "a.txt")
    write(ctx, "a.txt", "same\n")
    assert ctx.changes.originals[path.resolve()] == b"same\n"
    assert ctx.changes.changed() == []


def test_write_preview_is_a_diff(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("one\ntwo\n")
    diff = Write().preview(Write.args_model(file_path="a.txt", content="one\nTWO\n"), ctx)
    assert diff is not None
    assert "--- a/a.txt" in diff
    assert "+++ b/a.txt" in diff
    assert "-two\n" in diff
    assert "+TWO\n" in diff


# --------------------------------------------------------------------------------------------- Edit


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("total = compute(y)", "total = compute(z)"),  # nothing like it
        ("x = 1", "x = 2"),  # exact: still refused, the file was never read
        ("x  =  1", "x = 2"),  # loose whitespace: still refused
    ],
)
def test_an_edit_of_an_unread_file_is_refused_and_the_refusal_shows_it(ctx: ToolContext, old: str, new: str) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x = 1\n")
    with pytest.raises(ToolError, match=r"^a\.py has not been read yet, so this Edit was not made\.") as err:
        edit(ctx, "a.py", old, new)
    assert str(err.value).endswith("call Edit again, based on this content.\n     1\tx = 1")
    assert path.read_text() == "x = 1\n"
    assert edit(ctx, "a.py", "x = 1", "x = 2") == "Edited a.py: replaced 1 occurrence."  # the refusal showed it
    assert path.read_text() == "x = 2\n"


def test_an_edit_whose_old_string_is_not_there_changes_nothing_and_shows_the_closest_lines(ctx: ToolContext) -> None:
    path = ctx.workspace / "pricing.py"
    path.write_text("# rate (10 %)\n\nRATE = 0.10\nTHRESHOLD = 100.0\n")
    read(ctx, "pricing.py")
    for _ in range(2):  # sent again, it is still not guessed at
        with pytest.raises(ToolError, match=r"old_string not found in pricing\.py\. The closest match is at lines 3-3"):
            edit(ctx, "pricing.py", "rate = 0.10", "rate = 0.15")
    assert path.read_text() == "# rate (10 %)\n\nRATE = 0.10\nTHRESHOLD = 100.0\n"


def test_an_unread_file_changed_since_a_read_or_hidden_is_still_refused(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x = 1\n")
    read(ctx, "a.py")
    path.write_text("x = 1\ny = 2\n")  # someone else's change since the Read
    with pytest.raises(ToolError, match="was modified since it was last read"):
        edit(ctx, "a.py", "x = 1", "x = 3")
    assert path.read_text() == "x = 1\ny = 2\n"


def test_edit_replaces_a_unique_string(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("def f():\n    return 1\n")
    read(ctx, "a.py")
    assert edit(ctx, "a.py", "return 1", "return 2") == "Edited a.py: replaced 1 occurrence."
    assert path.read_text() == "def f():\n    return 2\n"


def test_edit_multiple_matches_need_context_or_replace_all(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x = 1\ny = 1\nz = 1\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError) as err:
        edit(ctx, "a.py", "= 1", "= 2")
    assert "matches 3 times in a.py (lines 1, 2, 3)" in str(err.value)
    assert "replace_all" in str(err.value)
    assert path.read_text() == "x = 1\ny = 1\nz = 1\n"


def test_edit_replace_all(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x = 1\ny = 1\nz = 1\n")
    read(ctx, "a.py")
    assert edit(ctx, "a.py", "= 1", "= 2", replace_all=True) == "Edited a.py: replaced 3 occurrences."
    assert path.read_text() == "x = 2\ny = 2\nz = 2\n"


def test_edit_not_found_shows_the_closest_match(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("import os\n\ndef add(a, b):\n    return a + b\n\nprint(add(1, 2))\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError) as err:
        edit(ctx, "a.py", "def add(a,b):\n    return a+b", "def add(a, b, c):")
    msg = str(err.value)
    assert msg.startswith("old_string not found in a.py.")
    assert "closest match is at lines 3-4" in msg
    assert "     3\tdef add(a, b):\n     4\t    return a + b\n" in msg
    assert "Copy those lines exactly" in msg
    assert path.read_text().startswith("import os\n")


def test_edit_not_found_without_anything_close(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("import os\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError) as err:
        edit(ctx, "a.py", "completely unrelated text that is long", "x")
    assert "old_string not found in a.py." in str(err.value)
    assert "closest match" not in str(err.value)
    assert "Read a.py shows it" in str(err.value) and "put the file's last line in old_string ('import os')" in str(
        err.value
    )


def test_edit_with_line_number_prefixes_that_match_once_removed(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("alpha\nbeta\ngamma\n")
    pasted = "\n".join(read(ctx, "a.py").splitlines()[1:3])  # "     2\tbeta\n     3\tgamma"
    out = edit(ctx, "a.py", pasted, "     2\tBETA\n     3\tGAMMA")
    assert out == (
        "Edited a.py: replaced 1 occurrence (old_string matched once Read's line-number prefixes were "
        "removed; check the result)."
    )
    assert path.read_text() == "alpha\nBETA\nGAMMA\n"
    edit(ctx, "a.py", "  1→alpha", "ALPHA")  # the arrow style too; new_string without prefixes stays as is
    assert path.read_text() == "ALPHA\nBETA\nGAMMA\n"


def test_edit_with_line_number_prefixes_that_match_twice_is_refused(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x = 1\nx = 1\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError, match=r"matches 2 times in a\.py once Read's line-number prefixes are removed"):
        edit(ctx, "a.py", "     1\tx = 1", "x = 2")
    assert path.read_text() == "x = 1\nx = 1\n"


def test_edit_whose_old_string_differs_only_in_whitespace_is_made_and_reindented(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("class A:\n    def f(self):  \n        return 1\n\n    def g(self):\n        return 2\n")
    read(ctx, "a.py")
    # The model dropped one level of indentation and a trailing space, in old and new alike.
    out = edit(ctx, "a.py", "def f(self):\n    return 1\n", "def f(self):\n    x = 1\n    return x\n")
    assert out == (
        "Edited a.py: replaced 1 occurrence (old_string matched lines 2-3 only when whitespace is ignored; "
        "new_string was indented like the file; check the result)."
    )
    assert path.read_text() == (
        "class A:\n    def f(self):\n        x = 1\n        return x\n\n    def g(self):\n        return 2\n"
    )
    edit(ctx, "a.py", "return 2   ", "return 3")  # trailing spaces only: the line keeps its indentation
    assert path.read_text().endswith("    def g(self):\n        return 3\n")


def test_edit_whitespace_repair_never_picks_between_two_places_or_guesses_indentation(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    before = "def f():\n    return 1\n\ndef g():\n  return 1\n"
    path.write_text(before)
    read(ctx, "a.py")
    with pytest.raises(ToolError, match=r"old_string not found in a\.py"):
        edit(ctx, "a.py", "return 1 ", "return 2")  # two lines match up to whitespace
    with pytest.raises(ToolError, match="closest match is at lines 4-5"):
        edit(ctx, "a.py", "def g():\nreturn 1", "def g():\nreturn 2")  # the indentation map is not one shift
    assert path.read_text() == before


def test_edit_with_line_number_prefixes_that_would_not_match(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("alpha\nbeta\ngamma\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError) as err:
        edit(ctx, "a.py", "     2\tbetta", "x")
    msg = str(err.value)
    assert "line-number prefixes" in msg
    assert "Without them it matches" not in msg


def test_edit_crlf_file_with_lf_strings_keeps_crlf(ctx: ToolContext) -> None:
    path = ctx.workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    read(ctx, "win.txt")
    assert edit(ctx, "win.txt", "one\ntwo", "uno\ndos\nextra") == "Edited win.txt: replaced 1 occurrence."
    assert path.read_bytes() == b"uno\r\ndos\r\nextra\r\nthree\r\n"


def test_edit_crlf_strings_match_an_lf_file(ctx: ToolContext) -> None:
    path = ctx.workspace / "unix.txt"
    path.write_bytes(b"one\ntwo\n")
    read(ctx, "unix.txt")
    edit(ctx, "unix.txt", "one\r\ntwo", "1\r\n2")
    assert path.read_bytes() == b"1\n2\n"


def test_edit_same_strings_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("x = 1\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError, match="old_string and new_string are the same"):
        edit(ctx, "a.py", "x = 1", "x = 1")


def test_edit_with_an_empty_old_string_creates_a_new_file_and_is_refused_on_a_file_with_text(ctx: ToolContext) -> None:
    assert edit(ctx, "new.py", "", "y = 2\n").startswith("Created new.py")
    assert (ctx.workspace / "new.py").read_text() == "y = 2\n"
    (ctx.workspace / "a.py").write_text("x = 1\n")
    read(ctx, "a.py")
    with pytest.raises(ToolError, match=r"old_string is empty, but a\.py is not"):
        edit(ctx, "a.py", "", "y = 2\n")
    assert (ctx.workspace / "a.py").read_text() == "x = 1\n"


def test_edit_keeps_the_mode(ctx: ToolContext) -> None:
    path = ctx.workspace / "run.sh"
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o750)
    read(ctx, "run.sh")
    edit(ctx, "run.sh", "hi", "bye")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert temp_files(ctx.workspace) == []


def test_edit_updates_the_snapshot(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("a = 1\nb = 2\n")
    read(ctx, "a.py")
    edit(ctx, "a.py", "a = 1", "a = 10")
    edit(ctx, "a.py", "b = 2", "b = 20")  # no new Read needed
    assert path.read_text() == "a = 10\nb = 20\n"
    read(ctx, "a.py")
    write(ctx, "a.py", "gone\n")
    assert ctx.changes.originals[path.resolve()] == b"a = 1\nb = 2\n"


def test_edit_refused_when_the_file_changed_since_read(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("a = 1\n")
    read(ctx, "a.py")
    path.write_text("a = 1\nb = 2\n")
    with pytest.raises(ToolError, match="was modified since it was last read"):
        edit(ctx, "a.py", "a = 1", "a = 3")
    assert path.read_text() == "a = 1\nb = 2\n"


def test_edit_missing_file(ctx: ToolContext) -> None:
    with pytest.raises(
        ToolError,
        match=r"File does not exist: nope\.py\. The workspace has no files yet\. Edit changes an existing file",
    ):
        edit(ctx, "nope.py", "a", "b")


def test_edit_through_a_symlink_keeps_the_link(ctx: ToolContext) -> None:
    (ctx.workspace / "real.py").write_text("a = 1\n")
    link = ctx.workspace / "link.py"
    link.symlink_to("real.py")
    read(ctx, "link.py")
    edit(ctx, "link.py", "1", "2")
    assert link.is_symlink()
    assert (ctx.workspace / "real.py").read_text() == "a = 2\n"


def test_edit_preview(ctx: ToolContext) -> None:
    (ctx.workspace / "a.py").write_text("a = 1\n")
    args = Edit.args_model(file_path="a.py", old_string="a = 1", new_string="a = 2")
    diff = Edit().preview(args, ctx)
    assert diff is not None
    assert "-a = 1\n" in diff
    assert "+a = 2\n" in diff
    bad = Edit.args_model(file_path="a.py", old_string="nothing", new_string="x")
    assert Edit().preview(bad, ctx) is None
    assert (ctx.workspace / "a.py").read_text() == "a = 1\n"


# ----------------------------------------------------------------------------------------- Registry


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([Read(), Glob(), Grep(), Write(), Edit(), ReadDoc()])


def test_registry_unknown_tool_lists_the_available_ones(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError) as err:
        registry.parse("Nope", {})
    assert str(err.value) == "Unknown tool 'Nope'. Available tools: Read, Glob, Grep, Write, Edit, ReadDoc."


def test_registry_parses_valid_arguments(registry: ToolRegistry) -> None:
    tool, args = registry.parse("Read", {"file_path": "a.py", "offset": 2})
    assert tool.name == "Read"
    assert args == Read.args_model(file_path="a.py", offset=2)
    tool, args = registry.parse("Grep", {"pattern": "x", "-i": True, "-n": False})
    assert tool.name == "Grep"
    assert args.case_insensitive is True  # type: ignore[attr-defined]
    assert args.line_numbers is False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "raw", "phrases"),
    [
        ("Read", {"file_path": 5}, ["file_path", "string"]),
        ("Read", {"file_path": "a", "offset": "abc"}, ["offset"]),
        ("Read", {"file_path": "a", "offset": 0}, ["offset", "greater than or equal to 1"]),
        ("Read", {}, ["file_path: Field required"]),
        ("Read", {"file_path": 5, "bogus": 1}, ["bogus: unknown key", "file_path"]),  # dropped only when that suffices
        ("Edit", {"file_path": "a", "old_string": "x"}, ["new_string: Field required"]),
        ("Edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "maybe"}, ["replace_all"]),
        ("Grep", {"pattern": "x", "output_mode": "lines"}, ["output_mode"]),
        ("Grep", {"pattern": "x", "-C": -1}, ["-C", "0 or more"]),
        ("Grep", {"pattern": "x", "-A": "many"}, ["-A"]),
        ("Grep", {"pattern": ["x"]}, ["pattern"]),
        ("Glob", {"pattern": None}, ["pattern"]),
    ],
)
def test_registry_invalid_arguments_are_tool_errors(
    registry: ToolRegistry, name: str, raw: dict[str, Any], phrases: list[str]
) -> None:
    with pytest.raises(ToolError) as err:
        registry.parse(name, raw)
    msg = str(err.value)
    assert msg.startswith(f"Invalid arguments for {name}: ")
    assert msg.endswith(f"Fix them and call {name} again.")
    for phrase in phrases:
        assert phrase in msg


def test_registry_invalid_json(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError) as err:
        registry.parse("Read", {"__invalid_json__": '{"file_path": "a.py"'})
    msg = str(err.value)
    assert "Your tool call could not be read: its arguments are not valid JSON" in msg
    assert '{"file_path": "a.py"' in msg
    assert "Call it again with valid JSON" in msg


def test_registry_invalid_json_is_cut_short(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError) as err:
        registry.parse("Write", {"__invalid_json__": "x" * 5000})
    assert "x" * 200 in str(err.value)
    assert "x" * 201 not in str(err.value)


def test_registry_invalid_json_marker_of_any_type_is_a_tool_error(registry: ToolRegistry) -> None:
    for value in (5, None, ["a"], {"k": "v"}):
        with pytest.raises(ToolError, match="could not be read"):
            registry.parse("Read", {"__invalid_json__": value})


def test_registry_unknown_tool_wins_over_bad_json(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="Unknown tool"):
        registry.parse("Nope", {"__invalid_json__": "{"})


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_KEYS = [
    "file_path",
    "offset",
    "limit",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "pattern",
    "path",
    "glob",
    "output_mode",
    "-i",
    "-n",
    "context",
    "head_limit",
    "topic",
    "__invalid_json__",
    "extra",
]
_keys = st.sampled_from(_KEYS)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(["Read", "Glob", "Grep", "Write", "Edit", "ReadDoc", "Bogus"]),
    raw=st.dictionaries(_keys, _json, max_size=5),
)
def test_registry_parse_raises_only_tool_errors(name: str, raw: dict[str, Any]) -> None:
    registry = ToolRegistry([Read(), Glob(), Grep(), Write(), Edit(), ReadDoc()])
    try:
        tool, args = registry.parse(name, raw)
    except ToolError:
        return
    assert tool.name == name
    assert isinstance(args, ToolArgs)


def _keys_anywhere(value: Any) -> set[str]:
    if isinstance(value, dict):
        out = set(value)
        for v in value.values():
            out |= _keys_anywhere(v)
        return out
    if isinstance(value, list):
        return set().union(*(_keys_anywhere(v) for v in value)) if value else set()
    return set()


def test_specs_have_schemas_without_titles(registry: ToolRegistry) -> None:
    specs = {s.name: s for s in registry.specs()}
    assert list(specs) == ["Read", "Glob", "Grep", "Write", "Edit", "ReadDoc"]
    for spec in specs.values():
        schema = spec.input_schema
        assert schema["type"] == "object"
        assert "additionalProperties" not in schema  # still enforced by validation; not worth its tokens
        assert "title" not in _keys_anywhere(schema), spec.name
        assert "anyOf" not in _keys_anywhere(schema), spec.name  # optional fields shown as their type
        assert spec.description
        for prop in schema["properties"].values():
            assert prop.get("description"), spec.name
    assert specs["Read"].input_schema["required"] == ["file_path"]
    assert set(specs["Read"].input_schema["properties"]) == {"file_path", "offset", "limit"}
    assert set(specs["Write"].input_schema["required"]) == {"file_path", "content"}
    assert set(specs["Edit"].input_schema["required"]) == {"file_path", "old_string", "new_string"}
    assert specs["ReadDoc"].input_schema["required"] == ["topic"]
    assert specs["Read"].input_schema["properties"]["offset"] == {
        "type": "integer",
        "minimum": 1,
        "description": "First line to read (1-based).",
    }


def test_grep_schema_exposes_dash_i_and_dash_n(registry: ToolRegistry) -> None:
    (spec,) = [s for s in registry.specs() if s.name == "Grep"]
    props = spec.input_schema["properties"]
    assert set(props) >= {"pattern", "path", "glob", "output_mode", "-i", "-n", "-C", "head_limit"}
    assert props["-i"]["type"] == "boolean"
    assert props["-n"]["type"] == "boolean"
    assert props["output_mode"]["enum"] == ["files_with_matches", "content", "count"]
    assert "case_insensitive" not in props


def test_tool_flags_and_targets(ctx: ToolContext) -> None:
    assert Read.read_only and Glob.read_only and Grep.read_only and ReadDoc.read_only
    assert not Write.read_only and not Edit.read_only
    (target,) = Write().targets(Write.args_model(file_path="sub/../a.txt", content=""), ctx)
    assert target.path == ctx.workspace / "a.txt"
    assert target.access == "write"
    (target,) = Read().targets(Read.args_model(file_path="/etc/hosts"), ctx)
    assert target.path == Path("/etc/hosts")
    assert target.access == "read"


def test_edit_whitespace_repair_in_a_crlf_file_keeps_crlf(ctx: ToolContext) -> None:
    path = ctx.workspace / "w.py"
    path.write_bytes(b"if x:\r\n    y = 1  \r\n    z = 2\r\n")
    read(ctx, "w.py")
    out = edit(ctx, "w.py", "  y = 1\n  z = 2", "  y = 10\n  z = 20")
    assert "only when whitespace is ignored" in out
    assert path.read_bytes() == b"if x:\r\n    y = 10\r\n    z = 20\r\n"


@settings(max_examples=60, deadline=None)
@given(
    body=st.lists(st.sampled_from(["x = 1", "if x:", "    y = 2", "", "return y", "\tz = 3"]), min_size=1, max_size=8),
    shift=st.integers(min_value=1, max_value=4),
)
def test_edit_whitespace_repair_equals_the_exact_edit_when_indentation_is_shifted(body: list[str], shift: int) -> None:
    from arnes.tools.editmatch import replace

    marker = ["def unique_marker():", "    return 42"]
    text = "\n".join([*body, *("    " + m for m in marker), *body]) + "\n"
    exact_old = "\n".join("    " + m for m in marker)
    exact_new = "    def renamed():\n        return 43"
    expected = replace(text, exact_old, exact_new, False, "f").updated
    pad = " " * shift  # the model got the indentation wrong by `shift` in old and new alike
    old = "\n".join(pad + line for line in marker)
    new = pad + "def renamed():\n" + pad + "    return 43"
    assert replace(text, old, new, False, "f").updated == expected


def test_write_of_a_copied_read_result_drops_the_line_numbers_and_says_so(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("def f():\n    return 1\n")
    copied = read(ctx, "a.py").replace("return 1", "return 2") + "\n"
    assert write(ctx, "a.py", copied) == (
        "Overwrote a.py (2 lines) (every line carried Read's line-number prefix; they were removed)."
    )
    assert path.read_text() == "def f():\n    return 2\n"
    for data in ("1\tone\n2\ttwo\n", "     1\tone\n     3\tthree\n", "     1\tone\nplain\n"):  # not Read's numbering
        write(ctx, "data.tsv", data)
        assert (ctx.workspace / "data.tsv").read_text() == data


def test_an_edit_that_breaks_python_is_made_as_sent(ctx: ToolContext) -> None:
    """Edit replaces exactly old_string for every model; judging the result is the content-check piece's."""
    (ctx.workspace / "m.py").write_text("def f(n):\n    raise NotImplementedError\n")
    read(ctx, "m.py")
    assert edit(ctx, "m.py", "raise NotImplementedError", "return 'a' for b").startswith("Edited m.py")
    assert "return 'a' for b" in (ctx.workspace / "m.py").read_text()


def test_a_file_that_did_not_parse_before_and_other_kinds_are_not_judged(ctx: ToolContext) -> None:
    (ctx.workspace / "new_syntax.py").write_text("def f(:\n")  # broken already, or newer than this Python
    (ctx.workspace / "notes.txt").write_text("x\n")
    read(ctx, "new_syntax.py")
    read(ctx, "notes.txt")
    assert edit(ctx, "new_syntax.py", "def f(:", "def f(: return (").startswith("Edited")
    assert edit(ctx, "notes.txt", "x", "return 'Fizz' for multiples").startswith("Edited")


def test_a_huge_file_is_refused_before_it_is_read_whole(ctx: ToolContext) -> None:
    """A sparse 2 GB file once took 4 GB of memory before Read said "binary": size and the first
    bytes are judged first, from a short read."""
    with (ctx.workspace / "big.log").open("wb") as handle:
        handle.write(b"text\n" * 2000)  # text as far as the first look goes
        handle.truncate(2 << 30)  # sparse: no disk used
    with pytest.raises(ToolError, match=r"big\.log is 2,147,483,648 bytes, too large to read whole"):
        read(ctx, "big.log")
    with (ctx.workspace / "zeros.bin").open("wb") as handle:
        handle.truncate(2 << 30)
    with pytest.raises(ToolError, match="binary file"):
        read(ctx, "zeros.bin")
