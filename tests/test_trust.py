"""Trust in pieces: which settings keys grant, the trust record, and the protected names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.config import Settings, load_config
from arnes.errors import ConfigError
from arnes.permissions.engine import RuleEngine
from arnes.permissions.grants import split_grants
from arnes.permissions.protected import in_git, protected_part
from arnes.permissions.trust import TrustStore
from arnes.permissions.types import Target, ToolRequest
from tests.conftest import run_arnes

EVERY_KEY = {
    "model": {"provider": "openai", "name": "n", "base_url": "http://x", "context_window": 9, "stream": False,
              "script": "s.json"},
    "models": {"subagent": {"name": "cheap"}},
    "pricing": {"m": {"input": 0, "output": 0}},
    "limits": {"max_turns": 5, "max_cost": 9.0},
    "progress": True,
    "permissions": {"allow": ["Bash"], "ask": ["Edit"], "deny": ["Read(**/.env*)"], "defaultMode": "acceptEdits"},
    "sandbox": {"mode": "off", "network": True},
    "verify": {"command": "c", "build": "b", "ladder": {"unit": "u"}},
}  # fmt: skip


def test_every_settings_key_is_a_restriction_or_a_grant() -> None:
    data = Settings.model_validate(EVERY_KEY).model_dump(exclude_unset=True)
    split = split_grants(data, "default", {"max_turns": None, "max_tokens": None, "max_cost": 1.0})
    assert split.kept == {
        "permissions": {"ask": ["Edit"], "deny": ["Read(**/.env*)"]},
        "limits": {"max_turns": 5},  # narrower than none; max_cost 9 would raise the user's 1.0
    }
    assert set(split.ignored) == {
        "model.provider", "model.name", "model.base_url", "model.context_window", "model.stream", "model.script",
        "models.subagent", "pricing.m", "limits.max_cost", "progress", "allow", "defaultMode",
        "sandbox.mode", "sandbox.network", "verify.command", "verify.build", "verify.ladder",
    }  # fmt: skip


def test_what_only_narrows_is_kept() -> None:
    data = {"permissions": {"defaultMode": "plan"}, "sandbox": {"network": False}, "progress": False}
    split = split_grants(data, "acceptEdits", {})
    assert split.ignored == {} and split.kept["permissions"] == {"defaultMode": "plan"}
    assert split_grants({"permissions": {"defaultMode": "default"}}, "plan", {}).ignored == {"defaultMode": "default"}


def test_untrusted_project_layers_lose_their_grants_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    (ws / ".arnes" / "settings.local.json").write_text(json.dumps(EVERY_KEY))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    cfg = load_config(ws, env, trusted=False)
    chosen = (cfg.provider, cfg.base_url, cfg.mode, cfg.sandbox, cfg.network)
    assert chosen == ("ollama", None, "default", "auto", False)
    mine = [(r.kind, r.rule) for r in cfg.rules if not r.source.startswith("built in")]  # not arnes's own
    assert mine == [("ask", "Edit"), ("deny", "Read(**/.env*)")]
    assert cfg.max_turns == 5 and cfg.verify_command is None and not cfg.trusted
    assert list(cfg.ignored) == [ws / ".arnes" / "settings.local.json"]
    trusted = load_config(ws, env, trusted=True)
    assert trusted.base_url == "http://x" and trusted.repo_chose_url() and not trusted.ignored


def test_the_record_follows_the_granting_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    assert store.status(ws) == "unknown"
    store.record(ws, True)
    assert store.status(ws) == "trusted"
    (ws / "README.md").write_text("not a granting file\n")
    assert store.status(ws) == "trusted"
    (ws / ".arnes" / "teams").mkdir()
    (ws / ".arnes" / "teams" / "t.toml").write_text("[[nodes]]\n")
    assert store.status(ws) == "changed"
    store.record(ws, False)
    assert store.status(ws) == "declined"
    (ws / "link").symlink_to(ws)
    assert store.status(ws / "link") == "declined"  # keyed by the real path
    assert store.revoke(ws) and store.status(ws) == "unknown"


def test_a_broken_record_is_one_clear_line_and_trusts_nothing(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "cfg" / "arnes" / "trust.json")
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{broken")
    with pytest.raises(ConfigError, match=r"trust\.json: cannot be read .*delete it"):
        store.status(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    run = run_arnes("-w", str(ws), "permissions", env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert run.code == 0 and "trust: untrusted" in run.out and "Traceback" not in run.err
    assert "trust.json: cannot be read" in run.err


@pytest.mark.parametrize(
    "relative",
    [".git/config", "sub/.git/config", "a/b/.git", ".GIT/config", ".Git/hooks/x", "sub/.git./config",
     "sub/.git /config", ".git::$INDEX_ALLOCATION/config", "GIT~1/config", "arnes~2/settings.json",
     ".g\u200cit/config", ".arnes/x", "deep/.ARNES/settings.json", "features.json", "FEATURES.json"],
)  # fmt: skip
def test_protected_names_at_any_depth_and_folded(relative: str) -> None:
    assert protected_part(relative) is not None


@pytest.mark.parametrize("relative", [".gitignore", "sub/.github/workflows/x.yml", "git/config", "sub/features.json"])
def test_near_names_are_not_protected(relative: str) -> None:
    assert protected_part(relative) is None


def test_in_git_is_the_sandbox_helper() -> None:
    assert in_git("vendor/.git") and in_git("a/.GIT/hooks/x") and not in_git("a/.gitmodules")


def test_the_engine_denies_git_outside_and_the_users_config_folder(tmp_path: Path) -> None:
    ws, config = tmp_path / "ws", tmp_path / "cfg" / "arnes"
    ws.mkdir()
    engine = RuleEngine(ws, "bypass", home=tmp_path, config_dir=config)
    for path in (tmp_path / "other" / ".git" / "config", config / "trust.json", config / "settings.json"):
        decision = engine.decide(ToolRequest("Write", {}, (Target(path, "write"),)))
        assert (decision.kind, decision.source) == ("deny", "builtin"), path
    outside = engine.decide(ToolRequest("Write", {}, (Target(tmp_path / "notes.txt", "write"),)))
    assert outside.kind == "allow"  # bypass: an ordinary outside write is not built-in protected


@pytest.mark.parametrize("mode", ["off", "landlock"])
def test_a_project_never_turns_the_sandbox_off_or_weaker_trusted_or_not(tmp_path: Path, mode: str) -> None:
    """Landlock leaves the home folder readable and the network open: a trusted project's hooks
    would read ~/.ssh and send it (red team round 9, 16)."""
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"sandbox": {"mode": mode}}))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    for trusted in (False, True):
        cfg = load_config(ws, env, trusted=trusted)
        assert cfg.sandbox == "auto" and "sandbox.mode" not in str(cfg.ignored)  # not a grant trust could give
        assert any(f"sandbox.mode {mode!r} ignored: only your user settings" in w for w in cfg.warnings)
    user = tmp_path / "cfg" / "arnes" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"sandbox": {"mode": mode}}))
    assert load_config(ws, env, trusted=True).sandbox == mode  # the user's own choice stands


def test_dont_ask_ranks_between_plan_and_default() -> None:
    """A project's dontAsk only narrows the user's default; its default would widen the user's dontAsk."""
    assert split_grants({"permissions": {"defaultMode": "dontAsk"}}, "default", {}).ignored == {}
    assert split_grants({"permissions": {"defaultMode": "default"}}, "dontAsk", {}).ignored == {
        "defaultMode": "default"
    }
    assert split_grants({"permissions": {"defaultMode": "plan"}}, "dontAsk", {}).ignored == {}
