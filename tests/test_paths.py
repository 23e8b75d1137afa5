"""Path normalisation and real-path resolution: what the permission perimeter judges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from arnes.host.paths import absolute, is_inside, resolve_real
from arnes.tools.base import ToolContext
from arnes.tools.files import Write, WriteArgs

WS = Path("/ws")


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A real (link-free) temporary folder with a workspace and a place outside it."""
    real = tmp_path.resolve()
    (real / "ws").mkdir()
    (real / "outside").mkdir()
    return real


# ----------------------------------------------------------------------------------------- absolute


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("a.py", "/ws/a.py"),
        ("./a.py", "/ws/a.py"),
        ("src/../a.py", "/ws/a.py"),
        ("src/./lib//x.py", "/ws/src/lib/x.py"),
        ("..", "/"),
        ("../other/x", "/other/x"),
        ("a/b/../../..", "/"),
        (".", "/ws"),
        ("", "/ws"),
        ("/etc/passwd", "/etc/passwd"),
        ("/etc/../tmp/x", "/tmp/x"),
        ("/ws/src/../a.py", "/ws/a.py"),
        ("src/", "/ws/src"),
    ],
)
def test_absolute_folds_dots(written: str, expected: str) -> None:
    assert absolute(WS, written) == Path(expected)


def test_absolute_expands_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert absolute(WS, "~") == Path("/home/someone")
    assert absolute(WS, "~/notes/../x.txt") == Path("/home/someone/x.txt")
    assert absolute(WS, "a/~/x") == Path("/ws/a/~/x")  # only a leading ~ is the home folder


def test_absolute_accepts_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert absolute(WS, Path("src/../b")) == Path("/ws/b")


# -------------------------------------------------------------------------------------- resolve_real


def test_resolve_real_plain_existing_and_missing(base: Path) -> None:
    ws = base / "ws"
    (ws / "a.txt").write_text("x")
    assert resolve_real(ws / "a.txt") == ws / "a.txt"
    assert resolve_real(ws / "new.txt") == ws / "new.txt"


def test_resolve_real_missing_tail_is_appended_to_the_deepest_existing_ancestor(base: Path) -> None:
    ws = base / "ws"
    (ws / "src").mkdir()
    (ws / "link").symlink_to(base / "outside")
    assert resolve_real(ws / "src" / "new" / "deeper" / "f.py") == ws / "src" / "new" / "deeper" / "f.py"
    assert resolve_real(ws / "link" / "new" / "deeper" / "f.py") == base / "outside" / "new" / "deeper" / "f.py"


def test_resolve_real_link_to_a_folder_outside(base: Path) -> None:
    ws = base / "ws"
    (base / "outside" / "secret.txt").write_text("s")
    (ws / "escape").symlink_to(base / "outside")
    real = resolve_real(ws / "escape" / "secret.txt")
    assert real == base / "outside" / "secret.txt"
    assert not is_inside(ws, real)
    assert is_inside(ws, ws / "escape" / "secret.txt")  # as written it looks inside: resolving matters


def test_resolve_real_relative_link_inside(base: Path) -> None:
    ws = base / "ws"
    (ws / "src").mkdir()
    (ws / "src" / "real.py").write_text("x")
    (ws / "alias.py").symlink_to("src/real.py")
    assert resolve_real(ws / "alias.py") == ws / "src" / "real.py"


def test_resolve_real_dangling_link_is_followed_to_its_target(base: Path) -> None:
    ws = base / "ws"
    (ws / "absolute-dangle").symlink_to(base / "outside" / "new.txt")
    (ws / "relative-dangle").symlink_to("../outside/sub/new.txt")
    (ws / "inside-dangle").symlink_to("later/new.txt")
    assert resolve_real(ws / "absolute-dangle") == base / "outside" / "new.txt"
    assert resolve_real(ws / "relative-dangle") == base / "outside" / "sub" / "new.txt"
    assert resolve_real(ws / "inside-dangle") == ws / "later" / "new.txt"
    assert not is_inside(ws, resolve_real(ws / "relative-dangle"))


def test_resolve_real_chain_of_dangling_links(base: Path) -> None:
    ws = base / "ws"
    (base / "outside" / "hop").symlink_to(base / "outside" / "final.txt")
    (ws / "first").symlink_to(base / "outside" / "hop")
    assert resolve_real(ws / "first") == base / "outside" / "final.txt"


def test_resolve_real_dangling_link_in_a_linked_folder(base: Path) -> None:
    # ws/linked -> outside/deep; outside/deep/dangle -> ../x. The link's `..` applies to its real
    # folder (outside/deep), not to the path as written (ws/linked): the write lands in outside/.
    ws = base / "ws"
    deep = base / "outside" / "deep"
    deep.mkdir()
    (ws / "linked").symlink_to(deep)
    (deep / "dangle").symlink_to("../x")
    (ws / "x").write_text("decoy inside the workspace")
    assert resolve_real(ws / "linked" / "dangle") == base / "outside" / "x"
    assert not is_inside(ws, resolve_real(ws / "linked" / "dangle"))


def test_resolve_real_agrees_with_where_write_lands(base: Path) -> None:
    ws = base / "ws"
    deep = base / "outside" / "deep"
    deep.mkdir()
    (ws / "linked").symlink_to(deep)
    (deep / "dangle").symlink_to("../landed.txt")
    (ws / "plain-dangle").symlink_to("sub/made.txt")
    ctx = ToolContext(ws)
    for rel in ("linked/dangle", "plain-dangle", "linked/new/file.txt"):
        predicted = resolve_real(ctx.path(rel))
        assert not predicted.exists()
        Write().run(WriteArgs(file_path=rel, content="x"), ctx)
        assert predicted.read_text() == "x", rel


def test_resolve_real_link_loops_terminate(base: Path) -> None:
    ws = base / "ws"
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    (ws / "self").symlink_to("self")
    for path in (ws / "a", ws / "a" / "child.txt", ws / "self", ws / "self" / "x" / "y"):
        real = resolve_real(path)  # must return, not recurse forever
        assert is_inside(ws, real)


def test_resolve_real_long_chain_of_links(base: Path) -> None:
    ws = base / "ws"
    (ws / "end.txt").write_text("x")
    previous = "end.txt"
    for i in range(30):
        (ws / f"l{i}").symlink_to(previous)
        previous = f"l{i}"
    assert resolve_real(ws / previous) == ws / "end.txt"


def test_resolve_real_workspace_itself_behind_a_link(base: Path) -> None:
    (base / "alias").symlink_to(base / "ws")
    assert resolve_real(base / "alias") == base / "ws"
    assert resolve_real(base / "alias" / "new" / "f.py") == base / "ws" / "new" / "f.py"


# ---------------------------------------------------------------------------------------- is_inside


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/ws", True),
        ("/ws/a", True),
        ("/ws/a/b/c.py", True),
        ("/ws-other", False),
        ("/ws-other/a", False),
        ("/wsx", False),
        ("/w", False),
        ("/", False),
        ("/other/ws", False),
        ("/etc/passwd", False),
    ],
)
def test_is_inside_by_whole_components(path: str, inside: bool) -> None:
    assert is_inside(WS, Path(path)) is inside


def test_is_inside_root() -> None:
    assert is_inside(Path("/"), Path("/anything/at/all"))


# ------------------------------------------------------------------------------------- properties

_component = st.text(
    alphabet=st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=8
).filter(lambda c: c != "..")
_relative = st.lists(_component, min_size=0, max_size=6).map("/".join)
_any_path = st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=30)


@given(_relative)
def test_relative_paths_without_dotdot_stay_inside(p: str) -> None:
    assume(not p.startswith("~"))  # ~ is the home folder
    for root in (WS, Path("/"), Path("/deep/work space")):
        assert is_inside(root, absolute(root, p))


@given(_any_path)
def test_absolute_is_idempotent(p: str) -> None:
    once = absolute(WS, p)
    assert once.is_absolute()
    assert absolute(WS, once) == once
    assert absolute(WS, str(once)) == once
    assert ".." not in once.parts


@given(st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1))
def test_sibling_with_a_common_prefix_is_not_inside(suffix: str) -> None:
    assume(not suffix.startswith("/"))
    assert not is_inside(WS, Path("/ws" + suffix))


@given(_relative)
def test_absolute_joins_relative_paths_to_the_workspace(p: str) -> None:
    assume(not p.startswith("~"))
    target = absolute(WS, p)
    assert target == WS / os.path.normpath(p) if p else target == WS
