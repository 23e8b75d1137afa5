"""The Provider seam: neutral messages in, one neutral assistant turn out."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from arnes.messages import Message, ModelResponse, ToolSpec

TextSink = Callable[[str], None]


class Provider(Protocol):
    """A model endpoint. Implementations translate at the edge and keep no conversation."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        """Send the conversation; stream text to `on_text` as it arrives; return the turn."""
        ...


@dataclass(frozen=True)
class ProviderSettings:
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    script: str | None = None
    max_output_tokens: int = 4096
    stream: bool = True
    env_key: bool = True  # False: the base URL came from a repository, so no key from the environment
    timeout: float = 600.0  # seconds before the first byte: a CPU reads a long prompt slowly
    read_timeout: float = 300.0  # seconds between two chunks once the reply streams
    temperature: float | None = None  # None: not sent, the server's own default
    top_p: float | None = None  # None: not sent (a fresh draw's sampling sets it, adapt/draws.py)
    max_tokens_key: str = "max_tokens"  # OpenAI's reasoning models want max_completion_tokens
    context_window: int | None = None  # enforced on the server where it can be (Ollama's num_ctx)
    text_calls: bool = False  # the profile reads calls printed as text (llm/recovering.py): stop a runaway


@dataclass(frozen=True)
class ProviderProfile:
    """Per-provider defaults as data, not as `if` chains."""

    wire: str  # "openai" | "anthropic" | "ollama" | "script"
    default_model: str
    default_base_url: str | None
    default_context_window: int
    api_key_env: str | None
    placeholder_key: str | None = None


PROFILES: dict[str, ProviderProfile] = {
    # Ollama's native API, so num_ctx holds (llm/ollama.py); a /v1 base URL is accepted too.
    "ollama": ProviderProfile("ollama", "qwen2.5-coder:7b", "http://localhost:11434", 8192, None, "ollama"),
    "openai": ProviderProfile("openai", "gpt-4o-mini", None, 128_000, "OPENAI_API_KEY", "none"),
    "anthropic": ProviderProfile("anthropic", "claude-sonnet-4-5", None, 200_000, "ANTHROPIC_API_KEY"),
    "script": ProviderProfile("script", "script", None, 32_768, None),
}


def api_key(settings: ProviderSettings) -> str | None:
    """The key given, else the provider's variable in the environment (never a project file).

    Not the environment's key when the base URL is a repository's choice (DESIGN §10): the
    user's key goes only to the provider's own endpoint or to a URL the user chose.
    """
    env = PROFILES[settings.provider].api_key_env
    return settings.api_key or (os.environ.get(env) if env and settings.env_key else None)


def bad_url(url: str) -> str | None:
    """Why `url` cannot be a server's base URL, or None: a path alone (`/v1`) or a bare host would
    otherwise reach the HTTP libraries and end in a traceback, or a wait, far from its cause."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (a bad port raises here)
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not a server's address; give it whole, e.g. http://localhost:8000/v1"
    return None


AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"  # Claude Code's gateway credential, sent as `Authorization: Bearer`


def auth_token(settings: ProviderSettings) -> str | None:
    """ANTHROPIC_AUTH_TOKEN for Anthropic's wire, as Claude Code sends it to an LLM gateway; like a
    key, never to a URL a repository chose (DESIGN §10). Claude Code prefers it to ANTHROPIC_API_KEY
    and to apiKeyHelper, so the caller sends it alone when it is set."""
    if PROFILES[settings.provider].wire != "anthropic" or not settings.env_key:
        return None
    return os.environ.get(AUTH_TOKEN_ENV) or None
