"""Claude Code's `--fallback-model`: when the model stays overloaded after every retry, the run goes
on with another model instead of ending.

What counts is a failure the retries gave up on (rate limits, overload, 5xx, time-outs:
`ProviderError.exhausted`), never a refusal of the request itself (a bad key, a request too long)
nor a server that answers nothing at all (the fallback is asked on the same server: it would not
answer either). The switch is made once and holds for the rest of the session, as Claude Code's
does; it is said (`on_switch`), so the terminal, the trace and stream-json show which model
answered from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arnes.errors import ProviderError
from arnes.llm.base import Provider, TextSink
from arnes.llm.wrapper import ProviderWrapper
from arnes.messages import Message, ModelResponse, ToolSpec

Switched = Callable[[str, str, str], None]  # (the model that failed, the fallback, why)


@dataclass
class FallbackProvider(ProviderWrapper):
    """The main provider until it gives up overloaded, then the fallback (made only then; `inner`
    is the fallback from then on, so `name` and `model` say who answers)."""

    fallback: str = ""
    make: Callable[[str], Provider] | None = None  # the session's provider for a model name (retries included)
    on_switch: Switched | None = None
    _switched: bool = False

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        try:
            return self.inner.complete(system, messages, tools, on_text)
        except ProviderError as exc:
            if self._switched or not exc.exhausted or exc.unreachable or self.make is None:
                raise
            failed = self.inner.model
            self.inner, self._switched = self.make(self.fallback), True
            if self.on_switch is not None:
                self.on_switch(failed, self.fallback, str(exc))
            return self.inner.complete(system, messages, tools, on_text)
