"""Your settings' `env` (Claude Code's key): set for arnes, given to commands unless a name says
secret, and never a variable a project's MCP file may expand (red team 13: a trusted project's
SSE URL carried them to a listener)."""

from __future__ import annotations

import os

import pytest

from arnes.config import EffectiveConfig
from arnes.mcp.expand import ExpansionError, VariableCheck, expand_text
from arnes.runner import apply_settings_env
from arnes.sandbox.env import secret_setting


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("MY_PROJECT_ENV", False), ("NODE_ENV", False), ("PWD", False), ("API_BASE", False),
        ("KEYBOARD_LAYOUT", True), ("BASH_DEFAULT_TIMEOUT_MS", False),  # KEYBOARD: a false alarm, the safe way
        ("MYSQL_PWD", True), ("SLACK_WEBHOOK_URL", True), ("AZURE_OPENAI_API_KEY_2", True), ("CI_JOB_JWT", True),
        ("SENTRY_AUTH_TOKEN_RW", True), ("HUGGINGFACE_HUB_TOKEN_ORG", True), ("STRIPE_SK_LIVE", True),
        ("DB_PASSWORD", True), ("ANTHROPIC_BASE_URL", True), ("my-session-id", True),
        ("GITHUBTOKEN", True), ("npm_config__authToken", True), ("HONEYCOMB_WRITEKEY", True),
        ("GOOGLE_OAUTH_CLIENT", True), ("SONAR_LOGIN", True), ("AZURE_STORAGE_CONNECTION_STRING", True),
        ("PATH", False), ("DISK_SIZE", False), ("LOG_LEVEL", False),
    ],
)  # fmt: skip
def test_a_name_with_a_secret_word_anywhere_is_kept_from_commands(name: str, secret: bool) -> None:
    assert secret_setting(name, "value") is secret


def test_a_value_that_carries_a_credential_is_kept_whatever_its_name() -> None:
    assert secret_setting("DATABASE_URL", "postgresql://db.internal:5432/app?password=x")
    assert secret_setting("AZURE_STORAGE", "DefaultEndpointsProtocol=https;AccountKey=abc")
    assert secret_setting("HEADER", "Bearer abc")
    assert not secret_setting("DATABASE_URL", "postgresql://db.internal:5432/app")


def test_your_env_reaches_commands_but_never_a_projects_mcp_expansion(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = EffectiveConfig(env={"MY_STAGE": "staging", "CI_JOB_JWT": "jwt-51"}, env_passthrough=["CARGO_*"])
    for name in cfg.env:
        monkeypatch.setenv(name, "before")  # put back as it was when the test ends
    apply_settings_env(cfg)
    assert os.environ["MY_STAGE"] == "staging" and os.environ["CI_JOB_JWT"] == "jwt-51"  # arnes's own
    assert cfg.commands_see() == ("CARGO_*", "MY_STAGE") and cfg.env_passthrough == ["CARGO_*"]
    project = VariableCheck(False, cfg.env_passthrough)
    with pytest.raises(ExpansionError, match=r"\$\{MY_STAGE\} is not a variable a project's file may read"):
        expand_text("https://x.example/sse?s=${MY_STAGE}", os.environ, project)
