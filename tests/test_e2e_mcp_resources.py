"""MCP resources with the real `arnes` and a real stdio MCP server (mcp/resource_tools.py): Claude
Code's ListMcpResourcesTool and ReadMcpResourceTool, offered while a running server has resources,
asking nothing, stopped by a deny rule."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_e2e_mcp import run_calls, stdio, workspace

LIST = {"name": "ListMcpResourcesTool", "input": {}}
READ = {"name": "ReadMcpResourceTool", "input": {"server": "fake", "uri": "notes://readme"}}
LOGO = {"name": "ReadMcpResourceTool", "input": {"server": "fake", "uri": "notes://logo"}}
NONE = {"name": "ReadMcpResourceTool", "input": {"server": "nobody", "uri": "notes://readme"}}


def outputs(events: list[dict]) -> list[tuple[bool, str]]:
    """Each call's result, in the order of the calls (read-only calls run side by side)."""
    got = {e["id"]: (e["is_error"], e["output"]) for e in events if e["event"] == "tool_result"}
    return [got[e["id"]] for e in events if e["event"] == "tool_call"]


def test_the_model_lists_and_reads_a_servers_resources(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    run, events = run_calls(tmp_path, ws, [LIST, READ, LOGO, NONE], "--trust")
    assert run.code == 0, run.err
    listed, read, logo, none = outputs(events)
    assert not listed[0]
    by_uri = {r["uri"]: r for r in json.loads(listed[1])}
    assert by_uri["notes://readme"] == {
        "uri": "notes://readme", "name": "readme", "mimeType": "text/plain",
        "description": "The project's notes.", "server": "fake",
    }  # fmt: skip
    assert not read[0] and json.loads(read[1]) == {
        "contents": [{"uri": "notes://readme", "mimeType": "text/plain", "text": "The release is on Friday."}]
    }
    assert not logo[0] and "[binary content, 8 bytes, not shown]" in logo[1]
    assert none[0] and "no running MCP server 'nobody' offers resources (these do: fake)" in none[1]


def test_a_deny_rule_stops_reading_resources(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    run, events = run_calls(tmp_path, ws, [READ], "--trust", "--deny", "ReadMcpResourceTool")
    assert run.code == 0, run.err
    [(is_error, output)] = outputs(events)
    assert is_error and "Friday" not in output


def test_an_untrusted_servers_resources_are_not_offered(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    run, events = run_calls(tmp_path, ws, [READ])  # no --trust: the project's server does not start
    assert run.code == 0, run.err
    [(is_error, output)] = outputs(events)
    assert is_error and "Friday" not in output


def message_with(tmp_path: Path, ws: Path, message: str, *flags: str, run_no: int = 1) -> str:
    import json as j

    from arnes.agent.trace import read_trace
    from tests.conftest import run_arnes

    script, trace = tmp_path / "s.json", tmp_path / f"t{run_no}.jsonl"
    script.write_text(j.dumps({"turns": [{"text": "ok"}]}))
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "--trust", *flags, message)  # fmt: skip
    assert run.code == 0, run.err
    first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    return "\n".join(b["text"] for b in first["content"] if b["type"] == "text")


def test_at_server_uri_in_the_message_attaches_the_resource(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    said = message_with(tmp_path, ws, "When is @fake:notes://readme? Not @fake:notes://nothing nor @nobody:x://y.")
    assert "The user attached the MCP resource @fake:notes://readme" in said and "Friday" in said
    assert said.count("The user attached") == 1
    denied = message_with(tmp_path, ws, "When is @fake:notes://readme?", "--deny", "ReadMcpResourceTool", run_no=2)
    assert "Friday" not in denied
