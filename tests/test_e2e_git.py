"""git through the real `arnes`, headless (an ask is a denial), in a repository that tracks a `.env`
the built-in secret rules hide: read-only git and allowed git run, nothing prints the secret."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes

QUIET = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"]


def git(ws: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=ws, env=QUIET, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """`.env` committed, then changed (unstaged) with a.txt; the user's git knows who commits."""
    (Path(os.environ["HOME"]) / ".gitconfig").write_text("[user]\n\tname = a\n\temail = a@b\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".env").write_text("SECRET=hunter2\n")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    (ws / ".env").write_text("SECRET=hunter3\n")
    (ws / "a.txt").write_text("a\nb\n")
    return ws


def scripted(ws: Path, tmp_path: Path, commands: list[str], *flags: str) -> list[tuple[str, str, str]]:
    """Each command as one Bash call of a scripted model: (command, decision, output)."""
    script, trace = tmp_path / "script.json", tmp_path / "trace.jsonl"
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands]
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     *flags, "go")  # fmt: skip
    assert done.code == 0, done.err
    events = read_trace(trace)
    decisions = [e["decision"] for e in events if e["event"] == "permission"]
    outputs = [str(e["output"]) for e in events if e["event"] == "tool_result"]
    assert len(decisions) == len(outputs) == len(commands), (decisions, outputs)
    return list(zip(commands, decisions, outputs, strict=True))


def test_git_runs_as_allowed_and_never_prints_the_hidden_file(ws: Path, tmp_path: Path) -> None:
    blob = git(ws, "rev-parse", "HEAD:.env").strip()
    expected = {
        "git status": "allow",
        "git diff -- a.txt": "allow",
        "git diff": "deny",  # .env changed: its diff would print both secrets
        "git add a.txt": "allow",
        "git commit -m 'add b'": "allow",
        "git log --oneline": "allow",
        "git show": "allow",  # the new commit touches a.txt only
        "git branch": "allow",
        "git show HEAD:.env": "deny",
        "git diff -- .env": "deny",
        "git log -p": "deny",
        "git grep -n hunter": "deny",
        f"git cat-file -p {blob}": "deny",  # asks: no terminal
        "git archive HEAD": "deny",
        "git -c core.pager=cat log -p": "deny",
    }
    results = scripted(ws, tmp_path, list(expected), "--sandbox", "off", "--allow", "Bash(git add:*)",
                       "--allow", "Bash(git commit:*)")  # fmt: skip
    assert [(c, d) for c, d, _ in results] == list(expected.items())
    assert not [c for c, _, out in results if "hunter" in out]
    shown = dict((c, out) for c, _, out in results)
    assert "modified:   .env" in shown["git status"] and "+b" in shown["git diff -- a.txt"]
    assert "add b" in shown["git log --oneline"] and "+b" in shown["git show"]
    assert "Read(**/.env)" in shown["git diff"] and "':!.env'" in shown["git diff"]
    assert git(ws, "log", "-1", "--format=%s").strip() == "add b"


def test_read_only_git_runs_in_the_sandbox_and_the_history_stays_hidden(ws: Path, tmp_path: Path) -> None:
    problem = Bubblewrap.unavailable()
    if problem:
        pytest.skip(problem)
    commands = ["git status --short", "git diff -- a.txt", "git log --stat", "git show HEAD:.env", "git log -p"]
    results = scripted(ws, tmp_path, commands, "--sandbox", "bubblewrap")
    assert [d for _, d, _ in results] == ["allow", "allow", "allow", "deny", "deny"]
    assert "a.txt" in results[0][2] and "+b" in results[1][2] and ".env" in results[2][2]
    assert not [c for c, _, out in results if "hunter" in out]


def test_permissions_check_names_what_git_would_show(ws: Path) -> None:
    checks = {
        ("--allow", "Bash(git commit:*)", "git commit -m x"): "allow: rule Bash(git commit:*) (from flag)",
        ("git diff -- a.txt",): "allow: read-only command",
        ("git diff",): "deny: git diff would show .env (rule Read(**/.env)); name the paths to show",
        ("git show HEAD:.env",): "deny: rule Read(**/.env) (from built in: secrets)",
    }
    for (*flags, command), line in checks.items():
        done = run_arnes(*flags, "permissions", "check", "Bash", command, cwd=ws)
        assert done.code == 0 and done.out.startswith(line), (command, done.out, done.err)
