"""Model providers behind one protocol; SDKs are imported only when a provider is built."""

from arnes.llm.base import Provider, ProviderSettings, TextSink, make_provider

__all__ = ["Provider", "ProviderSettings", "TextSink", "make_provider"]
