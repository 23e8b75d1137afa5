"""Prices per million tokens, so `--max-cost` can stop a run. Settings can add or override models."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


# Published list prices; local models cost nothing per token.
PRICES: dict[str, Price] = {
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "gpt-4o": Price(2.5, 10.0),
    "gpt-4o-mini": Price(0.15, 0.6),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.4, 1.6),
}
FREE_PROVIDERS = ("ollama", "script")


def price_for(provider: str, model: str, overrides: dict[str, Price] | None = None) -> Price | None:
    """The price of a model, or None when nobody knows it (then --max-cost cannot be enforced)."""
    if overrides and model in overrides:
        return overrides[model]
    if provider in FREE_PROVIDERS:
        return Price(0.0, 0.0)
    return PRICES.get(model)
