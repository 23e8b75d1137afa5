"""Hook callbacks of Claude Code's Agent SDKs (`hooks` in `ClaudeAgentOptions`), called as Claude
Code calls them: a `hook_callback` control request per callback, whose answer is read as a
command hook's JSON output is (extensions/hooks.py `apply_output`).

The SDK names its callbacks in `initialize` (`{"PreToolUse": [{"matcher": "Bash",
"hookCallbackIds": ["hook_0"], "timeout": 30, "onFailure": "block"}]}`). The session's own hooks
(settings) run first, then the SDK's, each seeing the input a hook before it rewrote. What a
callback decides goes where a command hook's decision goes: to the permission gate, which judges
a rewritten input again, and whose deny rules no hook's allow overrides. A callback that fails
(an error, no answer in its time, stdin closed) is a non-blocking error unless its matcher says
`onFailure: "block"` (or the settings' `hooks_fail` is "closed").
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from arnes.extensions.hooks import TRACE_CAP, HookOutcome, HookRun, HookRunner, apply_output, ms_since, record_failure
from arnes.extensions.hooks_config import EVENTS, FailMode, matches
from arnes.headless.channel import Channel, ChannelClosed, as_object

DEFAULT_TIMEOUT = 60.0  # seconds a callback may take when its matcher gives none (Claude Code's)


@dataclass(frozen=True)
class Callback:
    event: str
    matcher: str
    callback_id: str
    timeout: float
    closed: bool  # onFailure "block": a failure blocks the call


@dataclass
class SdkHooks:
    """A `HookRunner`: the session's own hooks (`inner`), then the SDK's callbacks."""

    channel: Channel
    inner: HookRunner | None = None
    fail: FailMode = "open"
    callbacks: tuple[Callback, ...] = field(default=())

    def around(self, inner: HookRunner | None, fail: FailMode) -> SdkHooks:
        """Wrap the session's own hooks (runner.build_session's `extra_hooks`)."""
        self.inner, self.fail = inner, fail
        return self

    def register(self, hooks: Any) -> list[str]:
        """The callbacks of an `initialize` request's `hooks`; one note per part that is not called."""
        notes: list[str] = []
        found: list[Callback] = []
        for event, matchers in as_object(hooks).items():
            if event not in EVENTS:
                notes.append(f"the SDK's {event} hook callbacks are not called (arnes has no {event} event)")
                continue
            for entry in matchers if isinstance(matchers, list) else []:
                entry = as_object(entry)
                matcher = entry.get("matcher")
                timeout = entry.get("timeout")
                seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT
                closed = entry.get("onFailure", "continue") != "continue"  # Claude Code reads anything else as block
                for callback_id in entry.get("hookCallbackIds") or []:
                    if isinstance(callback_id, str):
                        found.append(
                            Callback(event, matcher if isinstance(matcher, str) else "", callback_id, seconds, closed)
                        )
        self.callbacks = (*self.callbacks, *found)
        return notes

    def has(self, event: str, match: str | None = None) -> bool:
        inner = self.inner is not None and self.inner.has(event, match)
        return inner or any(c.event == event and matches(c.matcher, match) for c in self.callbacks)

    def run(self, event: str, payload: dict[str, Any], match: str | None = None) -> HookOutcome:
        outcome = self.inner.run(event, payload, match) if self.inner is not None else HookOutcome()
        for callback in self.callbacks:
            if callback.event != event or not matches(callback.matcher, match) or outcome.blocked:
                continue
            if outcome.updated_input is not None:  # a later hook sees the input the call would run with
                payload = {**payload, "tool_input": outcome.updated_input}
            self._one(callback, {**payload, "hook_event_name": event}, outcome)
        return outcome

    def _one(self, callback: Callback, payload: dict[str, Any], outcome: HookOutcome) -> None:
        label = f"SDK callback {callback.callback_id}"
        fail: FailMode = "closed" if callback.closed else self.fail
        started = time.perf_counter()
        request = {
            "subtype": "hook_callback",
            "callback_id": callback.callback_id,
            "input": payload,
            "tool_use_id": payload.get("tool_use_id"),
        }
        try:
            reply = self.channel.request(request, timeout=callback.timeout)
        except ChannelClosed:
            record_failure(outcome, callback.event, label, fail, "the SDK closed stdin", None, "", started)
            return
        except TimeoutError as exc:
            record_failure(outcome, callback.event, label, fail, str(exc), None, "", started)
            return
        if reply.get("subtype") == "error":
            why = f"it raised: {reply.get('error')}"
            record_failure(outcome, callback.event, label, fail, why, None, "", started)
            return
        shown = json.dumps(as_object(reply.get("response")), ensure_ascii=False)
        try:
            decision = apply_output(callback.event, shown, outcome)
        except ValueError as exc:
            record_failure(outcome, callback.event, label, fail, str(exc), None, shown, started)
            return
        outcome.runs.append(HookRun(callback.event, label, 0, decision, ms_since(started), shown[:TRACE_CAP]))
