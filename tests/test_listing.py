"""The workspace's files in the session context: what Glob would show, never what a rule hides."""

from __future__ import annotations

import json
import os
from pathlib import Path

from arnes.agent.listing import listing
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer


def test_the_first_message_lists_the_files_glob_would_show(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "secrets").mkdir()
    (ws / "build").mkdir()
    (ws / "pricing.py").write_text("DISCOUNT_RATE = 0.10\n")
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build" / "out-artifact.txt").write_text("x\n")
    (ws / "secrets" / "api-key-name.txt").write_text("x\n")
    outside = Path(os.environ["HOME"]) / "home-private-name.txt"
    outside.write_text("x\n")
    (ws / "linked.txt").symlink_to(outside)
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model",
            "--deny", "Read(secrets/**)", "-w", str(ws), "go", env={"OPENAI_API_KEY": "x"},
        )  # fmt: skip
        first = json.dumps(server.requests[0][1]["messages"][1])
        system = json.dumps(server.requests[0][1]["messages"][0])
    assert run.code == 0, run.err
    assert "Files in the workspace (3): .gitignore, pkg/mod.py, pricing.py." in first
    for hidden in ("api-key-name", "out-artifact", "home-private-name", "linked.txt"):
        assert hidden not in first
    assert "pricing.py" not in system  # the fixed prompt stays fixed


def test_a_big_workspace_is_capped_shallow_files_first(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    for i in range(70):
        (tmp_path / "deep" / "er" / f"f{i:02}.py").write_text("")
    (tmp_path / "main.py").write_text("")
    line = listing(tmp_path, None, cap=10)
    assert line.startswith("Files in the workspace (71): deep/er/f00.py")
    assert "main.py" in line and line.endswith("... and 61 more (use Glob).")
