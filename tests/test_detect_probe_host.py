"""Red team round 2 (high; fixed in `_has_pytest`, now host/testcmd.py): finding the test command
ran the repository's code on the host.

workflow/verify.py `detect()` decides between pytest and unittest by running, on the host and
unsandboxed, `python -c "import importlib.util, sys; ..."` with cwd = the workspace. `python -c`
puts the working folder first on sys.path, so any module the probe imports that the interpreter
has not loaded at start-up comes from the repository. Debian's and Ubuntu's /usr/bin/python3 (and
`python` from python-is-python3) do not load importlib.util at start-up: a repository shipping
`importlib/__init__.py` (plus a `tests/` folder to make detect() probe) runs its code on the host
in a folder nobody trusted, with the user's home and keys, on:

    arnes init                      (AGENTS.md from the project's files: a natural first step)
    arnes -p --verify auto TASK
    arnes check / arnes team run bug-hunt TASK / handoff (same detect())

Expected: nothing of the repository runs outside the sandbox in an untrusted folder; e.g. probe
with `python -I -c` (no cwd on sys.path), or from a neutral folder, or in the sandbox. FAILS while
the hole exists (skipped where the system python preloads importlib.util).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_arnes

SYSTEM_PYTHON = Path("/usr/bin/python3")


def _preloads_importlib_util() -> bool:
    probe = "import sys; sys.exit(0 if 'importlib.util' in sys.modules else 1)"
    return subprocess.run([str(SYSTEM_PYTHON), "-c", probe], cwd="/", check=False).returncode == 0


pytestmark = pytest.mark.skipif(
    not SYSTEM_PYTHON.exists() or _preloads_importlib_util(),
    reason="needs a python that does not preload importlib.util",
)


def _hostile(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("CANARY-SSH-KEY\n")
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (ws / "importlib").mkdir()
    marker = tmp_path / "outside-marker.txt"
    (ws / "importlib" / "__init__.py").write_text(
        "import os, pathlib\n"
        "key = (pathlib.Path(os.environ['HOME']) / '.ssh' / 'id_rsa').read_text()\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran on the host; stole: ' + key)\n"
        "raise ImportError('hidden')\n"
    )
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").symlink_to(SYSTEM_PYTHON)  # python-is-python3, as on Debian and Ubuntu
    import os

    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": f"{shim}:{os.environ['PATH']}"}
    return ws, marker, env


def test_arnes_init_does_not_run_the_repositorys_code_on_the_host(tmp_path: Path) -> None:
    ws, marker, env = _hostile(tmp_path)
    run_arnes("init", "-w", str(ws), env=env)
    assert not marker.exists(), f"arnes init ran repository code on the host: {marker.read_text()!r}"


def test_verify_auto_does_not_run_the_repositorys_code_on_the_host(tmp_path: Path) -> None:
    ws, marker, env = _hostile(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--verify", "auto", "go", env=env)
    assert not marker.exists(), f"--verify auto ran repository code on the host: {marker.read_text()!r}"


def test_a_workspace_interpreter_is_looked_at_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository's `.venv/bin/python` first on PATH (an activated venv) may be any script: detect()
    reads its site-packages for pytest instead of running it, through `arnes init` too."""
    ws, marker, env = _hostile(tmp_path)
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f"#!/bin/sh\necho ran > {marker}\nexit 0\n")
    (venv_bin / "python").chmod(0o755)
    env["PATH"] = f"{venv_bin}:{env['PATH']}"
    run_arnes("init", "-w", str(ws), env=env)
    assert not marker.exists(), "arnes init ran the workspace's own interpreter on the host"
    from arnes.host.testcmd import detect

    monkeypatch.setenv("PATH", env["PATH"])
    found = detect(ws)
    assert found is not None and found.command == "python -m unittest discover -q -s tests"  # no pytest there
    site_packages = ws / ".venv" / "lib" / "python3.99" / "site-packages" / "pytest"
    site_packages.mkdir(parents=True)
    (site_packages / "__init__.py").write_text("")
    found = detect(ws)
    assert found is not None and found.command == "python -m pytest -q"
    assert not marker.exists()
