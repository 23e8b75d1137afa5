"""Retry with exponential backoff around any provider, reporting each wait."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arnes.errors import ProviderError
from arnes.llm.base import TextSink
from arnes.llm.wrapper import ProviderWrapper
from arnes.messages import Message, ModelResponse, ToolSpec

RetryNotice = Callable[[int, float, str], None]


@dataclass
class RetryingProvider(ProviderWrapper):
    """Wraps a provider: retryable failures wait and try again, the last one is raised."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    on_retry: RetryNotice | None = None
    sleep: Callable[[float], None] = field(default=time.sleep)

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        for attempt in range(1, self.attempts + 1):
            try:
                return self.inner.complete(system, messages, tools, on_text)
            except ProviderError as exc:
                if not exc.retryable or attempt == self.attempts:
                    if exc.retryable:
                        gave_up = f"{exc} (gave up after {attempt} attempts)"
                        raise ProviderError(gave_up, unreachable=exc.unreachable, exhausted=True) from exc
                    raise
                delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
                if exc.retry_after is not None:
                    delay = min(self.max_delay, exc.retry_after)
                if self.on_retry:
                    self.on_retry(attempt, delay, str(exc))
                self.sleep(delay)
        raise AssertionError("unreachable")
