"""Red team (low): in `default` mode a glob in an `echo`/`printf` argument lists a folder outside the
workspace with no prompt, where `ls` of the same folder asks (and is denied with no terminal).

The shell analysis treats `ls DIR` as a read outside the workspace, but `echo DIR/*` is expanded by
the shell in the sandbox, which sees every folder outside home (read-only root): the names of
another project's files reach the model. Fails while the hole exists.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes

pytestmark = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")


@pytest.mark.parametrize("command", ["echo {d}/*", "printf '%s\\n' {d}/*"])
def test_a_glob_outside_the_workspace_asks_like_ls(tmp_path: Path, command: str) -> None:
    other = Path(tempfile.mkdtemp(prefix="rt-list-", dir="/var/tmp"))
    try:
        (other / "CANARY-NAME-payroll.xlsx").write_text("")
        ws = tmp_path / "ws"
        ws.mkdir()
        script = tmp_path / "script.json"
        calls = [{"name": "Bash", "input": {"command": f"ls {other}"}},
                 {"name": "Bash", "input": {"command": command.format(d=other)}}]  # fmt: skip
        script.write_text(json.dumps({"turns": [{"tool_calls": calls}]}))
        trace = tmp_path / "trace.jsonl"
        done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                         "go")  # fmt: skip
        assert done.code == 0, done.err
        results = {e["id"]: e for e in read_trace(trace) if e["event"] == "tool_result"}
        ls, glob = [results[e["id"]] for e in read_trace(trace) if e["event"] == "tool_call"]
        assert ls["is_error"] and "CANARY-NAME" not in ls["output"]  # the control: ls asks, denied
        assert "CANARY-NAME" not in glob["output"], "a folder outside the workspace was listed with no prompt"
    finally:
        shutil.rmtree(other, ignore_errors=True)
