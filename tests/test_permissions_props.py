"""Property-based tests: glob matching and path normalisation hold for any path, not just examples."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.host.paths import absolute, is_inside
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule, glob_to_regex
from arnes.permissions.types import Target, ToolRequest

WS = Path("/ws")
segment = st.text(alphabet="abcXYZ019._- ", min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
rel_path = st.lists(segment, min_size=1, max_size=5).map("/".join)


def matches(glob: str, path: str) -> bool:
    return re.fullmatch(glob_to_regex(glob), path, re.DOTALL) is not None


def literal(path: str) -> str:
    return re.sub(r"([*?\[\\])", r"\\\1", path)


@given(rel_path)
def test_a_literal_pattern_matches_itself_and_what_is_below(path: str) -> None:
    assert matches(literal(path), path)
    assert matches(literal(path), path + "/child")
    assert not matches(literal(path), path + "x")  # never a longer name that merely starts the same


@given(rel_path)
def test_double_star_matches_everything(path: str) -> None:
    assert matches("**", path)
    assert matches("**/" + path.split("/")[-1], path)


@given(rel_path, segment)
def test_star_never_crosses_a_folder(path: str, name: str) -> None:
    assert matches("*", name)
    deep = f"{path}/{name}"
    assert matches("*", deep) == matches("*", path)  # only through the folder rule, never by crossing /
    assert not re.fullmatch(glob_to_regex("*").removesuffix("(?:/.*)?"), deep)


@given(rel_path)
def test_absolute_is_idempotent_and_stays_inside(path: str) -> None:
    once = absolute(WS, path)
    assert absolute(WS, once) == once
    assert is_inside(WS, once)


@given(rel_path, rel_path)
def test_dotdot_folds_to_the_same_path(path: str, detour: str) -> None:
    ups = "/".join([".."] * len(detour.split("/")))
    assert absolute(WS, f"{detour}/{ups}/{path}") == absolute(WS, path)
    assert absolute(WS, f"./{path}") == absolute(WS, path)


@given(st.integers(min_value=1, max_value=4), rel_path)
def test_climbing_out_is_outside(extra: int, path: str) -> None:
    climbed = absolute(WS, "/".join([".."] * extra) + "/" + path)
    assert not is_inside(WS, climbed) or climbed == WS


@settings(max_examples=60, deadline=None)
@given(rel_path)
def test_spelling_does_not_change_a_decision(path: str) -> None:
    engine = RuleEngine(WS, "default", [SourcedRule("deny", "Read(**/*X*)", "t")])
    spellings = [path, f"./{path}", f"zz/../{path}", f"{WS}/{path}"]
    kinds = {engine.decide(ToolRequest("Read", {}, (Target(absolute(WS, s), "read"),))).kind for s in spellings}
    assert len(kinds) == 1
    assert kinds == ({"deny"} if "X" in path else {"allow"})


def test_real_path_fast_path_agrees_with_realpath(tmp_path: Path) -> None:
    import os

    from arnes.host.paths import real_path

    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "f.txt").write_text("x")
    (tmp_path / "out").mkdir()
    (root / "a" / "link").symlink_to(tmp_path / "out")
    (root / "rel").symlink_to("a/b")
    (root / "dangling").symlink_to("../nowhere/x")
    (root / "loop").symlink_to("loop")
    cases = [
        "", "a", "a/b/new.txt", "a/f.txt", "a/f.txt/under", "a/link/x", "rel/y", "dangling",
        "dangling/deeper", "missing/tail/z", "loop", "loop/x",
    ]  # fmt: skip
    for case in cases:
        path = str(root / case) if case else str(root)
        assert real_path(path, str(root)) == os.path.realpath(path), case
        assert real_path(path) == os.path.realpath(path), case
