"""Claude Code's limit variables, read from arnes's own environment when a session is built.

Users set them in their shell or in their settings' `env` (applied to arnes's environment before the
session is built, runner.py `apply_settings_env`), and expect arnes to keep them as Claude Code does:
`BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS` (a command's time limit when the model gives
none, and the most it may ask for), `MCP_TIMEOUT` (milliseconds an MCP server has to start, where
its own settings name no `timeout`), `MAX_MCP_OUTPUT_TOKENS` (an MCP tool result's cap) and
`CLAUDE_CODE_MAX_OUTPUT_TOKENS` (each request's `max_tokens`, `output_tokens`). The
values go to the session as data, never read again elsewhere; a bad value is one warning naming
the variable, and the default stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

BASH_DEFAULT_MS = 120_000
BASH_MAX_MS = 600_000
DAY_MS = 24 * 60 * 60 * 1000  # no command, and no server's start, is waited for longer
MCP_OUTPUT_TOKENS = 25_000  # Claude Code's default cap on an MCP tool's result
MOST_MCP_OUTPUT_TOKENS = 1_000_000
CHARS_PER_TOKEN = 4
MOST_OUTPUT_TOKENS = 1_000_000  # past any model's output; the server says what its model allows
EXAMPLES = {"MAX_MCP_OUTPUT_TOKENS": 50_000, "CLAUDE_CODE_MAX_OUTPUT_TOKENS": 32_000}  # a sensible value each


@dataclass(frozen=True)
class EnvLimits:
    bash_default_ms: int = BASH_DEFAULT_MS
    bash_max_ms: int = BASH_MAX_MS
    mcp_start_ms: int | None = None  # MCP_TIMEOUT; None: each server's own `timeout` (30 s)
    mcp_output_tokens: int = MCP_OUTPUT_TOKENS

    def mcp_output_chars(self, window: int, cap: int) -> int:
        """An MCP result's cap in characters: MAX_MCP_OUTPUT_TOKENS (4 characters a token), but no
        more than a quarter of the `window` (in tokens: so many characters) or the session's `cap`
        for every result, whichever is more: a small model's context still holds the result."""
        return min(self.mcp_output_tokens * CHARS_PER_TOKEN, max(cap, window))


def env_limits(env: Mapping[str, str]) -> tuple[EnvLimits, list[str]]:
    """The limits `env` sets, and one warning for each value that could not be used."""
    warnings: list[str] = []
    default = _number(env, "BASH_DEFAULT_TIMEOUT_MS", DAY_MS, warnings) or BASH_DEFAULT_MS
    # As in Claude Code, the maximum is never below the default.
    most = max(_number(env, "BASH_MAX_TIMEOUT_MS", DAY_MS, warnings) or BASH_MAX_MS, default)
    start = _number(env, "MCP_TIMEOUT", DAY_MS, warnings)
    tokens = _number(env, "MAX_MCP_OUTPUT_TOKENS", MOST_MCP_OUTPUT_TOKENS, warnings) or MCP_OUTPUT_TOKENS
    return EnvLimits(default, most, start, tokens), warnings


def output_tokens(env: Mapping[str, str]) -> tuple[int | None, list[str]]:
    """CLAUDE_CODE_MAX_OUTPUT_TOKENS, None when unset or bad, and one warning for a bad value."""
    warnings: list[str] = []
    return _number(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS", MOST_OUTPUT_TOKENS, warnings), warnings


def _number(env: Mapping[str, str], name: str, most: int, warnings: list[str]) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    # ASCII digits only: int() also reads other scripts' digits (ARABIC-INDIC ONE is 1), which no shell or
    # Claude Code takes for a number, so a value that looks like nothing would be a 1 ms limit.
    value = int(raw) if raw.isascii() and raw.isdigit() else 0
    if value <= 0:
        example = EXAMPLES.get(name, 300000)
        warnings.append(f"{name}={raw[:40]!r} is not a positive whole number; ignored (e.g. {name}={example})")
        return None
    if value > most:
        warnings.append(f"{name}={value} is more than {most}; {most} is used")
        return most
    return value
