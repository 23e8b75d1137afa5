"""End to end: Claude Code's environment variables for Anthropic's API, as a gateway user sets them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

TOKEN = "gw-token-123"


def test_the_auth_token_goes_to_the_gateway_as_a_bearer_token_and_wins_over_the_key(shop: Path) -> None:
    """ANTHROPIC_BASE_URL + ANTHROPIC_AUTH_TOKEN, no key and no flag: Claude Code's gateway setup.
    With a key as well, the token alone is sent, as Claude Code does; it is never printed."""
    for extra in ({}, {"ANTHROPIC_API_KEY": "sk-ant-user-key"}):
        with FakeLLMServer([{"text": "ok"}]) as server:
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_AUTH_TOKEN": TOKEN, **extra}
            run = run_arnes("-p", "--provider", "anthropic", "-w", str(shop), "hi", env=env)
            [sent] = server.headers
        assert run.code == 0, run.err
        assert sent.get("authorization") == f"Bearer {TOKEN}"
        assert "sk-ant-user-key" not in str(sent) and TOKEN not in run.out + run.err


def test_the_auth_token_goes_to_a_base_url_flag_but_not_to_a_projects_url(shop: Path) -> None:
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes("-p", "--provider", "anthropic", "--base-url", server.url, "-w", str(shop), "hi",
                        env={"ANTHROPIC_AUTH_TOKEN": TOKEN})  # fmt: skip
        [sent] = server.headers
    assert run.code == 0, run.err
    assert sent.get("authorization") == f"Bearer {TOKEN}"
    with FakeLLMServer([{"text": "ok"}]) as server:
        (shop / ".arnes").mkdir(exist_ok=True)
        (shop / ".arnes" / "settings.json").write_text(f'{{"model": {{"base_url": "{server.url}"}}}}')
        run = run_arnes("-p", "--provider", "anthropic", "--trust", "-w", str(shop), "hi",
                        env={"ANTHROPIC_AUTH_TOKEN": TOKEN})  # fmt: skip
        sent_all = server.headers
    assert run.code == 0 and len(sent_all) == 1, run.err
    assert TOKEN not in str(sent_all), "a repository's URL got the user's token"


def test_anthropic_model_chooses_the_model_below_the_flag_and_above_the_settings(shop: Path) -> None:
    """Claude Code's order: --model, then ANTHROPIC_MODEL, then a settings file's `model`; aliases
    as in command files; another provider's run does not use it."""
    import json
    import os

    def asked(*flags: str, model: str = "claude-opus-4-1-20250805") -> str:
        with FakeLLMServer([{"text": "ok"}]) as server:
            url = server.url + ("/v1" if "openai" in flags else "")
            env = {"ANTHROPIC_MODEL": model, "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
            run = run_arnes("-p", "--base-url", url, *flags, "-w", str(shop), "hi", env=env)
            assert run.code == 0, run.err
            return str(server.requests[0][1]["model"])

    assert asked("--provider", "anthropic") == "claude-opus-4-1-20250805"
    assert asked("--provider", "anthropic", model="opus") == "claude-opus-4-5"
    assert asked("--provider", "anthropic", "--model", "claude-haiku-4-5") == "claude-haiku-4-5"
    arnes_own = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    arnes_own.parent.mkdir(parents=True, exist_ok=True)
    arnes_own.write_text(json.dumps({"model": {"name": "claude-sonnet-4-5-20250929"}}))
    assert asked("--provider", "anthropic") == "claude-opus-4-1-20250805"
    arnes_own.unlink()
    assert asked("--provider", "openai", "--context-window", "32768") == "gpt-4o-mini"


def test_claude_code_max_output_tokens_caps_each_request_and_a_bad_value_is_one_warning(shop: Path) -> None:
    def sent(value: str, *flags: str) -> tuple[object, str]:
        with FakeLLMServer([{"text": "ok"}]) as server:
            env = {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": value, "ANTHROPIC_API_KEY": "k"}
            run = run_arnes("-p", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5",
                            *flags, "-w", str(shop), "hi", env=env)  # fmt: skip
            assert run.code == 0, run.err
            return server.requests[0][1]["max_tokens"], run.out + run.err

    assert sent("1234")[0] == 1234
    assert sent("1234", "--max-output-tokens", "999")[0] == 999  # the flag wins
    default, _ = sent("")
    for bad in ("12k", "\u0661\u0662", "-5"):  # ASCII digits only: ARABIC-INDIC ONE TWO is no number
        tokens, said = sent(bad)
        assert tokens == default != 1234
        warned = [line for line in said.splitlines() if "CLAUDE_CODE_MAX_OUTPUT_TOKENS" in line]
        assert len(warned) == 1 and "is not a positive whole number; ignored" in warned[0], said
