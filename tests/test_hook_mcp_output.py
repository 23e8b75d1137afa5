"""A PostToolUse hook's `updatedMCPToolOutput` (Claude Code): what an MCP tool returned is replaced
by the hook's value before the model reads it (a redaction hook), for MCP tools only."""

from __future__ import annotations

import json
from pathlib import Path

from arnes.extensions.hooks import mcp_output_text
from tests.test_e2e_hooks import hook
from tests.test_e2e_mcp import results, run_calls, stdio, workspace

REDACT = json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "REDACTED"}})


def test_the_replacement_is_read_as_text() -> None:
    assert mcp_output_text("plain") == "plain"
    blocks = [{"type": "text", "text": "one"}, {"type": "image", "data": "xx"}, {"type": "text", "text": "two"}]
    assert mcp_output_text(blocks) == "one\n[image]\ntwo"
    assert mcp_output_text({"content": [{"type": "text", "text": "inner"}]}) == "inner"
    assert mcp_output_text({"sum": 5}) == '{"sum": 5}'


def test_a_post_tool_use_hook_replaces_an_mcp_tools_output_and_only_an_mcp_tools(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    hooks = {"PostToolUse": [{"matcher": "mcp__fake__.*|Bash", "hooks": [hook(f"echo '{REDACT}'")]}]}
    (ws / ".claude").mkdir()
    (ws / ".claude/settings.json").write_text(json.dumps({"hooks": hooks}))
    calls = [{"name": "mcp__fake__add", "input": {"a": 2, "b": 3}}, {"name": "Bash", "input": {"command": "echo kept"}}]
    run, events = run_calls(tmp_path, ws, calls, "--trust", "--allow", "mcp__fake", "--allow", "Bash(echo:*)")
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__fake__add"] == (False, "REDACTED")
    assert "sum=5" not in json.dumps([e for e in events if e["event"] in ("tool_result", "message")])
    assert got["Bash"][1].endswith("kept")
    assert "updatedMCPToolOutput applies to MCP tools only; Bash's output is kept" in run.out + run.err
