"""MCP servers end to end (DESIGN §13): a real server on the official SDK, the real `arnes` command.

The server (tests/fakes/mcp_server.py) runs over stdio and over streamable HTTP on 127.0.0.1; the
scripted model calls its tools as mcp__NAME__TOOL and the trace shows what came back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.mcp.tools import tool_name
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import RuleError, SourcedRule, parse_rule
from arnes.permissions.types import ToolRequest
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes

SERVER = str(Path(__file__).parent / "fakes" / "mcp_server.py")


def stdio(how: str = "stdio", **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, how], **extra}


def workspace(tmp_path: Path, servers: dict[str, Any]) -> Path:
    """A workspace with the fake server copied in: the sandbox's private /tmp hides a checkout
    of arnes that lives under /tmp (a CI clone may), the workspace it binds."""
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(SERVER, ws / "mcp_server.py")
    text = json.dumps({"mcpServers": servers}).replace(json.dumps(SERVER), json.dumps(str(ws / "mcp_server.py")))
    (ws / ".mcp.json").write_text(text)
    return ws


def run_calls(
    tmp_path: Path, ws: Path, calls: list[dict[str, Any]], *flags: str, env: dict[str, str] | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    *flags, "use the tools", env=env)  # fmt: skip
    return run, read_trace(trace)


def results(events: list[dict[str, Any]]) -> dict[str, tuple[bool, str]]:
    return {e["name"]: (e["is_error"], e["output"]) for e in events if e["event"] == "tool_result"}


def test_stdio_server_tools_pass_the_gate_and_a_dead_server_is_reported(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio(), "dead": stdio("exit")})
    calls = [
        {"name": "mcp__fake__add", "input": {"a": 2, "b": 3}},
        {"name": "mcp__fake__picture", "input": {}},
        {"name": "mcp__fake__fail", "input": {"why": "on purpose"}},
        {"name": "mcp__fake__probe", "input": {}},  # no rule, no terminal: denied
    ]
    allow = ["--allow", "mcp__fake__add", "--allow", "mcp__fake__picture", "--allow", "mcp__fake__fail"]
    run, events = run_calls(tmp_path, ws, calls, "--trust", *allow)
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__fake__add"] == (False, "sum=5")
    assert got["mcp__fake__picture"][1] == "caption\n[image (image/png, 9 bytes) not shown]"
    assert got["mcp__fake__fail"][0] is True and "returned an error" in got["mcp__fake__fail"][1]
    assert got["mcp__fake__probe"][0] is True and "Permission denied" in got["mcp__fake__probe"][1]
    spec = next(e for e in events if e["event"] == "session_start")
    assert "dead" in run.out + run.err and "failed" in run.out + run.err, spec
    assert "MCP server dead failed" in run.out + run.err


def test_a_call_that_hangs_times_out_and_the_run_goes_on(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio(tool_timeout=1)})
    calls = [{"name": "mcp__fake__hang", "input": {}}]
    run, events = run_calls(tmp_path, ws, calls, "--trust", "--allow", "mcp__fake")
    assert run.code == 0, run.err
    is_error, out = results(events)["mcp__fake__hang"]
    assert is_error and "did not answer within 1 s" in out


def test_user_only_keys_in_a_project_file_are_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio(sandbox=False, network=True)})
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws))
    assert "sandbox bubblewrap" in listed.out or Bubblewrap.unavailable() is not None
    assert "only your user settings" in listed.out + listed.err
    (tmp_path / "plain").mkdir()
    plain = run_arnes("--trust", "mcp", "list", "-w", str(workspace(tmp_path / "plain", {"fake": stdio()})))
    assert "ignored" not in plain.out + plain.err  # a server that lifts nothing is not warned about


def test_untrusted_project_mcp_json_starts_nothing(tmp_path: Path) -> None:
    """A hostile clone's .mcp.json runs a command: untrusted, it is listed and never started."""
    marker = tmp_path / "pwned"
    ws = workspace(tmp_path, {"evil": {"command": "sh", "args": ["-c", f"touch {marker}"]}, "fake": stdio()})
    run, events = run_calls(tmp_path, ws, [{"name": "mcp__fake__add", "input": {"a": 1, "b": 1}}],
                            "--allow", "mcp__fake")  # fmt: skip
    assert run.code == 0, run.err
    assert not marker.exists()
    assert "Unknown tool 'mcp__fake__add'" in results(events)["mcp__fake__add"][1]
    assert "mcpServers.evil" in run.err  # named in the untrusted warning
    listed = run_arnes("mcp", "list", "-w", str(ws))
    assert "evil  not started: untrusted" in listed.out and not marker.exists()
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "MCP servers: 2 found, 2 refused" in doctor.out
    assert f"evil `sh -c touch {marker}`" in doctor.out and "refused: untrusted folder" in doctor.out
    trusted = run_arnes("doctor", "-w", str(ws), "--trust")
    assert "MCP servers: 2 found, 0 refused" in trusted.out and "starts, sandboxed" in trusted.out
    assert not marker.exists()  # doctor lists servers, it never starts one


def test_trust_covers_the_mcp_json_it_saw(tmp_path: Path) -> None:
    """Trusted, then .mcp.json changes (a pull adds a server): untrusted again until asked."""
    marker = tmp_path / "pwned"
    ws = workspace(tmp_path, {"fake": stdio()})
    assert run_arnes("trust", str(ws)).code == 0
    assert "fake  started" in run_arnes("mcp", "list", "-w", str(ws)).out
    servers = {"fake": stdio(), "evil": {"command": "touch", "args": [str(marker)]}}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}).replace(SERVER, str(ws / "mcp_server.py")))
    listed = run_arnes("mcp", "list", "-w", str(ws))
    assert "evil  not started: untrusted" in listed.out and not marker.exists()


@pytest.fixture(params=["http", "sse"])
def http_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(type, url) of the fake server over streamable HTTP, and over the older HTTP+SSE."""
    kind = request.param
    proc = subprocess.Popen(
        [sys.executable, SERVER, kind], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().strip()  # printed once the socket listens
        yield kind, f"http://127.0.0.1:{port}/{'sse' if kind == 'sse' else 'mcp'}"
    finally:
        proc.kill()
        proc.wait()


def test_http_servers_both_transports(tmp_path: Path, http_server: tuple[str, str]) -> None:
    kind, url = http_server
    ws = workspace(tmp_path, {"web": {"type": kind, "url": url}})
    run, events = run_calls(tmp_path, ws, [{"name": "mcp__web__add", "input": {"a": 20, "b": 22}}],
                            "--trust", "--allow", "mcp__web__*")  # fmt: skip
    assert run.code == 0, run.err
    assert results(events)["mcp__web__add"] == (False, "sum=42")


@pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")
def test_stdio_server_runs_in_the_sandbox(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio()})
    run, events = run_calls(
        tmp_path, ws, [{"name": "mcp__fake__probe", "input": {}}], "--trust", "--allow", "mcp__fake"
    )
    assert run.code == 0, run.err
    out = results(events)["mcp__fake__probe"][1]
    assert "network blocked" in out and "HOME_SECRET=<unset>" in out
    # Issue 23.9: a session whose only sandboxed process was the server leaves no stand-ins behind.
    assert not (ws / ".git").exists() and not (ws / "features.json").exists()


def test_mcp_list_shows_state_and_tools_and_a_hung_server(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"fake": stdio(), "hung": {"command": "sleep", "args": ["600"], "timeout": 1}})
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws))
    assert listed.code == 0, listed.err
    assert "fake  started" in listed.out and "mcp__fake__add  Add two numbers." in listed.out
    assert "hung  failed: no answer within 1 s" in listed.out


def test_mcp_rules_parse_strictly_and_decide() -> None:
    for bad in ("mcp__", "mcp__a__b__c(x)", "mcp__bad name", "mcp__a(x)", "mcp__a__b*"):
        with pytest.raises(RuleError):
            parse_rule(bad)
    rules = [SourcedRule("allow", "mcp__fs__read", "t"), SourcedRule("deny", "mcp__evil", "t"),
             SourcedRule("ask", "mcp__db__*", "t"), SourcedRule("allow", "mcp__db__query", "t")]  # fmt: skip
    engine = RuleEngine(Path("/tmp"), "default", rules)

    def kind(tool: str, mode: str = "default") -> str:
        engine.mode = mode  # type: ignore[assignment]
        return engine.decide(ToolRequest(tool, {}, (), False)).kind

    assert kind("mcp__fs__read") == "allow"
    assert kind("mcp__fs__write") == "ask"  # no rule: the user decides
    assert kind("mcp__evil__anything") == "deny"
    assert kind("mcp__db__query") == "ask"  # ask beats allow
    assert kind("mcp__fs__read", "plan") == "deny"  # plan changes nothing, and a tool may write


def test_a_rule_naming_a_long_mcp_tool_in_full_holds_for_the_call_by_its_cut_name(tmp_path: Path) -> None:
    """The model calls a tool by its name cut to 64 characters (what providers accept); a rule that
    names it in full meant that very call, and so did a rule written with the cut name."""
    full = tool_name("github", "create_or_update_a_pull_request_review_comment_thread")
    long_name = "mcp__github__create_or_update_a_pull_request_review_comment_thread"
    assert full == long_name[:64] != long_name
    for written in (long_name, full):
        engine = RuleEngine(tmp_path, "bypass", [SourcedRule("deny", written, "t")])
        for called in (full, long_name):
            assert engine.decide(ToolRequest(called, {}, (), False)).kind == "deny", (written, called)
    run = run_arnes("permissions", "check", long_name, "-w", str(tmp_path), "--deny", full)
    assert "deny" in run.out


def test_permissions_check_explains_an_mcp_call(tmp_path: Path) -> None:
    run = run_arnes("permissions", "check", "mcp__gh__create_issue", "-w", str(tmp_path), "--allow", "mcp__gh")
    assert run.code == 0 and "allow: rule mcp__gh" in run.out
    run = run_arnes("permissions", "check", "mcp__gh__create_issue", "-w", str(tmp_path))
    assert "ask:" in run.out and "denied" in run.out


def test_bad_mcp_json_is_one_clear_line(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"x": {"args": ["a"]}})
    run = run_arnes("mcp", "list", "-w", str(ws))
    assert run.code == 2 and ".mcp.json: invalid MCP servers: mcpServers.x" in run.err and "Traceback" not in run.err


def test_stream_json_init_lists_the_mcp_tools_and_each_servers_status(tmp_path: Path) -> None:
    """Like Claude Code's: the init line names the servers' tools and says which server failed."""
    ws = workspace(tmp_path, {"fake": stdio(), "dead": stdio("exit")})
    run, _ = run_calls(tmp_path, ws, [{"name": "mcp__fake__add", "input": {"a": 2, "b": 3}}], "--trust",
                       "--allow", "mcp__fake", "--output-format", "stream-json")  # fmt: skip
    assert run.code == 0, run.err
    lines = [json.loads(line) for line in run.out.splitlines()]
    init = lines[0]
    assert init["type"] == "system" and init["subtype"] == "init"
    assert "mcp__fake__add" in init["tools"] and "Read" in init["tools"]
    status = {s["name"]: s["status"] for s in init["mcp_servers"]}
    assert status == {"fake": "connected", "dead": "failed"}
    assert [line for line in lines if line.get("subtype") == "init"] == [init]


def test_a_servers_prompt_runs_as_a_slash_command(tmp_path: Path) -> None:
    """Claude Code's `/mcp__SERVER__PROMPT args`: the server's prompt, its arguments filled in order
    (the last takes the rest), is the user's message (it was an unknown command)."""
    from tests.fakes.llm_server import FakeLLMServer

    ws = workspace(tmp_path, {"fake": stdio()})
    with FakeLLMServer([{"text": "reviewed"}]) as server:
        model = ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "m"]
        run = run_arnes(*model, "-w", str(ws), "--trust", "-p", "/mcp__fake__review 456 error handling",
                        env={"OPENAI_API_KEY": "x"})  # fmt: skip
        sent = json.dumps(server.requests[0][1]["messages"][-1])
    assert run.code == 0, run.err
    assert "Review pull request #456, looking at error handling." in sent
    missing = run_arnes("-w", str(ws), "--trust", "-p", "/mcp__fake__nothing")
    assert missing.code == 2 and "/mcp__fake__nothing" in missing.err and "Traceback" not in missing.err


def test_mcp_timeout_is_the_start_limit_of_a_server_that_names_none(tmp_path: Path) -> None:
    """Claude Code's MCP_TIMEOUT (milliseconds) bounds a server's start; a server's own `timeout` wins."""
    ws = workspace(tmp_path, {"hung": {"command": "sleep", "args": ["600"]},
                              "own": {"command": "sleep", "args": ["600"], "timeout": 2}})  # fmt: skip
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws), env={"MCP_TIMEOUT": "1000"})
    assert listed.code == 0, listed.err
    assert "hung  failed: no answer within 1 s" in listed.out and "own  failed: no answer within 2 s" in listed.out
    run, _ = run_calls(tmp_path, ws, [], "--trust", env={"MCP_TIMEOUT": "1000"})
    assert "MCP server hung failed: no answer within 1 s" in run.out + run.err
    bad = run_arnes("--trust", "mcp", "list", "-w", str(ws), env={"MCP_TIMEOUT": "soon"})
    assert "MCP_TIMEOUT='soon' is not a positive whole number; ignored" in bad.out


def test_max_mcp_output_tokens_caps_only_mcp_results(tmp_path: Path) -> None:
    """Claude Code's MAX_MCP_OUTPUT_TOKENS (default 25,000 tokens) is an MCP result's cap, within a
    quarter of the window; before, every result stopped at 30,000 characters."""
    from tests.fakes.llm_server import FakeLLMServer

    words = ["x" * 20_000, "y" * 20_000, "z" * 20_000, "END-MARK"]
    ws = workspace(tmp_path, {"big": {"command": sys.executable, "args": [SERVER, "stdio", *words]}})
    turns = [{"tool_calls": [{"name": "mcp__big__args", "input": {}}]}, {"text": "done"}]

    def tool_result(env: dict[str, str]) -> str:
        with FakeLLMServer(turns) as server:
            run = run_arnes("-p", "--provider", "openai", "--base-url", server.url + "/v1", "--model", "m", "--trust",
                            "--context-window", "200000", "--allow", "mcp__big", "-w", str(ws), "go",
                            env={"OPENAI_API_KEY": "t", **env})  # fmt: skip
            assert run.code == 0, run.err
            body = server.requests[-1][1]
        content = next(m for m in body["messages"] if m["role"] == "tool")["content"]
        return content if isinstance(content, str) else json.dumps(content)

    whole = tool_result({})
    assert whole.endswith("END-MARK") and len(whole) > 60_000
    cut = tool_result({"MAX_MCP_OUTPUT_TOKENS": "1000"})
    assert cut.startswith("x" * 4000) and "characters cut" in cut and "END-MARK" not in cut


def test_mcp_add_writes_where_arnes_reads_as_claude_mcp_add_does(tmp_path: Path) -> None:
    """`claude mcp add NAME -- CMD ARGS` as READMEs give it (it was refused, `add-json` ran as a task):
    the user scope is arnes's own settings (kept whole), the project scope the workspace's .mcp.json."""
    import os

    ws = workspace(tmp_path, {})  # the server copied in: the sandbox hides this checkout's folder
    server = str(ws / "mcp_server.py")
    mine = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    added = run_arnes("mcp", "add", "fake", "-e", "K=V=1", "--", sys.executable, server, "stdio", "-y", cwd=ws)
    assert added.code == 0, added.err
    assert json.loads(mine.read_text()) == {
        "permissions": {"allow": ["Read"]},
        "mcpServers": {"fake": {"command": sys.executable, "args": [server, "stdio", "-y"], "env": {"K": "V=1"}}},
    }
    web = run_arnes("mcp", "add", "--transport", "http", "-s", "project", "-w", str(ws), "web", "http://127.0.0.1:9/mcp",
                    "--header", "Authorization: Bearer t")  # fmt: skip
    assert web.code == 0, web.err
    assert json.loads((ws / ".mcp.json").read_text())["mcpServers"]["web"] == {
        "type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}
    }  # fmt: skip
    as_json = run_arnes("mcp", "add-json", "other", json.dumps({"command": "node", "args": ["s.js"]}), cwd=ws)
    assert as_json.code == 0 and json.loads(mine.read_text())["mcpServers"]["other"]["command"] == "node"
    listed = run_arnes("mcp", "list", "-w", str(ws))
    assert "fake  started" in listed.out and f"from {mine}" in listed.out
    gone = run_arnes("mcp", "remove", "web", "-w", str(ws))
    assert gone.code == 0 and json.loads((ws / ".mcp.json").read_text()) == {"mcpServers": {}}
    assert run_arnes("mcp", "remove", "web", "-w", str(ws)).code == 2


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["add-jsn", "x", "{}"], "arnes mcp: no command 'add-jsn'; use one of list, add, add-json, remove"),
        (["list", "everything"], "arnes mcp list: unexpected words 'everything'"),
        (["add", "x"], "arnes: mcp add x: give the server's command after `--`, or its URL"),
        (["add-json", "x", "{nope"], "arnes: mcp add-json: the server is not JSON"),
        (["add-json", "x", '{"url": 1}'], "arnes: mcp add x: invalid MCP servers: mcpServers.x.url"),
        (["add", "-s", "local", "x", "--", "cmd"], "arnes: mcp add: arnes has no local scope"),
        (["add", "a__b", "--", "cmd"], "'a__b' is not a server name"),
    ],
)
def test_a_wrong_mcp_command_is_one_line_and_never_a_task(tmp_path: Path, words: list[str], said: str) -> None:
    run = run_arnes("mcp", *words, cwd=tmp_path)
    assert run.code == 2 and said in run.err and "as a task" not in run.err and run.out == ""
    assert len(run.err.strip().splitlines()) == 1 and not (Path(os.environ["XDG_CONFIG_HOME"]) / "arnes").exists()
