"""The Agent SDK's in-process MCP servers (`create_sdk_mcp_server`) with the real `arnes` as the
SDK's CLI: the SDK names them in `--mcp-config` as `{"type": "sdk"}`, and arnes reaches their
tools through the control channel (`mcp_message`), as Claude Code does (mcp/sdk_relay.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from arnes.errors import ConfigError
from arnes.mcp.settings import parse_servers
from tests.conftest import ARNES

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk (the dev extra) drives arnes here")


def calculator(calls: list[dict[str, Any]]) -> Any:
    @sdk.tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}

    @sdk.tool("fail", "Always fails", {})
    async def fail(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "the abacus is broken"}], "is_error": True}

    return sdk.create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add, fail])


def run(tmp_path: Path, turns: list[dict[str, Any]], **more: Any) -> list[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    opts = sdk.ClaudeAgentOptions(
        cli_path=ARNES, cwd=str(ws), extra_args={"provider": "script", "script": str(script)}, **more
    )

    async def go() -> list[Any]:
        return [message async for message in sdk.query(prompt="What is 2 + 3?", options=opts)]

    return anyio.run(go)


def test_a_tool_of_the_sdks_own_server_runs_in_the_sdks_program(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    turns = [
        {"tool_calls": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
        {"tool_calls": [{"name": "mcp__calc__fail", "input": {}}]},
        {"text": "It is 5."},
    ]
    messages = run(
        tmp_path, turns, mcp_servers={"calc": calculator(calls)}, allowed_tools=["mcp__calc__add", "mcp__calc__fail"]
    )
    init, result = messages[0], messages[-1]
    [server] = init.data["mcp_servers"]
    assert server["name"] == "calc" and server["status"] == "connected"
    assert {"mcp__calc__add", "mcp__calc__fail"} <= set(init.data["tools"])
    assert calls == [{"a": 2, "b": 3}]  # the SDK's function ran, with the model's arguments
    results = [b for m in messages if type(m).__name__ == "UserMessage" for b in m.content]
    assert results[0].content in ("5", [{"type": "text", "text": "5"}]) and not results[0].is_error
    assert results[1].is_error and "the abacus is broken" in str(results[1].content)
    assert result.result == "It is 5." and not result.is_error


def test_an_sdk_server_with_no_sdk_behind_it_fails_with_the_reason(tmp_path: Path) -> None:
    """`--mcp-config` given by hand, no stream-json input: nothing can reach the server; it says why."""
    from tests.conftest import run_arnes

    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    config = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    argv = ["-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--mcp-config", config]
    r = run_arnes(*argv, "--output-format", "stream-json", "--verbose", "hi")
    assert r.code == 0, r.err
    init = json.loads(r.out.splitlines()[0])
    [server] = init["mcp_servers"]
    assert server["name"] == "calc" and server["status"] == "failed"
    assert "only through the Agent SDK that started arnes" in r.out + r.err


def test_a_settings_file_cannot_name_an_sdk_server(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.mcp\.json: mcpServers\.calc is an in-process SDK server"):
        parse_servers({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}, tmp_path / ".mcp.json")
    given = {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}
    assert parse_servers(given, "--mcp-config")["calc"].transport == "sdk"
