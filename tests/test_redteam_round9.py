"""Red team, round 9 (docs/redteam/round9.md): programs arnes runs on the host found in an
activated workspace venv, FIFOs where arnes reads on the host, the host git route with sparse
checkout, a parser that backtracks. Each test fails before its fix."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from arnes.adapt.formats.search_replace import changes
from arnes.host.paths import HOST_PATH, host_program, note_host_path
from arnes.tools.filestate import FileStateCache
from tests.conftest import run_arnes
from tests.test_e2e_git_host import ALLOW, SANDBOX, plain_git
from tests.test_e2e_git_host import ws as ws  # the fixture: a repository with one commit


def planted(folder: Path, name: str, marker: Path) -> None:
    """A `name` in `folder` that leaves `marker` behind (outside the workspace: only a host run can)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f'#!/bin/sh\necho ran >> {marker}\nexec /usr/bin/{name} "$@"\n')
    (folder / name).chmod(0o755)


def scripted(tmp_path: Path, ws: Path, commands: list[str], *flags: str, env: dict[str, str] | None = None) -> str:
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands] + [{"text": "done"}]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), *flags, "go",
                     env={**SANDBOX, **(env or {})})  # fmt: skip
    assert done.code == 0, done.err
    return done.out + done.err


def test_a_git_in_an_activated_workspace_venv_never_runs_on_the_host(ws: Path, tmp_path: Path) -> None:
    """12: the user's `.venv/bin` (in the workspace, writable by commands) is first on PATH; arnes
    copies ~/.gitconfig for each sandbox with `git config --file`, which found that git."""
    marker = tmp_path / "host-git-ran"
    planted(ws / ".venv" / "bin", "git", marker)
    path = f"{ws / '.venv' / 'bin'}:{os.environ['PATH']}"
    scripted(tmp_path, ws, ["ls", "git status --short"], env={"PATH": path, "VIRTUAL_ENV": str(ws / ".venv")})
    assert not marker.exists()


def test_host_programs_are_looked_for_away_from_the_workspace(tmp_path: Path) -> None:
    """13: the same for `rg` where it is not beside arnes's Python (a `pip install --user`)."""
    ws = tmp_path / "ws"
    planted(ws / ".venv" / "bin", "rg", tmp_path / "m")
    environ = {"PATH": f"{ws / '.venv' / 'bin'}:relative:/usr/bin:/bin"}
    note_host_path(environ, ws)
    assert environ[HOST_PATH] == "/usr/bin:/bin"
    saved = os.environ.get(HOST_PATH)
    os.environ[HOST_PATH] = f"{ws / '.venv' / 'bin'}"
    try:
        assert host_program("rg") == str(ws / ".venv" / "bin" / "rg")  # what PATH alone would find
        os.environ[HOST_PATH] = environ[HOST_PATH]
        assert host_program("rg") != str(ws / ".venv" / "bin" / "rg")
    finally:
        if saved is None:
            del os.environ[HOST_PATH]
        else:
            os.environ[HOST_PATH] = saved


def test_a_fifo_for_pyvenv_cfg_does_not_hold_the_sandbox(tmp_path: Path) -> None:
    """01: the sandbox reads a workspace venv's pyvenv.cfg on the host to bind its interpreter."""
    ws = tmp_path / "ws"
    (ws / ".venv" / "bin").mkdir(parents=True)
    os.mkfifo(ws / ".venv" / "pyvenv.cfg")
    out = scripted(tmp_path, ws, ["echo SANDBOXED-RAN"], "--permission-mode", "acceptEdits")
    assert "SANDBOXED-RAN" in out or "done" in out


def test_a_fifo_in_place_of_a_read_file_is_a_changed_file_not_a_hang(tmp_path: Path) -> None:
    """02: an empty file read, then a FIFO with its size and time put there by a command."""
    path = tmp_path / "empty.txt"
    path.write_text("")
    cache = FileStateCache()
    cache.record(path)
    st = path.stat()
    path.unlink()
    os.mkfifo(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cache.unwritable(path) == "modified"


def test_the_host_route_does_not_run_with_sparse_checkout(ws: Path, tmp_path: Path) -> None:
    """08, 17: with core.sparseCheckout, `git checkout -q -b` applies the repository's patterns on
    the host: it deleted a file an Edit deny rule keeps, and checked files out into .arnes/."""
    (ws / "migrations").mkdir()
    (ws / "migrations" / "0001.sql").write_text("CREATE TABLE t;\n")
    plain_git(ws, "add", "-A")
    plain_git(ws, "commit", "-qm", "migrations")
    plain_git(ws, "config", "core.sparseCheckout", "true")
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "sparse-checkout").write_text("/*\n!/migrations/\n")
    flags = ["--permission-mode", "acceptEdits", "--deny", "Edit(migrations/**)", *ALLOW]
    scripted(tmp_path, ws, ["git checkout -q -b wip"], *flags)
    assert (ws / "migrations" / "0001.sql").read_text() == "CREATE TABLE t;\n"
    head = subprocess.run(["git", "symbolic-ref", "--short", "HEAD"], cwd=ws, capture_output=True, text=True)
    assert head.stdout.strip() == "main"  # not made on the host (nor in the sandbox: .git is read-only there)


def test_search_replace_blocks_are_read_in_one_pass() -> None:
    """18: 1,200 SEARCH/divider pairs and no REPLACE took the old pattern minutes (cubic backtracking)."""
    assert changes("<<<<<<< SEARCH\n=======\n" * 1200) == []
    reply = "a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n"
    [change] = changes("<<<<<<< SEARCH\nunfinished\n" + reply)
    assert (change.path, change.search, change.replace) == ("a.py", "x = 1\n", "x = 2\n")
