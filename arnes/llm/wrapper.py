"""What every provider wrapper shares: it answers to the wrapped provider's name and model."""

from __future__ import annotations

from dataclasses import dataclass

from arnes.llm.base import Provider


@dataclass
class ProviderWrapper:
    inner: Provider

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model
