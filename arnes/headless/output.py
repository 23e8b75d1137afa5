"""The JSON formats of a run: `stream-json` lines as it goes and its result message, or with
`json` that result alone, at the end, as Claude Code's object with arnes's keys beside. The result
is printed when the run's `RunClosed` event arrives (arnes/closing.py emits it), as the terminal
renderer prints the text format's closing.

Warnings reach these readers too: each one as a `system`/`warning` line (stream-json) and all of
them in the result's `warnings`; they are also said on stderr, where the text format says them.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field

from arnes.agent.events import Event, ModelRequest, ModelResponseEvent, Nested, Notice, RunClosed
from arnes.config import EffectiveConfig
from arnes.headless.facts import commands, init_keys
from arnes.llm.models import defaults_for
from arnes.safe import visible
from arnes.session import Session
from arnes.ui import sdk_messages as sdk
from arnes.ui.stdout import Stdout
from arnes.ui.stream_json import StreamJson


@dataclass
class Headless:
    """The subscriber of the JSON formats: times the model calls, gathers the warnings, (stream-json)
    prints the conversation as it grows, and prints the result when the run or turn closes."""

    format: str  # json | stream-json
    session: Session
    cfg: EffectiveConfig
    out: Stdout
    stream: StreamJson | None = None
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    api_seconds: float = 0.0
    _asked: dict[str | None, float] = field(default_factory=dict)

    @classmethod
    def made(cls, format: str, session: Session, cfg: EffectiveConfig, out: Stdout) -> Headless:
        """Ready to subscribe to the session (the caller does, before the run's first event)."""
        output = cls(format, session, cfg, out)
        if format == "stream-json":
            hub = session.mcp
            servers = (lambda: {name: st.state for name, st in hub.servers.items()}) if hub is not None else None
            output.stream = StreamJson(
                out,
                session.id,
                session.offered_names,
                lambda: init_keys(session, commands(session)),
                servers,
                partial=cfg.partial_messages,
            )
        for warning in cfg.said:  # already on stderr; JSON readers get them as well
            output._warn(warning, None)
        return output

    def new_turn(self) -> None:
        """Durations are the turn's own (stream-json input runs one turn per user message)."""
        self.started, self.api_seconds = time.monotonic(), 0.0

    def __call__(self, event: Event) -> None:
        if self.stream is not None:
            self.stream(event)
        parent = None
        if isinstance(event, Nested):
            parent, event = event.parent, event.inner
        if isinstance(event, ModelRequest):
            self._asked[parent] = time.monotonic()
        elif isinstance(event, ModelResponseEvent) and parent in self._asked:
            self.api_seconds += time.monotonic() - self._asked.pop(parent)
        elif isinstance(event, Notice) and event.level == "warning":
            warning = event.message.removeprefix("warning: ")
            print(f"arnes: warning: {visible(warning)}", file=sys.stderr)
            self._warn(warning, parent)
        elif isinstance(event, RunClosed) and parent is None:
            self._result(event)

    def _warn(self, warning: str, parent: str | None) -> None:
        self.warnings.append(warning)
        if self.stream is not None:
            self.stream.warning(warning, parent)

    def _result(self, closed: RunClosed) -> None:
        """The result of the run or turn: Claude Code's keys first, then arnes's (`closed.payload()`)."""
        message = sdk.result(
            stop_reason=closed.stop_reason,
            text=closed.result,
            session_id=closed.session,
            num_turns=closed.turns,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            duration_api_ms=int(self.api_seconds * 1000),
            input_tokens=closed.input_tokens,
            output_tokens=closed.output_tokens,
            cost=closed.cost,
            spent=self._spent(),
            denials=closed.denials,
            limit=closed.limit,
            error=closed.error,
            verified=closed.verified,
            structured_output=closed.structured_output,
        )
        extra = {key: value for key, value in closed.payload().items() if key not in message}
        if self.stream is not None:
            self.stream.flush()
            self.out.line({**message, **extra, "warnings": list(self.warnings)})
        else:
            self.out.write(json.dumps({**message, **extra, "warnings": list(self.warnings)}, indent=2) + "\n")

    def _spent(self) -> dict[str, sdk.ModelSpend]:
        by_model = self.session.budget.by_model
        return {
            model: sdk.ModelSpend(
                tally.input_tokens,
                tally.output_tokens,
                tally.cost,
                self.session.context_window,
                self.cfg.max_output_tokens or defaults_for(model).max_output_tokens,
            )
            for model, tally in by_model.items()
        }
