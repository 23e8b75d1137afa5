"""The Agent SDK's hook callbacks (headless/sdk_hooks.py), without a session: what `initialize`
registers, and what a callback that never answers or an SDK that is gone does to a call.
The SDK itself calling them end to end is in tests/test_e2e_sdk_driven.py."""

from __future__ import annotations

import io
import json
import os
from typing import Any

from arnes.extensions.hooks import HookOutcome
from arnes.headless.channel import Channel
from arnes.headless.sdk_hooks import DEFAULT_TIMEOUT, Callback, SdkHooks
from arnes.ui.stdout import Stdout


def hooks_on(stdin: io.TextIOBase | Any) -> tuple[SdkHooks, io.StringIO]:
    out = io.StringIO()
    channel = Channel(stdin, Stdout(out))
    channel.start(lambda request: {})
    return SdkHooks(channel), out


def test_initialize_registers_each_callback_with_its_matcher_timeout_and_failure_mode() -> None:
    hooks, _ = hooks_on(io.StringIO(""))
    notes = hooks.register(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5, "onFailure": "block"},
                {"matcher": None, "hookCallbackIds": ["hook_2"]},
            ],
            "PostToolUseFailure": [{"matcher": None, "hookCallbackIds": ["hook_3"]}],
            "Stop": "not a list",
        }
    )
    assert hooks.callbacks == (
        Callback("PreToolUse", "Bash", "hook_0", 5.0, True),
        Callback("PreToolUse", "Bash", "hook_1", 5.0, True),
        Callback("PreToolUse", "", "hook_2", DEFAULT_TIMEOUT, False),
    )
    assert notes == [
        "the SDK's PostToolUseFailure hook callbacks are not called (arnes has no PostToolUseFailure event)"
    ]
    assert hooks.has("PreToolUse", "Read") and not hooks.has("PostToolUse", "Read")
    assert hooks.register(None) == [] and len(hooks.callbacks) == 3


def test_a_callback_that_does_not_answer_in_its_time_fails_open_or_closed() -> None:
    read, write = os.pipe()  # stdin that stays open and never says anything
    stdin = os.fdopen(read, "r")
    try:
        hooks, out = hooks_on(stdin)
        hooks.register({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 0.05}]})
        payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}
        outcome = hooks.run("PreToolUse", payload, "Bash")
        [failure] = outcome.failures
        assert not outcome.blocked and "`SDK callback hook_0` failed: no answer in 0.05 s; the call goes on" in failure
        sent = json.loads(out.getvalue().splitlines()[0])["request"]
        assert sent["subtype"] == "hook_callback" and sent["callback_id"] == "hook_0"
        assert sent["input"] == {**payload, "hook_event_name": "PreToolUse"} and sent["tool_use_id"] == "t1"
        hooks.callbacks = (Callback("PreToolUse", "Bash", "hook_0", 0.05, True),)
        assert hooks.run("PreToolUse", payload, "Bash").blocked
    finally:
        os.close(write)  # the reader sees the end of input and stops; only then is its file closed


def test_an_sdk_that_is_gone_is_a_failure_and_the_settings_hooks_still_decide() -> None:
    class Inner:
        def has(self, event: str, match: str | None = None) -> bool:
            return True

        def run(self, event: str, payload: dict[str, Any], match: str | None = None) -> HookOutcome:
            outcome = HookOutcome()
            outcome.decide("ask", "the settings' hook asks")
            return outcome

    hooks, _ = hooks_on(io.StringIO(""))  # stdin at its end: the SDK is gone
    hooks.around(Inner(), "open")
    hooks.register({"PreToolUse": [{"matcher": "", "hookCallbackIds": ["hook_0"]}]})
    outcome = hooks.run("PreToolUse", {"tool_name": "Read", "tool_input": {}}, "Read")
    assert outcome.permission == "ask" and "the SDK closed stdin" in outcome.failures[0]


def test_the_sdks_always_rules_are_read_in_claude_codes_spelling() -> None:
    """updatedPermissions carries Claude Code's rules: `/src/**` is the project's src, `Task` is Delegate."""
    from arnes.headless.approver import allowed_rules

    update = {"type": "addRules", "behavior": "allow", "destination": "session",
              "rules": [{"toolName": "Edit", "ruleContent": "/src/**"}, {"toolName": "Task"}]}  # fmt: skip
    assert allowed_rules([update]) == ["Edit(src/**)", "Delegate"]
