"""Teams: command lines for external CLIs, team files, and runs end to end (scripted model, fake CLIs)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from arnes.errors import ConfigError
from arnes.workflow.teams.clis import READ_ONLY_SENTENCES, command_line
from arnes.workflow.teams.config import builtin_names, load_team
from tests.conftest import run_arnes

# -- command lines ---------------------------------------------------------------------------


def test_claude_read_only_adds_its_disallowed_tools_and_keeps_the_users() -> None:
    argv = command_line("claude", "review", ["--disallowedTools", "WebFetch", "--model", "opus"], True)
    assert argv[:3] == ["claude", "-p", f"review\n\n{READ_ONLY_SENTENCES}"]  # before any variadic list
    assert argv.count("--disallowedTools") == 2 and "WebFetch" in argv  # lists accumulate
    assert argv[-6:] == ["--disallowedTools", "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"]


@pytest.mark.parametrize(
    "user_args",
    [["--sandbox", "workspace-write"], ["-s", "danger-full-access"], ["--sandbox=workspace-write"], []],
)
def test_codex_read_only_replaces_any_sandbox_with_its_value(user_args: list[str]) -> None:
    argv = command_line("codex", "review", [*user_args, "--json"], True)
    assert argv[:2] == ["codex", "exec"] and argv[-1].startswith("review")
    assert argv.count("--sandbox") == 1 and argv[argv.index("--sandbox") + 1] == "read-only"
    assert "-s" not in argv and "workspace-write" not in argv and "danger-full-access" not in argv
    assert not any(a.startswith("--sandbox=") for a in argv) and "--json" in argv


def test_opencode_read_only_replaces_the_agent() -> None:
    argv = command_line("opencode", "review", ["--agent", "build", "--agent=build"], True)
    assert argv[:2] == ["opencode", "run"]
    assert [a for a in argv if "agent" in a] == ["--agent"] and argv[argv.index("--agent") + 1] == "plan"


def test_gemini_has_no_verified_switch_so_only_the_sentences() -> None:
    argv = command_line("gemini", "review", ["--approval-mode", "yolo"], True)
    assert argv == ["gemini", "-p", f"review\n\n{READ_ONLY_SENTENCES}", "--approval-mode", "yolo"]


def test_writing_nodes_get_no_read_only_flags_and_the_model_replaces_theirs() -> None:
    argv = command_line("codex", "fix", ["--model", "a", "-m", "b"], False, model="c")
    assert argv == ["codex", "exec", "--model", "c", "fix"]


# -- team files ------------------------------------------------------------------------------


def test_builtin_templates_load() -> None:
    assert {"maker-checker", "bug-hunt", "release-shield", "feature-squad"} <= set(builtin_names())
    for name in builtin_names():
        assert load_team(Path("/nonexistent"), name).nodes


def write_team(ws: Path, name: str, text: str) -> None:
    (ws / ".arnes" / "teams").mkdir(parents=True, exist_ok=True)
    (ws / ".arnes" / "teams" / f"{name}.toml").write_text(text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[[nodes]]\nid="a"\nprompt="x"\n[[edges]]\nfrom="a"\nto="zz"\n', "unknown node 'zz'"),
        ('[[nodes]]\nid="a"\nprompt="x"\n[[nodes]]\nid="a"\nprompt="y"\n', "unique"),
        ('[[nodes]]\nid="a"\nprompt="x"\ncolour="red"\n', "nodes.0.colour"),
        ('[[nodes]]\nid="a"\nprompt="x"\nagent="copilot"\n', "nodes.0.agent"),
        ("[[nodes]\n", "not valid TOML"),
    ],
)
def test_bad_team_files_are_refused_naming_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    write_team(tmp_path, "t", text)
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(")):
        load_team(tmp_path, "t")


def test_show_says_in_plain_words_what_enforces_read_only(tmp_path: Path) -> None:
    write_team(
        tmp_path,
        "mixed",
        """
[[nodes]]
id = "a"
prompt = "review"
agent = "gemini"
read_only = true
[[nodes]]
id = "b"
prompt = "review"
agent = "codex"
read_only = true
[[edges]]
from = "a"
to = "b"
""",
    )
    run = run_arnes("-w", str(tmp_path), "team", "show", "mixed")
    assert run.code == 0
    assert "NOT enforced: gemini has no verified read-only flag" in run.out
    assert "enforced by codex's own flags: --sandbox read-only" in run.out
    assert "a -> b (at most 3 times)" in run.out
    listing = run_arnes("-w", str(tmp_path), "team", "list")
    assert "mixed  (.arnes/teams/mixed.toml)" in listing.out and "maker-checker  (built in)" in listing.out


# -- runs with a scripted model --------------------------------------------------------------


def team_timeline(ws: Path) -> list[dict[str, Any]]:
    runs = ws / ".arnes" / "teams" / "runs"
    first = {p: json.loads(p.read_text().splitlines()[0])["event"] for p in runs.glob("*.jsonl")}
    files = [p for p, event in first.items() if event in ("node_start", "parallel")]
    (path,) = files
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_script_team(ws: Path, tmp_path: Path, team: str, turns: list[dict[str, Any]], *flags: str) -> Any:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    return run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), *flags, "team", "run", team, "do it"
    )


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": inp}]}


READ_ONLY_TEAM = """
[[nodes]]
id = "review"
prompt = "Review only."
read_only = true
[[nodes]]
id = "write"
prompt = "Write the change."
[[edges]]
from = "review"
to = "write"
"""


def test_a_writer_that_runs_a_command_in_bubblewrap_is_credited_with_its_own_files_only(
    shop: Path, tmp_path: Path
) -> None:
    """bubblewrap makes empty mount points in the tree (features.json) that go when its sandbox
    stops; a node's sandbox stopped only when the team ended, so the writer "wrote" features.json."""
    from arnes.sandbox.bubblewrap import Bubblewrap
    from tests.test_sandbox import require

    require(Bubblewrap.unavailable())
    write_team(shop, "w", '[[nodes]]\nid = "write"\nprompt = "Write the change."\n')
    turns = [
        call("Read", file_path="pricing.py"),
        call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.15"),
        call("Bash", command="python -m unittest -q"),
        {"text": "changed the rate"},
    ]
    run = run_script_team(shop, tmp_path, "w", turns, "--permission-mode", "acceptEdits", "--sandbox", "bubblewrap",
                          "--no-self-check")  # fmt: skip
    assert run.code == 0, run.out + run.err
    [wrote] = [e for e in team_timeline(shop) if e["event"] == "node_wrote"]
    assert wrote["files"] == ["pricing.py"]
    assert not (shop / "features.json").exists()


def test_a_read_only_node_changes_nothing_and_a_writer_is_attributed(shop: Path, tmp_path: Path) -> None:
    write_team(shop, "rw", READ_ONLY_TEAM)
    before = (shop / "pricing.py").read_text()
    turns = [
        call("Read", file_path="pricing.py"),  # the reviewer...
        call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.99"),
        call("Write", file_path="new.py", content="x = 1\n"),
        call("Bash", command="echo hacked >> pricing.py"),
        {"text": "pricing.py:4 should be 0.15.\nVERDICT: PASS"},
        call("Read", file_path="pricing.py"),  # ...then the writer
        call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.15"),
        {"text": "changed the rate"},
    ]
    run = run_script_team(shop, tmp_path, "rw", turns, "--permission-mode", "bypass")
    assert run.code == 0, run.out + run.err
    assert (shop / "pricing.py").read_text() == before.replace("0.10", "0.15") and not (shop / "new.py").exists()
    events = team_timeline(shop)
    denied = [e for e in events if e["event"] == "node_denied"]
    assert [e["node"] for e in denied] == ["review", "review", "review"]
    assert [e["tool"] for e in denied] == ["Edit", "Write", "Bash"]
    assert "Unknown tool 'Edit'" in denied[0]["reason"] and "read-only" in denied[2]["reason"]
    wrote = [e for e in events if e["event"] == "node_wrote"]
    assert wrote == [wrote[0]] and wrote[0]["node"] == "write" and wrote[0]["files"] == ["pricing.py"]
    assert wrote[0]["read_only"] is False
    assert "node write wrote to the tree: pricing.py" in run.out
    (view,) = [p for p in (shop / ".arnes" / "teams" / "runs").glob("*.md")]
    readable = view.read_text()
    assert "node write wrote to the tree: pricing.py" in readable
    # The verdict says why, in the Markdown view and on screen: the reviewer's finding under its PASS.
    assert "review ends: PASS\n  > pricing.py:4 should be 0.15.\n  > VERDICT: PASS\n" in readable
    assert run.out.index("       pricing.py:4 should be 0.15.") > run.out.index("review ends: PASS")


def test_the_retry_edge_runs_and_stops_at_its_limit(shop: Path, tmp_path: Path) -> None:
    turns = [
        {"text": "implemented"}, {"text": "VERDICT: FAIL (round 1)"},
        {"text": "implemented again"}, {"text": "VERDICT: FAIL (round 2)"},
        {"text": "implemented a third time"}, {"text": "VERDICT: FAIL (round 3)"},
        {"text": "never reached"},
    ]  # fmt: skip
    run = run_script_team(shop, tmp_path, "maker-checker", turns)
    assert run.code == 4
    events = team_timeline(shop)
    assert [e["node"] for e in events if e["event"] == "node_start"] == ["implement", "check"] * 3
    assert [e["event"] for e in events][-2:] == ["edge_limit", "team_end"]
    assert events[-1]["status"] == "fail"
    starts = [e for e in events if e["event"] == "node_start" and e["node"] == "check"]
    assert all(e["read_only"] for e in starts)


# -- runs with fake external CLIs ------------------------------------------------------------

FAKE = """#!{python}
import json, os, sys
from pathlib import Path
name = Path(sys.argv[0]).name
with open(os.environ["FAKE_CLI_LOG"], "a") as log:
    log.write(json.dumps({{"cli": name, "argv": sys.argv[1:], "cwd": os.getcwd()}}) + "\\n")
prompt = next(a for a in sys.argv[1:] if "TASK" in a or "task" in a)
for line in prompt.splitlines():
    if line.startswith("WRITE "):
        target, text = line[6:].split(" ", 1)
        Path(target).write_text(text + "\\n")
print(f"{{name}} looked at it" + ("\\nVERDICT: FAIL" if "FAILME" in prompt else ""))
"""


@pytest.fixture
def fake_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "opencode", "gemini"):
        path = bin_dir / name
        path.write_text(FAKE.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "cli.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return log


PARALLEL = """
[[nodes]]
id = "start"
prompt = "Plan it."
agent = "claude"
read_only = true
[[nodes]]
id = "fix-a"
prompt = "WRITE shared.txt from a"
agent = "opencode"
[[nodes]]
id = "fix-b"
prompt = "WRITE shared.txt from b"
agent = "codex"
args = ["--sandbox", "workspace-write"]
[[nodes]]
id = "review"
prompt = "WRITE sneaky.txt reviewer was here"
agent = "gemini"
read_only = true
[[nodes]]
id = "docs"
prompt = "WRITE docs.txt documented"
agent = "codex"
[[edges]]
from = "start"
to = "fix-a"
[[edges]]
from = "start"
to = "fix-b"
[[edges]]
from = "start"
to = "review"
[[edges]]
from = "start"
to = "docs"
"""


def test_parallel_branches_conflicts_and_read_only_writers_are_caught(tmp_path: Path, fake_clis: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("original\n")
    write_team(ws, "par", PARALLEL)
    run = run_arnes("--trust", "-w", str(ws), "team", "run", "par", "the task")
    assert run.code == 4  # a conflict fails the run
    assert (ws / "shared.txt").read_text() == "original\n"  # conflicting writes are not applied
    assert (ws / "docs.txt").read_text() == "documented\n"  # the rest of the writing branches is
    assert not (ws / "sneaky.txt").exists()  # a read-only branch's writes never come back
    events = team_timeline(ws)
    conflict = next(e for e in events if e["event"] == "conflict")
    assert conflict["nodes"] == ["fix-a", "fix-b"] and conflict["files"] == ["shared.txt"]
    loud = next(e for e in events if e["event"] == "node_wrote" and e["node"] == "review")
    assert loud["read_only"] is True and loud["files"] == ["sneaky.txt"]
    assert "READ-ONLY NODE review WROTE TO THE TREE: sneaky.txt" in run.out
    calls = {
        json.loads(line)["argv"][-1][:8] + json.loads(line)["cli"]: json.loads(line)
        for line in fake_clis.read_text().splitlines()
    }
    codex_fix = next(c for c in calls.values() if c["cli"] == "codex" and "shared" in c["argv"][-1])
    assert codex_fix["argv"][:1] == ["exec"] and codex_fix["argv"].count("--sandbox") == 1
    assert codex_fix["argv"][codex_fix["argv"].index("--sandbox") + 1] == "workspace-write"  # a writer keeps its own
    claude = next(c for c in calls.values() if c["cli"] == "claude")
    assert "--disallowedTools" in claude["argv"] and READ_ONLY_SENTENCES in claude["argv"][1]
    assert all(c["cwd"] != str(ws) for c in calls.values() if c["cli"] != "claude")  # branches ran in copies


SOLO_READER = """
[[nodes]]
id = "look"
prompt = "WRITE notes.txt a read-only node wrote this"
agent = "gemini"
read_only = true
"""


def test_a_read_only_node_alone_cannot_keep_its_writes_and_fails_the_team(tmp_path: Path, fake_clis: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_team(ws, "solo", SOLO_READER)
    run = run_arnes("--trust", "-w", str(ws), "team", "run", "solo", "the task")
    assert run.code == 4 and not (ws / "notes.txt").exists()
    assert "READ-ONLY NODE look WROTE TO THE TREE: notes.txt" in run.out


READER_AND_WRITER = """
[[nodes]]
id = "start"
prompt = "plan"
agent = "claude"
read_only = true
[[nodes]]
id = "writer"
prompt = "WRITE shared.txt from the writer"
agent = "codex"
[[nodes]]
id = "reader"
prompt = "WRITE shared.txt from the reader"
agent = "codex"
read_only = true
[[edges]]
from = "start"
to = "writer"
[[edges]]
from = "start"
to = "reader"
"""


def test_a_read_only_branch_never_spoils_a_writers_change(tmp_path: Path, fake_clis: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("original\n")
    write_team(ws, "rw2", READER_AND_WRITER)
    run = run_arnes("--trust", "-w", str(ws), "team", "run", "rw2", "the task")
    assert (ws / "shared.txt").read_text() == "from the writer\n"
    events = team_timeline(ws)
    assert not [e for e in events if e["event"] == "conflict"]
    assert run.code == 4  # the reader still broke its role


SHIELD = """
[[nodes]]
id = "qa"
prompt = "review FAILME"
agent = "codex"
read_only = true
[[nodes]]
id = "security"
prompt = "review"
agent = "claude"
read_only = true
[[nodes]]
id = "gate"
prompt = "release"
agent = "opencode"
[[edges]]
from = "qa"
to = "gate"
[[edges]]
from = "security"
to = "gate"
"""


def test_a_failed_branch_fails_the_team_even_when_the_last_node_passes(tmp_path: Path, fake_clis: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_team(ws, "shield", SHIELD)
    run = run_arnes("--trust", "-w", str(ws), "team", "run", "shield", "the task")
    assert run.code == 4
    ends = {e["node"]: e["verdict"] for e in team_timeline(ws) if e["event"] == "node_end"}
    assert ends == {"qa": "fail", "security": "pass", "gate": "pass"}


def test_team_and_checker_limits_exit_3_and_a_dead_model_exits_1(shop: Path, tmp_path: Path) -> None:
    busy = [call("Glob", pattern="*")] * 10
    assert run_script_team(shop, tmp_path, "maker-checker", busy, "--max-turns", "2").code == 3
    script = tmp_path / "c.json"
    script.write_text(json.dumps({"turns": busy}))
    checker = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(shop), "--max-turns", "2", "checker", "x"
    )
    assert checker.code == 3 and "--max-turns 2" in checker.err
    dead = run_arnes("--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "-w", str(shop), "checker", "x",
                     env={"OPENAI_API_KEY": "x"})  # fmt: skip
    assert dead.code == 1 and "could not connect" in dead.err


def test_a_checker_that_passes_red_tests_does_not_pass_the_team(shop: Path, tmp_path: Path) -> None:
    turns = [{"text": "done"}, {"text": "Looks fine.\nVERDICT: PASS"}] * 3  # the tests want 15 % and get 10 %
    run = run_script_team(shop, tmp_path, "maker-checker", turns)
    assert run.code == 4
    ends = [e for e in team_timeline(shop) if e["event"] == "node_end" and e["node"] == "check"]
    assert ends and all(e["verdict"] == "fail" for e in ends)
    assert "python -m unittest -q` is red" in ends[0]["report"]


SETTINGS_WRITER = """
[[nodes]]
id = "sneak"
prompt = "WRITE .arnes/settings.json {}"
agent = "codex"
"""


def test_a_node_writing_arnes_settings_is_seen(tmp_path: Path, fake_clis: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    write_team(ws, "sneak", SETTINGS_WRITER)
    run_arnes("--trust", "-w", str(ws), "team", "run", "sneak", "the task")
    wrote = [e for e in team_timeline(ws) if e["event"] == "node_wrote"]
    assert wrote and wrote[0]["files"] == [".arnes/settings.json"]
