"""Issue 24: Claude Code's approval keys for `.mcp.json` servers, with the real `arnes` and the real
stdio server of tests/fakes/mcp_server.py (mcp/approval.py; docs/mcp.md, "Claude Code's approval").

A server that must not start is `sh -c 'touch NAME'` run in the workspace (where a project's
server starts, writable inside the sandbox): had it started, the file would be there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import run_arnes
from tests.test_e2e_mcp import results, run_calls, stdio, workspace


def toucher(name: str) -> dict[str, Any]:
    return {"command": "sh", "args": ["-c", f"touch {name}"]}


def settings(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def users_claude_settings(data: dict[str, Any]) -> Path:
    return settings(Path(os.environ["HOME"]) / ".claude" / "settings.json", data)  # a fresh home per test


ADD = [{"name": "mcp__fake__add", "input": {"a": 2, "b": 3}}]


def test_an_untrusted_repository_cannot_approve_its_own_servers(tmp_path: Path) -> None:
    """The repository lists its servers in every approval key of both its settings files, and the
    user's own `enableAllProjectMcpServers: true` (common among Claude Code users) approves every
    project's servers: untrusted, none of them starts, in a run, in `arnes mcp list` or in doctor."""
    ws = workspace(tmp_path, {"fake": stdio(), "evil": toucher("pwned")})
    approve = {"enabledMcpjsonServers": ["evil", "fake"], "enableAllProjectMcpServers": True}
    settings(ws / ".claude" / "settings.json", approve)
    settings(ws / ".claude" / "settings.local.json", approve)
    users_claude_settings({"enableAllProjectMcpServers": True})
    run, events = run_calls(tmp_path, ws, ADD, "--allow", "mcp__fake")
    assert run.code == 0, run.err
    assert "Unknown tool 'mcp__fake__add'" in results(events)["mcp__fake__add"][1]
    waiting = "ignored until you trust this folder: enableAllProjectMcpServers, enabledMcpjsonServers;"
    assert f".claude/settings.json: {waiting}" in run.err and f".claude/settings.local.json: {waiting}" in run.err
    assert "mcpServers.evil" in run.err
    listed = run_arnes("mcp", "list", "-w", str(ws))
    assert "evil  not started: untrusted" in listed.out and "fake  not started: untrusted" in listed.out
    assert "MCP servers: 2 found, 2 refused" in run_arnes("doctor", "-w", str(ws)).out
    assert not (ws / "pwned").exists()


def test_in_a_trusted_folder_the_keys_decide_which_servers_start(tmp_path: Path) -> None:
    """The user's `enabledMcpjsonServers` names `fake` and `gone`; the project's own
    `.claude/settings.local.json` disables `gone`; `evil` is named nowhere, so it is pending, as in
    `claude -p`. An approval given in `--settings` is not read (a warning says where to put it)."""
    ws = workspace(tmp_path, {"fake": stdio(), "evil": toucher("pwned"), "gone": toucher("gone")})
    mine = users_claude_settings({"enabledMcpjsonServers": ["fake", "gone"]})
    local = settings(ws / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["gone"]})
    flag = json.dumps({"enabledMcpjsonServers": ["evil"]})
    run, events = run_calls(tmp_path, ws, ADD, "--trust", "--allow", "mcp__fake", "--settings", flag)
    assert run.code == 0, run.err
    assert results(events)["mcp__fake__add"] == (False, "sum=5")
    mcp_json, said = ws / ".mcp.json", run.out + run.err
    assert (
        f"{mcp_json}: mcpServers.evil is not started: enabledMcpjsonServers in {mine} does not name it "
        '(add it there, or set "enableAllProjectMcpServers": true)'
    ) in said
    assert (
        f"{mcp_json}: mcpServers.gone is not started: disabledMcpjsonServers in {local} names it "
        "(take it out there to start it)"
    ) in said
    assert "--settings: enabledMcpjsonServers ignored: which .mcp.json servers start is read from" in said
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws))
    assert "fake  started" in listed.out
    assert f"evil  not started: enabledMcpjsonServers in {mine} does not name it" in listed.out
    assert f"gone  not started: disabledMcpjsonServers in {local} names it" in listed.out
    doctor = run_arnes("--trust", "doctor", "-w", str(ws))
    assert "MCP servers: 3 found, 2 refused" in doctor.out
    assert f"gone `sh -c touch gone` ({mcp_json}): left out: disabledMcpjsonServers in {local}" in doctor.out
    streamed, _ = run_calls(tmp_path, ws, ADD, "--trust", "--allow", "mcp__fake", "--output-format", "stream-json")
    init = json.loads(streamed.out.splitlines()[0])
    status = {s["name"]: s["status"] for s in init["mcp_servers"]}
    assert status == {"fake": "connected", "evil": "disabled", "gone": "disabled"}
    assert not (ws / "pwned").exists() and not (ws / "gone").exists()
    users_claude_settings({"enabledMcpjsonServers": ["fake"], "enableAllProjectMcpServers": True})
    started = run_arnes("--trust", "mcp", "list", "-w", str(ws))
    assert "evil  " in started.out and "evil  not started" not in started.out  # enableAll: it ran this time
    assert (ws / "pwned").exists() and not (ws / "gone").exists()  # the disabled one still did not
