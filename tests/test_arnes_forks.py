"""The suite's fork server gives a test what a new `arnes` process gives it: the same output, exit
code and streams, the test's environment and folder, and a time-out that kills the run."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ARNES, run_arnes
from tests.fakes.arnes_forks import ArnesForks


def _both(tmp_path: Path, args: list[str], settings: str = "") -> dict[str, tuple[int, str, str]]:
    """The run forked and the run as a new process, each in a fresh workspace and home of its own,
    with the folder's name and the durations taken out of what they printed."""
    runs = {}
    for how in ("forked", "plain"):
        ws, home = tmp_path / how / "ws", tmp_path / how / "home"
        ws.mkdir(parents=True)
        (home / ".claude").mkdir(parents=True)
        if settings:
            (home / ".claude" / "settings.json").write_text(settings)
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1"}
        if how == "forked":
            code, out, err = ArnesForks().run([ARNES, *args], str(ws), env, 60)
        else:
            done = subprocess.run([ARNES, *args], cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=60, check=False)  # fmt: skip
            code, out, err = done.returncode, done.stdout, done.stderr
        runs[how] = (code, _steady(out, ws), _steady(err, ws))
    return runs


def _steady(text: str, ws: Path) -> str:
    return re.sub(r"\d+(\.\d+)? ?m?s\b", "T", text.replace(str(ws), "WS"))


def _script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    return str(script)


def test_a_forked_run_prints_and_ends_as_a_new_process(tmp_path: Path) -> None:
    write = {"name": "Write", "input": {"file_path": "out.txt", "content": "made\n"}}
    script = _script(tmp_path, [{"tool_calls": [write]}, {"text": "written"}])
    runs = _both(tmp_path, ["-p", "--provider", "script", "--script", script, "--permission-mode", "acceptEdits", "go"])
    assert runs["forked"] == runs["plain"]
    assert runs["forked"][0] == 0 and "written" in runs["forked"][1]
    assert (tmp_path / "forked" / "ws" / "out.txt").read_text() == "made\n"  # in the test's folder


def test_a_forked_run_takes_the_tests_environment(tmp_path: Path) -> None:
    # The user's settings in this test's home are read there: the server imported with no home.
    script = _script(tmp_path, [{"text": "hello"}])
    runs = _both(tmp_path, ["-p", "--provider", "script", "--script", script, "hi"],
                 settings='{"permissions": {"defaultMode": "acceptEdits"}}')  # fmt: skip
    assert runs["forked"] == runs["plain"]
    assert runs["forked"][0] == 0 and "mode: acceptEdits" in runs["forked"][1]


def test_a_run_past_its_time_is_killed(tmp_path: Path) -> None:
    sleep = {"name": "Bash", "input": {"command": "sleep 600", "timeout": 600000}}
    script = _script(tmp_path, [{"tool_calls": [sleep]}])
    with pytest.raises(subprocess.TimeoutExpired):
        run_arnes("-p", "--provider", "script", "--script", script, "-w", str(tmp_path),
                  "--permission-mode", "bypass", "go", timeout=5)  # fmt: skip
