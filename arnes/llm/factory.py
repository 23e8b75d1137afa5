"""Build the provider a run asks for: the one module that knows every adapter, so the protocol
(base.py) knows none. Each adapter is imported inside the branch that needs it, so the SDKs load
only when a provider is built, never at start-up (`arnes --help`)."""

from __future__ import annotations

from arnes.errors import ConfigError
from arnes.llm.base import PROFILES, Provider, ProviderSettings


def make_provider(settings: ProviderSettings) -> Provider:
    """Build a provider; the heavy SDK import happens here, not at start-up."""
    profile = PROFILES.get(settings.provider)
    if profile is None:
        raise ConfigError(f"unknown provider {settings.provider!r}; use one of {sorted(PROFILES)}")
    if profile.wire == "script":
        from arnes.llm.script import ScriptProvider

        if not settings.script:
            raise ConfigError("--provider script needs --script FILE")
        return ScriptProvider.from_file(settings.script)
    if profile.wire == "anthropic":
        from arnes.llm.anthropic import AnthropicProvider

        return AnthropicProvider(settings)
    if profile.wire == "ollama":
        from arnes.llm.ollama import OllamaProvider

        return OllamaProvider(settings)
    from arnes.llm.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(settings)
