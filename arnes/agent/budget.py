"""Limits that stop a run (exit 3): turns, tokens over the run, and cost from a price table.

One Budget is shared by an agent and its sub-agents, so delegated work counts against the run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from arnes.errors import LimitReached
from arnes.llm.pricing import Price
from arnes.messages import Usage


@dataclass
class Tally:
    """One model's tokens and cost in the run (the headless result's `modelUsage`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0


@dataclass
class Budget:
    max_tokens: int | None = None
    max_cost: float | None = None
    prices: dict[str, Price] = field(default_factory=dict)  # by model name, for every role in use
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    by_model: dict[str, Tally] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def charge(self, model: str, usage: Usage) -> None:
        """Add one response's usage; raise LimitReached once a limit is passed."""
        with self._lock:
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            tally = self.by_model.setdefault(model, Tally())
            tally.input_tokens += usage.input_tokens
            tally.output_tokens += usage.output_tokens
            price = self.prices.get(model)
            if price is not None:
                spent = price.cost(usage.input_tokens, usage.output_tokens)
                self.cost += spent
                tally.cost += spent
            used = self.input_tokens + self.output_tokens
        if self.max_tokens is not None and used >= self.max_tokens:
            raise LimitReached("tokens", f"stopped: {used} tokens used, over --max-tokens {self.max_tokens}")
        if self.max_cost is not None and self.cost >= self.max_cost:
            raise LimitReached("cost", f"stopped: ${self.cost:.4f} spent, over --max-cost {self.max_cost}")
