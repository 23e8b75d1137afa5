"""Agent definitions (issue 15 point 5) through the real `arnes` command: they only ever narrow."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.extensions.agents import load_catalog
from arnes.host.files import HostFiles
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test"}


def define(folder: Path, name: str, front: str, body: str = "You are careful.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{front.strip()}\n---\n{body}\n")
    return path


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": inp}]}


def scripted(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], *flags: str) -> tuple[Any, list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), *flags, "go")
    return run, read_trace(trace)


def child_results(trace: list[dict[str, Any]]) -> list[str]:
    return [e["output"] for e in trace if e["event"] == "tool_result" and "parent" in e]


def first_message(trace: list[dict[str, Any]], child: bool) -> str:
    event = next(e for e in trace if e["event"] == "message" and e["role"] == "user" and ("parent" in e) == child)
    return "\n".join(block.get("text", "") for block in event["content"])


def test_tools_narrow_and_the_body_leads_the_childs_first_message(shop: Path, tmp_path: Path) -> None:
    define(
        shop / ".claude" / "agents",
        "look",
        "name: scout\ndescription: Finds fast\ntools: Read, Grep\nmodel: haiku",
        "ROLE-7",
    )
    turns = [
        call("Delegate", task="find the rate", agent="scout"),
        call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.99"),
        call("Bash", command="cat pricing.py"),
        call("Grep", pattern="DISCOUNT_RATE ="),
        {"text": "pricing.py line 4"},
        {"text": "main done"},
    ]
    run, trace = scripted(shop, tmp_path, turns, "--permission-mode", "bypass", "--trust")
    assert run.code == 0, run.err
    outputs = child_results(trace)
    assert outputs[0].startswith("Unknown tool 'Edit'. Available tools: Read, Grep")
    assert outputs[1].startswith("Unknown tool 'Bash'") and outputs[2] == "pricing.py"
    assert "0.10" in (shop / "pricing.py").read_text()
    # The list of agents is in the session's context; the body in the child's, never the system prompt.
    assert "- scout: Finds fast" in first_message(trace, child=False)
    assert first_message(trace, child=True).index("ROLE-7") < first_message(trace, child=True).index("find the rate")
    delegate = next(e for e in trace if e["event"] == "tool_result" and e["name"] == "Delegate")
    assert delegate["output"] == "pricing.py line 4"
    # Claude Code's alias means nothing to this provider: said, and the parent's model is used.
    assert "model 'haiku' is a Claude model, which the script provider does not serve" in run.out + run.err
    assert [e["model"] for e in trace if e["event"] == "session_start"] == ["script", "script"]


@pytest.mark.parametrize(
    ("parent", "mode", "written", "why"),
    [
        ([], "bypassPermissions", False, "(no terminal to ask)"),  # bypass under default stays default
        (["--permission-mode", "acceptEdits"], "default", False, "(no terminal to ask)"),
        (["--permission-mode", "bypass"], "dontAsk", False, "this agent never asks"),
        (["--permission-mode", "bypass"], "plan", False, "Unknown tool 'Write'"),
        (["--permission-mode", "acceptEdits"], "acceptEdits", True, "Created new.py"),
    ],
)
def test_permission_mode_is_never_wider_than_the_parents(
    shop: Path, tmp_path: Path, parent: list[str], mode: str, written: bool, why: str
) -> None:
    define(shop / ".arnes" / "agents", "worker", f"description: Works\npermissionMode: {mode}")
    turns = [
        call("Delegate", task="write new.py", agent="worker"),
        call("Write", file_path="new.py", content="x = 1\n"),
        call("Bash", command="echo 1 > cmd.txt"),  # the shell is judged in the narrower mode too
        {"text": "tried"},
        {"text": "main done"},
    ]
    run, trace = scripted(shop, tmp_path, turns, *parent)
    assert run.code == 0, run.err
    assert (shop / "new.py").exists() is written and (shop / "cmd.txt").exists() is written
    assert why in child_results(trace)[0]


@pytest.mark.parametrize("trusted", [True, False])
def test_a_named_model_is_sent_and_inherit_keeps_the_parents_unless_untrusted(tmp_path: Path, trusted: bool) -> None:
    ws = tmp_path / "ws"
    define(ws / ".arnes" / "agents", "small", "description: Cheap\nmodel: tiny-1")
    define(ws / ".arnes" / "agents", "same", "description: Same\nmodel: inherit")
    turns = [
        call("Delegate", task="a", agent="small"),
        {"text": "small done"},
        call("Delegate", task="b", agent="same"),
        {"text": "same done"},
        {"text": "main done"},
    ]
    trace = tmp_path / "t.jsonl"
    flags = ["--trust"] if trusted else []
    with FakeLLMServer(turns) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "big", "-w", str(ws),
            "--trace", str(trace), *flags, "go", env=KEYS,
        )  # fmt: skip
        models = [body["model"] for _, body in server.requests]
    assert run.code == 0, run.err
    assert models == ["big", "tiny-1" if trusted else "big", "big", "big", "big"]
    started = [e["model"] for e in read_trace(trace) if e["event"] == "session_start" and "parent" in e]
    assert started == (["tiny-1", "big"] if trusted else ["big", "big"])
    assert ("model 'tiny-1' ignored" in run.err) is not trusted


def test_unknown_names_and_linked_definitions_are_refused(shop: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    define(outside, "evil", "description: Evil", "EXFIL-BODY")
    (shop / ".arnes" / "agents").mkdir(parents=True)
    os.symlink(outside / "evil.md", shop / ".arnes" / "agents" / "evil.md")
    os.symlink(outside, shop / ".claude", target_is_directory=True)  # .claude/agents through a link
    (outside / "agents").mkdir()
    define(outside / "agents", "sneaky", "description: Sneaky", "EXFIL-BODY")
    home_agents = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "agents"
    define(home_agents, "helper", "description: The user's own helper")
    turns = [call("Delegate", task="x", agent="evil"), call("Delegate", task="x", agent="sneaky"), {"text": "ok"}]
    run, trace = scripted(shop, tmp_path, turns)
    assert run.code == 0, run.err
    outputs = [e["output"] for e in trace if e["event"] == "tool_result"]
    assert outputs[0].startswith("There is no agent definition named 'evil'. The agents you can name:\n")
    assert "- helper: The user's own helper" in outputs[0] and "sneaky" in outputs[1]
    assert "EXFIL-BODY" not in json.dumps(trace)
    assert ".arnes/agents/evil.md is a link" in run.err
    doctor = run_arnes("-w", str(shop), "doctor")
    assert "helper (user," in doctor.out and "refused: .arnes/agents/evil.md is a link" in doctor.out
    assert "sneaky" not in doctor.out


def test_a_team_node_follows_its_definition(shop: Path, tmp_path: Path) -> None:
    define(
        shop / ".arnes" / "agents",
        "careful",
        "description: Edits carefully\ntools: Read, Edit\npermissionMode: default",
        "ROLE-9",
    )
    (shop / ".arnes" / "teams").mkdir(parents=True)
    (shop / ".arnes" / "teams" / "one.toml").write_text(
        '[[nodes]]\nid = "fix"\nprompt = "Fix it."\nagent_def = "careful"\n'
    )
    turns = [
        call("Write", file_path="new.py", content="x"),
        call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.15"),
        {"text": "could not"},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    run = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(shop), "--permission-mode", "bypass",
        "team", "run", "one", "do it",
    )  # fmt: skip
    assert run.code == 0, run.out + run.err
    assert "0.10" in (shop / "pricing.py").read_text() and not (shop / "new.py").exists()
    runs = shop / ".arnes" / "teams" / "runs"
    timeline = [json.loads(line) for p in runs.glob("*.jsonl") for line in p.read_text().splitlines()]
    reasons = [e["reason"] for e in timeline if e.get("event") == "node_denied"]
    assert reasons[0].startswith("Unknown tool 'Write'") and "(no terminal to ask)" in reasons[1]
    assert any(e.get("event") == "message" and "ROLE-9" in json.dumps(e) for e in timeline)
    (shop / ".arnes" / "teams" / "one.toml").write_text(
        '[[nodes]]\nid = "fix"\nprompt = "Fix."\nagent_def = "nobody"\n'
    )
    missing = run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "team", "run", "one", "x")
    assert missing.code == 2 and "agent_def 'nobody' names no agent definition; found: careful" in missing.err


def test_bad_definitions_are_refused_one_line_each_and_the_rest_load(tmp_path: Path) -> None:
    folder = tmp_path / ".arnes" / "agents"
    define(folder, "ok", "description: Fine\ntools: [Read, Task, Bash(git diff:*)]\ndisallowedTools: Grep")
    define(folder, "badmode", "permissionMode: yolo")
    define(folder, "badname", "name: ../x")
    catalog = load_catalog(HostFiles(tmp_path), {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}, trusted=True)
    assert list(catalog.agents) == ["ok"]
    ok = catalog.agents["ok"]
    assert ok.tools == ("Read", "Delegate") and ok.allows("Read") and not ok.allows("Bash")
    assert not ok.allows("Grep") and "Bash(git diff:*)" in ok.notes[0]
    whys = sorted(r.why for r in catalog.refused)
    assert "permissionMode 'yolo' is not one of" in whys[0] and "name '../x' must be" in whys[1]
    assert all("\n" not in why for why in whys)


def test_a_stricter_mode_never_widens_the_engine(tmp_path: Path) -> None:
    from arnes.permissions.compose import StricterMode
    from arnes.permissions.engine import RuleEngine
    from arnes.permissions.types import Mode, Target, ToolRequest

    write = ToolRequest("Write", {}, (Target(tmp_path / "a.py", "write"),), read_only=False)
    cases: list[tuple[Mode, Mode, str]] = [
        ("plan", "bypass", "deny"),
        ("default", "bypass", "ask"),
        ("bypass", "default", "ask"),
    ]
    for parent, asked, kind in cases:
        assert StricterMode(RuleEngine(tmp_path, parent), asked).decide(write).kind == kind, (parent, asked)


def test_definitions_given_with_the_run_load_leniently_and_keep_their_model() -> None:
    """Claude Code's `--agents` JSON and the SDKs' `agents` option: the caller's own, like a flag."""
    from arnes.extensions.agents import given_agents

    raw = {
        "reviewer": {"description": "Reviews\n code", "prompt": " Review. ", "tools": ["Read", "Task", "Bash(git:*)"],
                     "model": "opus", "permissionMode": "plan", "color": "red"},
        "plain": {"prompt": "Help.", "model": "inherit"},
        "no-prompt": {"description": "x"},
        "bad mode": {"prompt": "x"},
        "moded": {"prompt": "x", "permissionMode": "yolo"},
        "listy": {"prompt": "x", "tools": "Read"},
    }  # fmt: skip
    found, warnings = given_agents(raw, "--agents")
    assert sorted(found) == ["plain", "reviewer"]
    reviewer = found["reviewer"]
    assert (reviewer.description, reviewer.body, reviewer.tools) == ("Reviews code", "Review.", ("Read", "Delegate"))
    assert (reviewer.model, reviewer.mode, reviewer.origin) == ("opus", "plan", "user")
    assert found["plain"].model is None and found["plain"].tools is None
    assert warnings == [
        "--agents: agent 'reviewer': 'color' is not used here",
        "--agents: agent 'reviewer': tools entry 'Bash(git:*)' left out: a tool list names whole tools; use a "
        "permission rule",
        "--agents: agent 'no-prompt' left out: it has no \"prompt\" (its instructions)",
        "--agents: agent 'bad mode' left out: a name is letters, digits, '-', '_' or '.'",
        "--agents: agent 'moded' left out: permissionMode 'yolo' is not one of plan, dontAsk, default, acceptEdits, "
        "bypass, bypassPermissions",
        "--agents: agent 'listy' left out: tools and disallowedTools are lists of tool names",
    ]
    assert given_agents([], "--agents") == ({}, ["--agents: agent definitions are an object of NAME: "
                                                  "{description, prompt, ...}; ignored"])  # fmt: skip


def test_hooks_in_an_agent_file_are_named_as_not_run(tmp_path: Path) -> None:
    """Claude Code runs an agent file's `hooks:` for that agent's calls; arnes does not, and says so
    in one line rather than letting a guard the user relies on drop in silence (survey 4, H4-05)."""
    agents = Path(os.environ["HOME"]) / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "db-reader.md").write_text(
        "---\nname: db-reader\ndescription: Run read-only queries\ntools: Bash\nhooks:\n  PreToolUse:\n"
        '    - matcher: "Bash"\n      hooks:\n        - type: command\n          command: "exit 2"\n---\nRead only.\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "go")
    assert run.code == 0, run.err
    said = [line for line in (run.out + run.err).splitlines() if "db-reader.md" in line]
    assert len(said) == 1 and "hooks not run" in said[0], run.err
