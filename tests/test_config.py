"""Settings hierarchy: strict validation, precedence, and where each rule came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.config import SECRET_SOURCE, load_config, user_settings_path
from arnes.errors import ConfigError


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_user_settings_follow_xdg(env: dict[str, str], tmp_path: Path) -> None:
    assert user_settings_path(env) == tmp_path / "xdg" / "arnes" / "settings.json"
    assert user_settings_path({"HOME": "/h"}) == Path("/h/.config/arnes/settings.json")


def test_later_layers_win_and_rules_accumulate(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    user = write(
        user_settings_path(env),
        {"model": {"provider": "anthropic", "name": "u"}, "permissions": {"deny": ["Read(**/.env*)"]}},
    )
    project = write(ws / ".arnes" / "settings.json", {"model": {"name": "p"}, "permissions": {"allow": ["Read"]}})
    local = write(
        ws / ".arnes" / "settings.local.json",
        {"model": {"context_window": 4096}, "permissions": {"defaultMode": "acceptEdits"}},
    )
    cfg = load_config(ws, env, trusted=True)
    assert (cfg.provider, cfg.model, cfg.context_window, cfg.mode) == ("anthropic", "p", 4096, "acceptEdits")
    assert [(r.kind, r.rule, r.source) for r in cfg.rules if r.source != SECRET_SOURCE] == [
        ("deny", "Read(**/.env*)", str(user)),
        ("allow", "Read", str(project)),
        ("ask", "Edit(./.claude/hooks/**)", "built in: what hooks and servers run"),  # .arnes/ is protected
    ]
    assert cfg.files == [user, project, local]


def test_user_settings_may_choose_bypass_but_a_project_may_not(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".arnes" / "settings.json", {"permissions": {"defaultMode": "bypass"}})
    cfg = load_config(ws, env, trusted=True)
    assert cfg.mode == "default" and "bypass" in cfg.warnings[0]
    write(user_settings_path(env), {"permissions": {"defaultMode": "bypass"}})
    assert load_config(ws, env, trusted=True).mode == "bypass"  # the user chose it; the project line changes nothing
    (ws / ".arnes" / "settings.json").unlink()
    assert load_config(ws, env, trusted=True).mode == "bypass"
    write(user_settings_path(env), {})
    write(ws / ".arnes" / "settings.local.json", {"permissions": {"defaultMode": "bypass"}})
    local = load_config(ws, env, trusted=True)  # local settings live in the project too: a clone could ship them
    assert local.mode == "default" and "settings.local.json" in local.warnings[0]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ({"modle": {}}, "modle: unknown key"),
        ({"permissions": {"deny": ["Read("]}}, "permissions.deny"),
        ({"permissions": {"allow": ["Fly(x)"]}}, "unknown tool 'Fly'"),
        ({"permissions": {"ask": ["Edit()"]}}, "empty specifier"),
        ({"permissions": {"defaultMode": "yolo"}}, "permissions.defaultMode"),
        ({"sandbox": {"mode": "docker"}}, "sandbox.mode"),
        ({"model": {"context_window": -1}}, "model.context_window"),
        ({"verify": {"ladder": {"smoke": "x"}}}, "verify.ladder"),
        ([], "(top level)"),
    ],
)
def test_invalid_settings_name_the_file_and_the_key(
    env: dict[str, str], tmp_path: Path, content: object, expected: str
) -> None:
    ws = tmp_path / "ws"
    path = write(ws / ".arnes" / "settings.local.json", content)
    with pytest.raises(ConfigError) as info:
        load_config(ws, env, trusted=True)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_only_the_user_widens_what_commands_read_and_see(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    widen = {"sandbox": {"read_paths": ["~/.ssh"], "env_passthrough": ["ANTHROPIC_API_KEY"]}}
    write(ws / ".arnes" / "settings.json", widen)
    cfg = load_config(ws, env, trusted=True)
    assert cfg.read_paths == [] and cfg.env_passthrough == []
    assert any("sandbox.read_paths ignored: only your user settings" in w for w in cfg.warnings)
    write(user_settings_path(env), {"sandbox": {"read_paths": ["~/data", "/opt/x"], "env_passthrough": ["NPM_*"]}})
    cfg = load_config(ws, env, trusted=True)
    assert cfg.read_paths == [tmp_path / "home" / "data", Path("/opt/x")] and cfg.env_passthrough == ["NPM_*"]
    write(user_settings_path(env), {"sandbox": {"read_paths": ["data"]}})
    with pytest.raises(ConfigError, match=r"settings.json: sandbox.read_paths: 'data' is not an absolute path"):
        load_config(ws, env, trusted=True)
