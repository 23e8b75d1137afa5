"""The fixed cost of every request stays small and the same, so a small window keeps room to
work and a local server's prefix cache hits on every new session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.agent.context import fixed_tokens
from arnes.llm.script import ScriptProvider
from arnes.session import SMALL_WINDOW, Session
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

# Tokens (4 characters a token), system prompt + every tool schema. 1500 until Grep took all of
# Claude Code's keys (1577), TodoWrite came (1714) and NotebookEdit (1870): Claude Code's tools as
# models learned them. A window of 8k or less never sees these; it gets the brief ones (SMALL_TARGET),
# without NotebookEdit.
TARGET = 1900
SMALL_TARGET = 1200  # the same with a window of 8k or less (issue 11)
KEYS = {"OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test"}


def test_system_prompt_and_tool_schemas_fit_the_budget(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]))
    assert {"Read", "Glob", "Grep", "Write", "Edit", "Bash", "Delegate", "ReadDoc"} <= set(session.tools.names())
    assert fixed_tokens(session.system_prompt(), session.tool_specs()) < TARGET


@pytest.mark.parametrize("window", [2048, 4096, SMALL_WINDOW])
def test_a_small_window_gets_a_fixed_prompt_of_at_most_1200_tokens(tmp_path: Path, window: int) -> None:
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), context_window=window)
    specs = {s.name: s for s in session.tool_specs()}
    assert fixed_tokens(session.system_prompt(), list(specs.values())) <= SMALL_TARGET
    assert set(specs) == set(session.offered_names())  # brief, and the same tools the session offers now
    assert "Delegate" not in specs  # a sub-agent would need its own fixed prompt in the same window
    assert "NotebookEdit" not in specs
    assert specs["Bash"].input_schema["properties"]["timeout"]["description"].startswith("Milliseconds")


def _workspace(root: Path, name: str, agents: str) -> Path:
    ws = root / name
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / f"{name}.md").write_text("a topic\n")
    (ws / "AGENTS.md").write_text(agents)
    (ws / "PROGRESS.md").write_text(f"# Progress\n\n## Next\n- {name} work\n")
    return ws


def test_system_prompt_and_schemas_are_byte_identical_across_workspaces(tmp_path: Path) -> None:
    a = _workspace(tmp_path, "alpha", "# alpha rules\n")
    b = _workspace(tmp_path, "beta", "# beta rules, longer\n")
    sessions = [Session(workspace=ws, provider=ScriptProvider.from_turns([])) for ws in (a, b)]
    prompts = {s.system_prompt() for s in sessions}
    schemas = {json.dumps([s.__dict__ for s in session.tool_specs()]) for session in sessions}
    assert len(prompts) == 1 and len(schemas) == 1
    assert "alpha" not in prompts.pop()
    assert "alpha rules" in sessions[0].context() and "beta work" in sessions[1].context()
    # Two copies of one project (eval repeats): their contexts differ only in the last line, the path.
    copies = [_workspace(tmp_path / f"copy{i}", "same", "# same rules\n") for i in (1, 2)]
    heads = {
        Session(workspace=ws, provider=ScriptProvider.from_turns([])).context().rsplit("\n\n", 1)[0] for ws in copies
    }
    assert len(heads) == 1 and "same rules" in heads.pop()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_two_sessions_first_requests_share_their_whole_fixed_prefix(tmp_path: Path, api: str) -> None:
    """What a server caches: everything before the first user message is the same bytes."""
    a = _workspace(tmp_path, "alpha", "# alpha rules\n")
    b = _workspace(tmp_path, "beta", "# beta rules, longer\n")
    bodies = []
    for ws in (a, b):
        with FakeLLMServer([{"text": "ok"}]) as server:
            base = server.url + "/v1" if api == "openai" else server.url
            run = run_arnes("--provider", api, "--base-url", base, "--model", "m", "-w", str(ws), "hi", env=KEYS)
            assert run.code == 0, run.err
            bodies.append(server.requests[0][1])
    if api == "openai":
        fixed = [json.dumps([body["tools"], body["messages"][0]]) for body in bodies]
        firsts = [body["messages"][1]["content"] for body in bodies]
    else:
        fixed = [json.dumps([body["tools"], body["system"]]) for body in bodies]
        firsts = [json.dumps(body["messages"][0]) for body in bodies]
    assert fixed[0] == fixed[1]
    assert "alpha rules" in firsts[0] and str(a) in firsts[0] and "beta rules" in firsts[1]
