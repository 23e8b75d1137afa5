"""`arnes init` and `arnes doctor`: what a new user runs first, and the .arnes/ folder git ignores."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.fakes.llm_server import MODELS, FakeLLMServer
from tests.test_sandbox import require


def test_init_writes_agents_md_from_the_project_and_an_ignored_dot_arnes(shop: Path) -> None:
    (shop / "AGENTS.md").unlink()
    (shop / "README.md").write_text("# Shop\n\nA tiny order-pricing library.\n")
    run = run_arnes("-w", str(shop), "init")
    assert run.code == 0, run.err
    text = (shop / "AGENTS.md").read_text()
    assert "A tiny order-pricing library." in text and "`python -m unittest -q`" in text and "Python" in text
    assert (shop / ".arnes" / ".gitignore").is_file()
    again = run_arnes("-w", str(shop), "init")
    assert again.code == 0 and "exists; kept it" in again.out and (shop / "AGENTS.md").read_text() == text


def test_dot_arnes_run_time_files_stay_out_of_git(shop: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=shop, check=True)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    assert run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "x").code == 0
    assert list((shop / ".arnes" / "traces").glob("*.jsonl"))
    status = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=shop, capture_output=True, text=True)
    listed = status.stdout.splitlines()
    assert not [line for line in listed if "traces" in line], listed
    assert "?? .arnes/.gitignore" in listed  # the ignore file itself is shared


def test_doctor_names_what_is_missing_with_its_fix(shop: Path) -> None:
    run = run_arnes("-w", str(shop), "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "doctor")
    assert run.code == 1
    assert "no server answers at http://127.0.0.1:9/v1" in run.out and "fix: start the server" in run.out
    assert "ripgrep: ok" in run.out and "project instructions: ok: AGENTS.md" in run.out


def test_doctor_is_green_with_a_server_that_has_the_model(shop: Path) -> None:
    require(Bubblewrap.unavailable())
    with FakeLLMServer([]) as server:
        base = f"{server.url}/v1"
        model = ("--provider", "openai", "--base-url", base, "--model", MODELS[0]["id"])
        good = run_arnes("-w", str(shop), *model, "doctor")
        off = run_arnes("-w", str(shop), *model, "--sandbox", "off", "doctor")
        wrong = run_arnes("-w", str(shop), "--provider", "openai", "--base-url", base, "--model", "nope", "doctor")
    assert good.code == 0 and f"server at {base} answers" in good.out and "sandbox: ok: bubblewrap" in good.out
    assert off.code == 1 and "sandbox: missing: off by setting" in off.out  # off is named, with its fix
    assert wrong.code == 1 and "it has no model 'nope'" in wrong.out
