"""The official Python Agent SDK drives the real `arnes` as its CLI (DESIGN §16): `query()` runs a
task end to end, its `can_use_tool` callback answers arnes's asks, and its `interrupt` stops a turn.

The SDK starts `cli_path` with Claude Code's flags (`--output-format stream-json --verbose
--input-format stream-json --system-prompt ""` ...) and speaks its control protocol on stdin;
`extra_args` picks arnes's scripted model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import ARNES

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk (the dev extra) drives arnes here")

EDIT = {"file_path": "pricing.py", "old_string": "DISCOUNT_RATE = 0.10", "new_string": "DISCOUNT_RATE = 0.15"}
RAISE = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
    {"tool_calls": [{"name": "Edit", "input": EDIT}]},
    {"text": "The discount is 15 % now."},
]


def options(tmp_path: Path, ws: Path, turns: list[dict[str, Any]], **more: Any) -> Any:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    return sdk.ClaudeAgentOptions(
        cli_path=ARNES, cwd=str(ws), extra_args={"provider": "script", "script": str(script)}, **more
    )


def collect(prompt: str, opts: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [message async for message in sdk.query(prompt=prompt, options=opts)]

    return anyio.run(run)


def test_query_runs_a_task_end_to_end_with_arnes_as_the_cli(shop: Path, tmp_path: Path) -> None:
    messages = collect("Raise the discount to 15 %.", options(tmp_path, shop, RAISE, permission_mode="acceptEdits"))
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["SystemMessage", *["AssistantMessage", "UserMessage"] * 2, "AssistantMessage", "ResultMessage"]
    init, result = messages[0], messages[-1]
    assert init.subtype == "init" and init.data["permissionMode"] == "acceptEdits" and "Edit" in init.data["tools"]
    assert messages[3].content[0].name == "Edit" and messages[4].content[0].is_error is False
    assert (
        result.subtype == "success"
        and result.result == "The discount is 15 % now."
        and result.num_turns == 3
        and not result.is_error
    )
    assert result.session_id == init.data["session_id"] and result.model_usage["script"]["inputTokens"] > 0
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()


def test_can_use_tool_answers_what_arnes_would_ask(shop: Path, tmp_path: Path) -> None:
    """Default mode: the Read runs unasked, the Edit asks; the callback says no, with a reason."""
    asked: list[tuple[str, str | None, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, context.tool_use_id, tool_input))
        return sdk.PermissionResultDeny(message="leave pricing.py alone")

    messages = collect("Raise the discount.", options(tmp_path, shop, RAISE, can_use_tool=can_use_tool))
    edit = messages[3].content[0]
    assert asked == [("Edit", edit.id, edit.input)]
    refused = messages[4].content[0]
    assert refused.is_error and "leave pricing.py alone" in refused.content
    result = messages[-1]
    assert (
        result.permission_denials[0]["tool_name"] == "Edit" and result.permission_denials[0]["tool_use_id"] == edit.id
    )
    assert result.permission_denials[0]["tool_input"] == edit.input
    assert "DISCOUNT_RATE = 0.10" in (shop / "pricing.py").read_text()


def test_an_interrupt_stops_the_turn_and_the_session_goes_on(shop: Path, tmp_path: Path) -> None:
    """The interrupt comes while arnes waits on the callback (so it lands mid-turn, every time)."""
    turns = [RAISE[1], {"text": "second answer"}]
    results: list[Any] = []

    async def run() -> None:
        client: Any = None

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
            await client.interrupt()
            return sdk.PermissionResultDeny(message="stopped")

        client = sdk.ClaudeSDKClient(options(tmp_path, shop, turns, can_use_tool=can_use_tool))
        async with client:
            for prompt in ("Raise the discount.", "Go on."):
                await client.query(prompt)
                results.extend([m async for m in client.receive_response() if isinstance(m, sdk.ResultMessage)])

    anyio.run(run)
    first, second = results
    assert first.subtype == "error_during_execution" and first.is_error and first.stop_reason == "interrupted"
    assert second.subtype == "success" and second.result == "second answer"
    assert "DISCOUNT_RATE = 0.10" in (shop / "pricing.py").read_text()


def test_the_clients_mode_model_and_context_requests_are_answered(shop: Path, tmp_path: Path) -> None:
    """`set_permission_mode` to acceptEdits lets the Edit run unasked; bypass is refused (it is
    chosen at start); `set_model` sends the next request to the other model; `get_context_usage`
    says what the next request holds."""
    from tests.fakes.llm_server import FakeLLMServer

    asked: list[str] = []
    refused: list[str] = []
    usage: list[Any] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return sdk.PermissionResultDeny(message="no")

    with FakeLLMServer([*RAISE, {"text": "second answer"}]) as server:
        opts = sdk.ClaudeAgentOptions(
            cli_path=ARNES,
            cwd=str(shop),
            can_use_tool=can_use_tool,
            extra_args={"provider": "openai", "base-url": server.url + "/v1", "model": "fake-model"},
        )

        async def run() -> None:
            async with sdk.ClaudeSDKClient(opts) as client:
                await client.set_permission_mode("acceptEdits")
                try:
                    await client.set_permission_mode("bypassPermissions")
                except Exception as exc:  # the SDK raises the control error it was sent
                    refused.append(str(exc))
                await client.query("Raise the discount to 15 %.")
                [m async for m in client.receive_response()]
                usage.append(await client.get_context_usage())
                await client.set_model("fake-model-large")
                await client.query("Go on.")
                [m async for m in client.receive_response()]

        anyio.run(run)
        models = [body.get("model") for path, body in server.requests if path.endswith("/chat/completions")]
    assert asked == []  # acceptEdits: the Edit inside the workspace ran unasked
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()
    assert refused and "bypass mode is chosen when arnes starts" in refused[0]
    assert models == ["fake-model"] * 3 + ["fake-model-large"]
    [context] = usage
    assert context["model"] == "fake-model" and 0 < context["totalTokens"] < context["maxTokens"]
    assert sum(c["tokens"] for c in context["categories"][:2]) == context["totalTokens"]


def test_the_sdks_hook_callbacks_are_called_as_claude_code_calls_them(shop: Path, tmp_path: Path) -> None:
    """`hooks` in ClaudeAgentOptions: arnes sends a `hook_callback` control request per matching
    callback and reads its answer as a command hook's JSON: a PreToolUse deny refuses the Edit
    (acceptEdits would have allowed it), a PostToolUse callback sees the Read's result, and a
    callback that raises is a failure that does not block."""
    seen: list[tuple[str, str, str | None]] = []

    async def guard(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((data["hook_event_name"], data["tool_name"], tool_use_id))
        reason = "pricing.py is frozen (SDK hook)"
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}  # fmt: skip

    async def after(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((data["hook_event_name"], data["tool_name"], tool_use_id))
        return {}

    async def broken(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raise RuntimeError("the callback broke")

    hooks = {
        "PreToolUse": [sdk.HookMatcher(matcher="Edit", hooks=[guard]), sdk.HookMatcher(matcher="Read", hooks=[broken])],
        "PostToolUse": [sdk.HookMatcher(matcher="Read", hooks=[after])],
    }
    messages = collect(
        "Raise the discount.", options(tmp_path, shop, RAISE, permission_mode="acceptEdits", hooks=hooks)
    )
    said = [m for m in messages if type(m).__name__ in ("AssistantMessage", "UserMessage")]
    read, edit = said[0].content[0], said[2].content[0]
    assert said[1].content[0].is_error is False  # the broken PreToolUse callback did not block the Read
    warnings = [m.data for m in messages[1:] if type(m).__name__ == "SystemMessage"]
    assert any("SDK callback hook_1` failed: it raised: the callback broke" in json.dumps(w) for w in warnings)
    assert seen == [("PostToolUse", "Read", read.id), ("PreToolUse", "Edit", edit.id)]
    refused = said[3].content[0]
    assert refused.is_error and "pricing.py is frozen (SDK hook)" in refused.content
    assert "DISCOUNT_RATE = 0.10" in (shop / "pricing.py").read_text()


def test_agents_defined_in_the_sdks_options_are_the_sessions_to_delegate_to(shop: Path, tmp_path: Path) -> None:
    """`agents={...}` (sent in the initialize request) are listed in init and named by Task, with
    their prompt and tool list; a bad one is named in a warning and the rest still load."""
    reviewer = sdk.AgentDefinition(description="Reviews code", prompt="REVIEWER-PROMPT: list problems.",
                                   tools=["Read", "Grep"])  # fmt: skip
    task = {"name": "Task", "input": {"prompt": "review pricing.py", "subagent_type": "code-reviewer"}}
    write = {"name": "Write", "input": {"file_path": "p.txt", "content": "x"}}
    turns = [{"tool_calls": [task]}, {"tool_calls": [write]}, {"text": "no problems"}, {"text": "reviewed"}]
    trace = tmp_path / "t.jsonl"
    opts = options(tmp_path, shop, turns, permission_mode="bypassPermissions", include_partial_messages=True,
                   agents={"code-reviewer": reviewer, "bad name!": reviewer})  # fmt: skip
    opts.extra_args["trace"] = str(trace)
    messages = collect("Review the code.", opts)
    result = messages[-1]
    assert result.subtype == "success" and result.result == "reviewed", result
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    [delegated] = [e for e in events if e["event"] == "tool_result" and e["name"] == "Delegate"]  # arnes's name
    assert not delegated["is_error"] and "no problems" in delegated["output"]
    firsts = [e for e in events if e["event"] == "message" and e["role"] == "user"]
    assert any("REVIEWER-PROMPT: list problems." in json.dumps(e["content"]) for e in firsts)
    assert not (shop / "p.txt").exists()  # its tools are Read and Grep
    said = json.dumps([m.data for m in messages if type(m).__name__ == "SystemMessage"])
    assert "agent 'bad name!' left out" in said
    # include_partial_messages: the text streams, the sub-agent's under its Task call
    deltas = [(m.parent_tool_use_id, m.event["delta"]["text"]) for m in messages
              if isinstance(m, sdk.StreamEvent) and m.event["type"] == "content_block_delta"]  # fmt: skip
    assert deltas == [(delegated["id"], "no problems"), (None, "reviewed")]


def test_resume_session_at_branches_from_an_assistant_message_the_sdk_saw(shop: Path, tmp_path: Path) -> None:
    """The SDK's `resume_session_at` (with `fork_session`): the model is sent the conversation up to
    that message and not what came after; the `uuid` the SDK read is the one arnes cuts at."""
    from tests.fakes.llm_server import FakeLLMServer

    def opts(server: Any, **more: Any) -> Any:
        return sdk.ClaudeAgentOptions(
            cli_path=ARNES, cwd=str(shop), env={"OPENAI_API_KEY": "test"},
            extra_args={"provider": "openai", "base-url": server.url + "/v1", "model": "m"}, **more,
        )  # fmt: skip

    with FakeLLMServer([{"text": "ONE-REPLY"}, {"text": "TWO-REPLY"}, {"text": "THREE-REPLY"}]) as server:
        first = collect("remember KIWI", opts(server))
        sid = first[-1].session_id
        kept = next(m for m in first if type(m).__name__ == "AssistantMessage")
        collect("now PEAR", opts(server, resume=sid))
        branch = collect("what now?", opts(server, resume=sid, resume_session_at=kept.uuid, fork_session=True))
        sent = json.dumps(server.requests[2][1]["messages"])
    assert branch[-1].result == "THREE-REPLY" and branch[-1].session_id != sid
    assert "remember KIWI" in sent and "ONE-REPLY" in sent and "what now?" in sent
    assert "now PEAR" not in sent and "TWO-REPLY" not in sent


def test_can_use_tool_always_allow_holds_for_the_session_and_suggests_arnes_rule(tmp_path: Path) -> None:
    """`PermissionResultAllow(updated_permissions=[addRules ...])` is "always": the same command is
    not asked again; the callback's suggestions carry the rule arnes would add."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text('{"name": "x", "scripts": {"test": "echo tests-ok"}}')
    test = {"tool_calls": [{"name": "Bash", "input": {"command": "npm test"}}]}
    asked: list[Any] = []

    from claude_agent_sdk.types import PermissionRuleValue, PermissionUpdate

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(context.suggestions)
        rule = PermissionRuleValue(tool_name="Bash", rule_content="npm test")
        update = PermissionUpdate(type="addRules", rules=[rule], behavior="allow", destination="session")
        return sdk.PermissionResultAllow(updated_permissions=[update])

    messages = collect(
        "test it", options(tmp_path, ws, [test, test, test, {"text": "done"}], can_use_tool=can_use_tool)
    )
    assert messages[-1].subtype == "success" and not messages[-1].permission_denials
    assert len(asked) == 1  # Claude Code's "always allow": once
    [suggested] = asked[0]
    assert suggested.type == "addRules" and suggested.rules[0].tool_name == "Bash"
    assert suggested.rules[0].rule_content == "npm test:*"
