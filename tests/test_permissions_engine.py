"""The rule engine, line by line of DESIGN §4's decision table."""

from __future__ import annotations

from pathlib import Path

import pytest

from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Access, Mode, Target, ToolRequest

MODES: list[Mode] = ["default", "acceptEdits", "plan", "bypass"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def engine(ws: Path, mode: Mode = "default", home: Path | None = None, **rules: list[str]) -> RuleEngine:
    sourced = [SourcedRule(kind, r, f"{kind}-file") for kind in ("deny", "ask", "allow") for r in rules.get(kind, [])]
    return RuleEngine(ws, mode, sourced, home=home or ws.parent / "home")


def req(tool: str, path: Path, access: Access | None = None) -> ToolRequest:
    access = access or ("write" if tool in ("Write", "Edit") else "read")
    return ToolRequest(tool, {}, (Target(path, access),), access == "read")


def kind(e: RuleEngine, tool: str, path: Path) -> tuple[str, str]:
    d = e.decide(req(tool, path))
    return d.kind, d.source


# -- no rule: perimeter and mode ----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_read_inside_is_allowed(ws: Path, mode: Mode) -> None:
    assert kind(engine(ws, mode), "Read", ws / "a.py") == ("allow", "perimeter")


@pytest.mark.parametrize(
    ("mode", "expected"), [("default", "ask"), ("acceptEdits", "ask"), ("plan", "ask"), ("bypass", "allow")]
)
def test_read_outside_asks_except_in_bypass(ws: Path, tmp_path: Path, mode: Mode, expected: str) -> None:
    assert kind(engine(ws, mode), "Read", tmp_path / "x")[0] == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("default", ("ask", "perimeter")),
        ("acceptEdits", ("ask", "perimeter")),
        ("plan", ("deny", "mode")),
        ("bypass", ("allow", "mode")),
    ],
)
def test_write_outside_always_asks(ws: Path, tmp_path: Path, mode: Mode, expected: tuple[str, str]) -> None:
    assert kind(engine(ws, mode), "Write", tmp_path / "x") == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("default", ("ask", "mode")),
        ("acceptEdits", ("allow", "mode")),
        ("plan", ("deny", "mode")),
        ("bypass", ("allow", "mode")),
    ],
)
def test_write_inside_follows_the_mode(ws: Path, mode: Mode, expected: tuple[str, str]) -> None:
    assert kind(engine(ws, mode), "Edit", ws / "a.py") == expected


def test_sibling_with_the_workspace_as_prefix_is_outside(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "ws-other").mkdir()
    assert kind(engine(ws), "Read", tmp_path / "ws-other" / "a")[1] == "perimeter"
    assert kind(engine(ws), "Read", tmp_path / "ws-other" / "a")[0] == "ask"


# -- rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_deny_wins_in_every_mode(ws: Path, mode: Mode) -> None:
    e = engine(ws, mode, deny=["Read(**/.env*)"], allow=["Read(**)"])
    d = e.decide(req("Read", ws / "sub" / ".env.local"))
    assert (d.kind, d.source, d.reason, d.origin) == ("deny", "rule", "rule Read(**/.env*)", "deny-file")


def test_ask_beats_allow_and_bypass_turns_it_into_allow(ws: Path) -> None:
    rules = {"ask": ["Edit(src/**)"], "allow": ["Edit(src/**)"]}
    assert kind(engine(ws, "acceptEdits", **rules), "Edit", ws / "src" / "a.py") == ("ask", "rule")
    d = engine(ws, "bypass", **rules).decide(req("Edit", ws / "src" / "a.py"))
    assert (d.kind, d.rule) == ("allow", "Edit(src/**)") and d.reason.startswith("bypass mode")


def test_allow_rule_skips_the_question(ws: Path, tmp_path: Path) -> None:
    e = engine(ws, allow=["Edit(docs/**)", f"Read({tmp_path}/shared/**)"])
    assert kind(e, "Edit", ws / "docs" / "a.md") == ("allow", "rule")
    assert kind(e, "Edit", ws / "src" / "a.py") == ("ask", "mode")
    assert kind(e, "Read", tmp_path / "shared" / "x.txt") == ("allow", "rule")


def test_plan_mode_denies_writes_even_when_a_rule_allows(ws: Path) -> None:
    assert kind(engine(ws, "plan", allow=["Edit"]), "Write", ws / "a") == ("deny", "mode")


def test_edit_rules_cover_write_but_write_rules_do_not_cover_edit(ws: Path) -> None:
    e = engine(ws, "acceptEdits", deny=["Edit(*.lock)", "Write(*.md)"])
    assert kind(e, "Write", ws / "poetry.lock") == ("deny", "rule")
    assert kind(e, "Write", ws / "README.md") == ("deny", "rule")
    assert kind(e, "Edit", ws / "README.md") == ("allow", "mode")


@pytest.mark.parametrize("tool", ["Read", "Glob", "Grep", "ReadDoc"])
def test_read_rules_cover_the_search_tools(ws: Path, tool: str) -> None:
    e = engine(ws, deny=["Read(secrets/**)"])
    assert kind(e, tool, ws / "secrets")[0] == "deny"
    assert kind(e, tool, ws / "secrets" / "key.pem")[0] == "deny"
    assert kind(e, tool, ws / "src")[0] == "allow"


def test_a_grep_rule_does_not_cover_read(ws: Path) -> None:
    e = engine(ws, deny=["Grep(big/**)"])
    assert kind(e, "Grep", ws / "big")[0] == "deny" and kind(e, "Read", ws / "big" / "a")[0] == "allow"


def test_tool_without_specifier_covers_every_call(ws: Path) -> None:
    e = engine(ws, "bypass", deny=["Edit"])
    assert kind(e, "Write", ws / "anything") == ("deny", "rule")
    assert kind(e, "Read", ws / "anything") == ("allow", "perimeter")


def test_absolute_and_home_specifiers(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    e = engine(ws, home=home, deny=[f"Read({tmp_path}/etc/**)", "Read(~/.ssh/**)"], allow=["Read(~/notes/*.md)"])
    assert kind(e, "Read", tmp_path / "etc" / "passwd") == ("deny", "rule")
    assert kind(e, "Read", home / ".ssh" / "id_ed25519") == ("deny", "rule")
    assert kind(e, "Read", home / "notes" / "a.md") == ("allow", "rule")
    assert kind(e, "Read", home / "notes" / "sub" / "a.md") == ("ask", "perimeter")  # * stays in one folder


def test_relative_specifiers_are_anchored_at_the_workspace(ws: Path) -> None:
    e = engine(ws, deny=["Read(config.json)"])
    assert kind(e, "Read", ws / "config.json")[0] == "deny"
    assert kind(e, "Read", ws / "sub" / "config.json")[0] == "allow"


def test_deny_matches_case_insensitively_allow_does_not(ws: Path) -> None:
    e = engine(ws, "acceptEdits", deny=["Read(**/.env*)"], allow=["Edit(src/**)"])
    assert kind(e, "Read", ws / ".ENV")[0] == "deny"
    assert kind(e, "Read", ws / "App" / ".Env.prod")[0] == "deny"
    assert kind(engine(ws, allow=["Edit(src/**)"]), "Edit", ws / "SRC" / "a.py") == ("ask", "mode")


def test_session_rules_apply_at_once(ws: Path, tmp_path: Path) -> None:
    e = engine(ws)
    assert kind(e, "Read", tmp_path / "lib" / "a.py")[0] == "ask"
    e.add_rule("allow", f"Read({tmp_path}/lib/**)")
    d = e.decide(req("Read", tmp_path / "lib" / "a.py"))
    assert (d.kind, d.origin) == ("allow", "session")


def test_several_targets_deny_beats_ask_beats_allow(ws: Path, tmp_path: Path) -> None:
    e = engine(ws, "acceptEdits", deny=["Edit(*.lock)"])
    both = ToolRequest("Edit", {}, (Target(ws / "a.py", "write"), Target(ws / "x.lock", "write")), False)
    assert e.decide(both).kind == "deny"
    mixed = ToolRequest("Edit", {}, (Target(ws / "a.py", "write"), Target(tmp_path / "o", "write")), False)
    assert e.decide(mixed).kind == "ask"


def test_pathless_calls_follow_tool_rules(ws: Path) -> None:
    assert engine(ws).decide(ToolRequest("Delegate", {})).kind == "allow"
    assert engine(ws, deny=["Delegate"]).decide(ToolRequest("Delegate", {})).kind == "deny"


# -- built-in protection -------------------------------------------------------------------


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".arnes/settings.json", ".arnes", ".git"])
@pytest.mark.parametrize("mode", MODES)
def test_protected_folders_are_never_written(ws: Path, path: str, mode: Mode) -> None:
    e = engine(ws, mode, allow=["Edit", "Edit(.arnes/**)"])
    assert kind(e, "Write", ws / path) == ("deny", "builtin")


def test_a_link_into_a_protected_folder_is_protected(ws: Path) -> None:
    (ws / ".arnes").mkdir()
    (ws / "conf").symlink_to(ws / ".arnes")
    assert kind(engine(ws, "bypass"), "Write", ws / "conf" / "settings.json") == ("deny", "builtin")


def test_protected_folders_can_be_read(ws: Path) -> None:
    assert kind(engine(ws), "Read", ws / ".git" / "HEAD")[0] == "allow"


# -- real paths ----------------------------------------------------------------------------


def test_a_link_to_env_is_still_env(ws: Path) -> None:
    (ws / ".env").write_text("TOKEN=x")
    (ws / "harmless.txt").symlink_to(ws / ".env")
    assert kind(engine(ws, "bypass", deny=["Read(**/.env*)"]), "Read", ws / "harmless.txt") == ("deny", "rule")


def test_a_path_named_like_a_secret_is_denied_whatever_it_points_to(ws: Path) -> None:
    (ws / "plain.txt").write_text("x")
    (ws / ".env").symlink_to(ws / "plain.txt")
    assert kind(engine(ws, deny=["Read(**/.env*)"]), "Read", ws / ".env")[0] == "deny"


def test_a_link_to_a_folder_outside_is_outside(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (ws / "data").symlink_to(tmp_path / "out")
    assert kind(engine(ws, "acceptEdits"), "Write", ws / "data" / "new.txt") == ("ask", "perimeter")
    # an allow must match both forms: the written one matches, the real one does not
    assert kind(engine(ws, allow=["Read(data/**)"]), "Read", ws / "data" / "n.txt") == ("ask", "perimeter")


def test_a_dangling_link_is_judged_by_its_target(ws: Path, tmp_path: Path) -> None:
    (ws / "dangling").symlink_to(tmp_path / "nowhere" / "file")
    assert kind(engine(ws, "acceptEdits"), "Write", ws / "dangling") == ("ask", "perimeter")
    (ws / "to-git").symlink_to(ws / ".git" / "config")
    assert kind(engine(ws, "bypass"), "Write", ws / "to-git") == ("deny", "builtin")


def test_a_workspace_behind_a_link_is_judged_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    e = RuleEngine(tmp_path / "alias", "default", [SourcedRule("deny", "Read(*.pem)", "x")])
    assert e.decide(req("Read", tmp_path / "real" / "a.py")).kind == "allow"
    assert e.decide(req("Read", tmp_path / "real" / "k.pem")).kind == "deny"


# -- hiding files from searches, and the "always" suggestion ---------------------------------


def test_hidden_covers_deny_and_ask_rules_only(ws: Path, tmp_path: Path) -> None:
    e = engine(ws, deny=["Read(**/.env*)"], ask=["Read(private/**)"])
    assert e.hidden("Grep", ws / ".env") and e.hidden("Glob", ws / "private" / "a")
    assert not e.hidden("Grep", ws / "src" / "a.py")
    assert not e.hidden("Grep", tmp_path / "elsewhere")  # the perimeter is the call's business


def test_always_is_offered_for_reads_outside_only(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    e = engine(ws)
    assert e.suggest_rule(req("Read", tmp_path / "lib" / "a.py")) == f"Read({tmp_path}/lib/**)"
    assert e.suggest_rule(req("Grep", tmp_path / "lib")) == f"Read({tmp_path}/lib/**)"
    assert e.suggest_rule(req("Read", ws / "a.py")) is None
    assert e.suggest_rule(req("Write", tmp_path / "lib" / "a.py")) is None


def test_plan_mode_denies_a_write_even_when_an_ask_rule_matches(ws: Path) -> None:
    assert kind(engine(ws, "plan", ask=["Edit(src/**)"]), "Edit", ws / "src" / "a.py") == ("deny", "mode")
    assert kind(engine(ws, "default", ask=["Edit(src/**)"]), "Edit", ws / "src" / "a.py") == ("ask", "rule")


def test_plan_mode_denies_a_writing_command_even_when_an_ask_rule_matches(ws: Path) -> None:
    e = engine(ws, "plan", ask=["Bash(npm:*)"])
    assert e.decide(ToolRequest("Bash", {}, (), False, "npm install")).kind == "deny"


def test_always_for_a_read_outside_never_covers_the_home_folder_or_its_hidden_folders() -> None:
    from arnes.permissions.engine import read_rule

    home = Path("/home/u")
    assert read_rule(Path("/opt/lib/a.py"), False, home) == "Read(/opt/lib/**)"
    assert read_rule(Path("/home/u/src/x/a.py"), False, home) == "Read(/home/u/src/x/**)"
    assert read_rule(Path("/home/u/.bashrc"), False, home) == "Read(/home/u/.bashrc)"
    assert read_rule(Path("/home/u/.ssh/config"), False, home) == "Read(/home/u/.ssh/config)"
    assert read_rule(Path("/home/u"), True, home) is None and read_rule(Path("/home/u/.aws"), True, home) is None
    assert read_rule(Path("/etc/x[1]/a"), False, home) == "Read(/etc/x\\[1\\]/**)"  # names that folder only
