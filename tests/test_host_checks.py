"""The project's own commands that arnes runs itself (the ladder, handoff, a team's verify, an eval's
verify) run in the agent's sandbox: a hostile Makefile cannot read the home folder or write outside.
Found by the red team: they ran on the host, unconfined."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.test_sandbox import require

HOSTILE = "test:\n\tcat $$HOME/.ssh/id_rsa > {out}/stolen; touch {out}/ran-on-host\n"


def hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    ws, out = tmp_path / "repo", tmp_path / "outside"
    ws.mkdir()
    out.mkdir()
    (ws / "Makefile").write_text(HOSTILE.format(out=out))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    return ws, out


def test_check_handoff_and_a_team_run_the_repositorys_tests_in_the_sandbox(tmp_path: Path) -> None:
    require(Bubblewrap.unavailable())
    ws, out = hostile_repo(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}, {"text": "VERDICT: PASS"}]}))
    runs = {
        "check": run_arnes("-w", str(ws), "check"),
        "handoff": run_arnes("-w", str(ws), "handoff"),
        "team": run_arnes(
            "-w",
            str(ws),
            "--provider",
            "script",
            "--script",
            str(script),
            "team",
            "run",
            "maker-checker",
            "fix the tests",
        ),
    }
    for name, run in runs.items():
        assert "Traceback" not in run.err, (name, run.err)
        assert not (out / "ran-on-host").exists() and not (out / "stolen").exists(), name
    assert "red" in runs["check"].out  # it ran, and the sandbox refused the write outside


def test_without_bubblewrap_an_untrusted_folders_commands_do_not_run(tmp_path: Path) -> None:
    ws, out = hostile_repo(tmp_path)
    for args in (("check",), ("handoff",)):
        run = run_arnes("-w", str(ws), "--sandbox", "off", *args)
        assert run.code == 2 and "in a folder you have not trusted" in run.err, run.err
    assert not (out / "ran-on-host").exists()
    trusted = run_arnes("-w", str(ws), "--sandbox", "off", "--trust", "check")
    assert (out / "ran-on-host").exists() and trusted.code == 0  # the user's choice, said out loud


def test_an_eval_tasks_verify_runs_in_the_sandbox(tmp_path: Path) -> None:
    require(Bubblewrap.unavailable())
    out = tmp_path / "outside"
    out.mkdir()
    task = tmp_path / "evals" / "t1"
    (task / "workspace").mkdir(parents=True)
    (task / "task.md").write_text("hi\n")
    (task / "verify").write_text(f"touch {out}/ran-on-host; cat $HOME/.ssh/id_rsa > {out}/stolen\n")
    (task / "script.json").write_text(json.dumps({"turns": [{"text": "done"}]}))
    run = run_arnes("--provider", "script", "eval", str(tmp_path / "evals"))
    assert "Traceback" not in run.err
    assert not (out / "ran-on-host").exists() and not (out / "stolen").exists()


def test_an_eval_tasks_name_reaches_the_error_line_escaped(tmp_path: Path) -> None:
    task = tmp_path / "evals" / "t\x1b[31mx"
    (task / "workspace").mkdir(parents=True)
    (task / "task.md").write_text("hi\n")
    (task / "verify").write_text("true\n")
    # no script.json: the run errors, and the error line names the task
    run = run_arnes("--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "eval", str(tmp_path / "evals"))
    assert run.code != 0 and "\x1b" not in run.out + run.err and "t\\x1b[31mx" in run.err
