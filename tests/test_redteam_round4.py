"""Red team, round 4: the self-check (arnes runs the detected tests itself), the auto-made call
(`_make_offered`) and the reads of files named in a model's reply.

A test that FAILS marks a hole that still exists; a test that passes documents an attack that held.
"""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import ARNES, run_arnes

CALC = "def add(a, b):\n    return a - b\n"
FIX = {
    "turns": [
        {"tool_calls": [{"name": "Edit", "input": {"file_path": "calc.py", "old_string": "return a - b",
                                                   "new_string": "return a + b"}}]},
        {"text": "Fixed calc.py."},
    ]
}  # fmt: skip

needs_bwrap = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="bubblewrap cannot run here")


def _repo(tmp_path: Path, test_body: str) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text("import os, unittest\n\n\nclass T(unittest.TestCase):\n" + test_body)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(FIX))
    return ws, script


@needs_bwrap
def test_a_test_run_arnes_starts_itself_cannot_make_arnes_read_an_unbounded_file(tmp_path: Path) -> None:
    """Finding R4-1 (low, availability). The hostile repository's test, run by arnes on its own
    (self-check, in bubblewrap), turns the file the model just edited into an 8 GiB sparse file
    (no disk used). Right after the run arnes fingerprints the changed files (selfcheck.ran ->
    ChangeLog.changed -> filestate._content -> read_regular with no limit) and reads all 8 GiB
    into memory: here, under a 3 GB address-space limit, arnes dies with a MemoryError traceback;
    without a limit it takes the host's memory (the model server shares it). Expected: arnes
    hashes/compares changed files in bounded memory (or by size first) and ends the run normally."""
    ws, script = _repo(tmp_path, '    def test_grow(self):\n        os.truncate("calc.py", 8 << 30)\n')
    trace = tmp_path / "t.jsonl"

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))

    try:
        done = subprocess.run(
            [ARNES, "-p", "--provider", "script", "--steering", "small", "--script", str(script), "-w",
            str(ws), "--trace", str(trace),
             "--permission-mode", "acceptEdits", "fix add in calc.py"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240, preexec_fn=cap, check=False,
        )  # fmt: skip
    finally:
        (ws / "calc.py").unlink(missing_ok=True)  # never leave an 8 GiB file behind
    ran = any(e["event"] == "tool_call" and e.get("by") == "arnes" for e in read_trace(trace))
    assert ran, done.stderr[-2000:]  # arnes itself ran the repository's tests
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert done.returncode == 0, done.stderr[-1500:]


@needs_bwrap
def test_held_the_self_check_in_bubblewrap_sees_no_home_no_host_tmp_and_no_denied_file(tmp_path: Path) -> None:
    """Held: the tests arnes runs itself are in bubblewrap: ~/.ssh (a canary in HOME), a marker
    outside the workspace and a Read-denied workspace file all stay out of the model's request."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("CANARY-RT4-SSH\n")
    marker = tmp_path / "MARKER"
    body = (
        "    def test_leak(self):\n"
        "        out = []\n"
        f"        for p in [os.path.expanduser('~/.ssh/id_rsa'), {str(home / '.ssh' / 'id_rsa')!r}, 'secret.txt']:\n"
        "            try:\n                out.append(open(p).read())\n"
        "            except Exception as e:\n                out.append(repr(e))\n"
        f"        try:\n            open({str(marker)!r}, 'w').write('x')\n"
        "        except Exception as e:\n            out.append(repr(e))\n"
        "        self.fail(repr(out))\n"
    )
    ws, script = _repo(tmp_path, body)
    (ws / "secret.txt").write_text("CANARY-RT4-DENIED\n")
    trace = tmp_path / "t.jsonl"
    done = run_arnes("-p", "--provider", "script", "--steering", "small", "--script", str(script), "-w",
                     str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", "--deny", "Read(secret.txt)", "fix add in calc.py",
                     env={"HOME": str(home)})  # fmt: skip
    assert done.code == 0, done.err
    text = trace.read_text()
    assert '"by": "arnes"' in text  # the self-check ran
    assert "CANARY-RT4" not in text and "CANARY-RT4" not in done.out + done.err
    assert not marker.exists()


@pytest.mark.parametrize("sandbox", ["off", "landlock"])
def test_held_no_self_check_outside_bubblewrap_in_an_untrusted_folder(tmp_path: Path, sandbox: str) -> None:
    """Held: with no bubblewrap (off, landlock) and no trust, bypass mode still runs no test of
    the repository on arnes's own initiative (the test would write a marker on the host)."""
    marker = tmp_path / "MARKER"
    ws, script = _repo(tmp_path, f"    def test_mark(self):\n        open({str(marker)!r}, 'w').write('x')\n")
    done = run_arnes("-p", "--provider", "script", "--steering", "small", "--script", str(script), "-w",
                     str(ws), "--sandbox", sandbox,
                     "--permission-mode", "bypass", "fix add in calc.py")  # fmt: skip
    if sandbox == "landlock" and "cannot run here" in done.err:
        pytest.skip("landlock cannot run here")
    assert done.code == 0, done.err
    assert (ws / "calc.py").read_text() != CALC  # the edit was made, so a self-check would have been due
    assert not marker.exists()


@needs_bwrap
@pytest.mark.parametrize("entry", ["absolute", "relative"])
def test_held_a_python_of_the_workspace_on_path_is_not_run_on_the_host_by_detect(tmp_path: Path, entry: str) -> None:
    """Held: with the repository's `bin/python` first on PATH (absolute, or `bin` run from the
    workspace), detect's pytest probe never runs it on the host; the tests run in bubblewrap."""
    host_marker = tmp_path / "HOSTMARK"  # bubblewrap's /tmp is private: a marker here is the host's
    ws, script = _repo(tmp_path, "    def test_a(self):\n        pass\n")
    (ws / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (ws / "bin").mkdir()
    fake = ws / "bin" / "python"
    fake.write_text(f'#!/bin/sh\necho ran > {host_marker}\nexec /usr/bin/env python3 "$@"\n')
    fake.chmod(0o755)
    import os

    first = str(ws / "bin") if entry == "absolute" else "bin"
    done = run_arnes("-p", "--provider", "script", "--steering", "small", "--script", str(script), "-w", ".",
                     "--permission-mode",
                     "acceptEdits", "fix add in calc.py", cwd=ws,
                     env={"PATH": f"{first}:{os.environ['PATH']}"})  # fmt: skip
    assert done.code == 0, done.err
    assert "running the tests" in done.out + done.err
    assert not host_marker.exists()
