"""The official Python Agent SDK drives the real `arnes` through the rest of its control requests:
`get_mcp_status`, `toggle_mcp_server`, `reconnect_mcp_server` (a real stdio MCP server),
`rewind_files` (arnes's checkpoints) and `stop_task` (a background shell). What arnes cannot or
will not do comes back as the SDK's exception, with the reason, never as a wait.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import ARNES
from tests.fakes.llm_server import FakeLLMServer
from tests.test_e2e_mcp import stdio, workspace
from tests.test_e2e_mcp_approval import settings, toucher
from tests.test_e2e_sdk_driven import EDIT, RAISE, options

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk (the dev extra) drives arnes here")


async def refused(call: Any) -> str:
    """The error arnes answered a control request with (the SDK raises it)."""
    try:
        await call
    except Exception as exc:
        return str(exc)
    raise AssertionError("the request was answered, not refused")


def offered(server: FakeLLMServer) -> list[set[str]]:
    """The MCP tools each model request offered."""
    return [
        {t["function"]["name"] for t in body.get("tools", []) if t["function"]["name"].startswith("mcp__")}
        for path, body in server.requests
        if path.endswith("/chat/completions")
    ]


def test_the_sdk_sees_turns_off_and_restarts_a_server_and_never_starts_one_left_out(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio(), "evil": toucher("pwned")})
    local = settings(ws / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["evil"]})
    instance = {"tool_calls": [{"name": "mcp__fake__instance", "input": {}}]}
    turns = [{"text": "one"}, {"text": "two"}, instance, {"text": "three"}, instance, {"text": "four"}]
    seen: dict[str, Any] = {}
    runs: list[str] = []
    with FakeLLMServer(turns) as server:
        opts = sdk.ClaudeAgentOptions(
            cli_path=ARNES, cwd=str(ws), allowed_tools=["mcp__fake"],
            extra_args={"provider": "openai", "base-url": server.url + "/v1", "model": "fake-model", "trust": None},
        )  # fmt: skip

        async def turn(client: Any, prompt: str) -> None:
            await client.query(prompt)
            async for message in client.receive_response():
                for block in getattr(message, "content", None) or []:
                    if isinstance(block, sdk.ToolResultBlock):
                        content = block.content
                        runs.append(content if isinstance(content, str) else str(content[0]["text"]))

        async def run() -> None:
            async with sdk.ClaudeSDKClient(opts) as client:
                await turn(client, "one")
                seen["status"] = await client.get_mcp_status()
                await client.toggle_mcp_server("fake", False)
                seen["off"] = await client.get_mcp_status()
                await turn(client, "two")
                seen["reconnect_off"] = await refused(client.reconnect_mcp_server("fake"))
                await client.toggle_mcp_server("fake", True)
                await turn(client, "three")
                await client.reconnect_mcp_server("fake")
                await turn(client, "four")
                seen["evil_on"] = await refused(client.toggle_mcp_server("evil", True))
                seen["evil_again"] = await refused(client.reconnect_mcp_server("evil"))
                seen["nope"] = await refused(client.reconnect_mcp_server("nope"))

        anyio.run(run)
        requests = offered(server)
    by_name = {s["name"]: s for s in seen["status"]["mcpServers"]}
    fake, evil = by_name["fake"], by_name["evil"]
    assert fake["status"] == "connected" and fake["scope"] == "project"
    assert fake["config"]["type"] == "stdio" and "env" not in fake["config"]
    assert {"add", "instance"} <= {t["name"] for t in fake["tools"]}
    assert evil["status"] == "disabled" and f"disabledMcpjsonServers in {local}" in evil["error"]
    assert {s["name"]: s["status"] for s in seen["off"]["mcpServers"]}["fake"] == "disabled"
    assert "mcp__fake__add" in requests[0] and requests[1] == set()  # off: the next turn is not offered it
    assert "mcp__fake__instance" in requests[2]  # on again
    assert "turned off (mcp_toggle): enable it" in seen["reconnect_off"]
    first, second = runs
    assert len(first) == len(second) == 16 and first != second  # reconnect: a new process
    assert f"'evil' does not start here: disabledMcpjsonServers in {local}" in seen["evil_on"]
    assert "does not start here" in seen["evil_again"]
    assert "no MCP server 'nope' here (servers: fake, evil)" in seen["nope"]
    assert not (ws / "pwned").exists()


def test_the_sdk_cannot_start_a_server_of_an_untrusted_folder(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"evil": toucher("pwned")})
    said: list[str] = []

    async def run() -> None:
        async with sdk.ClaudeSDKClient(options(tmp_path, ws, [{"text": "hi"}])) as client:
            said.append(await refused(client.toggle_mcp_server("evil", True)))
            said.append(await refused(client.reconnect_mcp_server("evil")))
            await client.toggle_mcp_server("evil", False)  # turning off what does not run: nothing to do
            said.append(str(await client.get_mcp_status()))

    anyio.run(run)
    assert all("this folder is not trusted" in line for line in said[:2])
    assert "'disabled'" in said[2] and not (ws / "pwned").exists()


async def prompts(*messages: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    for message in messages:
        yield message


def test_rewind_files_puts_back_what_a_user_messages_turn_changed(shop: Path, tmp_path: Path) -> None:
    """`--replay-user-messages` gives each message its uuid, as the SDK's docs for rewind_files say;
    a message sent with its own uuid is known by it (and its result says so). A file changed
    outside arnes since is not overwritten; a turn that runs is not rewound under it."""
    second = {"tool_calls": [{"name": "Edit", "input": {**EDIT, "old_string": "DISCOUNT_RATE = 0.15",
                                                        "new_string": "DISCOUNT_RATE = 0.20"}}]}  # fmt: skip
    turns = [*RAISE, second, {"text": "20 % now"}]
    pricing = shop / "pricing.py"
    seen: dict[str, Any] = {}

    async def run() -> None:
        client: Any = None

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
            if "first" in seen:  # the second turn's Edit: a rewind while the turn waits on this answer
                seen["mid_turn"] = await refused(client.rewind_files(seen["first"]))
            return sdk.PermissionResultAllow()

        opts = options(tmp_path, shop, turns, can_use_tool=can_use_tool)
        opts.extra_args["replay-user-messages"] = None
        client = sdk.ClaudeSDKClient(opts)
        async with client:
            await client.query("Raise the discount to 15 %.")
            replays = [m async for m in client.receive_response() if isinstance(m, sdk.UserMessage) and m.uuid]
            seen["first"] = replays[0].uuid
            assert replays[0].content == "Raise the discount to 15 %."
            mine = {"type": "user", "message": {"role": "user", "content": "Now 20 %."}, "parent_tool_use_id": None,
                    "uuid": "5f1d7c2e-0000-4000-8000-000000000002"}  # fmt: skip
            await client.query(prompts(mine))
            [seen["result"]] = [m async for m in client.receive_response() if isinstance(m, sdk.ResultMessage)]
            seen["unknown"] = await refused(client.rewind_files("no-such-message"))
            text = pricing.read_text()
            pricing.write_text(text + "# my own line\n")  # the user's editor, between two turns
            seen["conflict"] = await refused(client.rewind_files(seen["first"]))
            seen["kept"] = pricing.read_text()
            pricing.write_text(text)
            await client.rewind_files(seen["first"])

    anyio.run(run)
    assert "a turn is running" in seen["mid_turn"]
    assert seen["result"].user_message_uuid == "5f1d7c2e-0000-4000-8000-000000000002"
    assert "no file checkpoint for user message no-such-message" in seen["unknown"]
    assert "changed outside arnes since that message: pricing.py" in seen["conflict"]
    assert seen["kept"].endswith("# my own line\n")
    assert "DISCOUNT_RATE = 0.10" in pricing.read_text()  # before the first message: both turns undone


def test_rewind_files_dry_run_says_what_would_change(shop: Path, tmp_path: Path) -> None:
    """The TypeScript SDK's `dryRun` (the Python SDK sends none): Claude Code's answer, nothing written."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": RAISE}))
    proc = subprocess.Popen(
        [ARNES, "--provider", "script", "--script", str(script), "-w", str(shop), "--permission-mode", "acceptEdits",
         "--output-format", "stream-json", "--input-format", "stream-json", "--verbose"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    user = {"type": "user", "message": {"role": "user", "content": "Raise it."}, "uuid": "u-1"}
    proc.stdin.write(json.dumps(user) + "\n")
    proc.stdin.flush()
    while json.loads(proc.stdout.readline())["type"] != "result":  # the turn's end
        pass
    request = {"subtype": "rewind_files", "user_message_id": "u-1", "dry_run": True}
    proc.stdin.write(json.dumps({"type": "control_request", "request_id": "r1", "request": request}) + "\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    proc.stdin.close()
    proc.wait(timeout=60)
    assert answer["response"] == {
        "subtype": "success",
        "request_id": "r1",
        "response": {"canRewind": True, "filesChanged": ["pricing.py"], "insertions": 1, "deletions": 1},
    }
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()


def test_stop_task_stops_a_background_shell(shop: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "sleep 600", "run_in_background": True}}]},
             {"text": "started"}]  # fmt: skip
    said: list[str] = []

    async def run() -> None:
        async with sdk.ClaudeSDKClient(options(tmp_path, shop, turns, permission_mode="bypassPermissions")) as client:
            await client.query("Start it.")
            results = [
                block.content
                for message in [m async for m in client.receive_response()]
                for block in getattr(message, "content", None) or []
                if isinstance(block, sdk.ToolResultBlock)
            ]
            said.append(str(results))
            await client.stop_task("bash_1")
            said.append(await refused(client.stop_task("bash_1")))
            said.append(await refused(client.stop_task("bash_9")))

    anyio.run(run)
    assert "Started in the background as bash_1" in said[0]
    assert "the background shell bash_1 had already finished" in said[1]
    assert "no task 'bash_9'" in said[2] and "this session's: bash_1" in said[2]


def test_replay_user_messages_goes_with_both_stream_json_formats(tmp_path: Path) -> None:
    from tests.conftest import run_arnes

    run = run_arnes("-p", "--provider", "script", "-w", str(tmp_path), "--replay-user-messages", "task")
    assert run.code == 2 and "Traceback" not in run.err
    assert "--replay-user-messages goes with --input-format stream-json and --output-format stream-json" in run.err
