"""Red team, round 7 (docs/redteam/round7.md): the git host route against a repository that races
its checks, ships index bits, or plants programs on PATH. Each test fails before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arnes.host.freeze import held
from arnes.host.git import SAFE_CONFIG, environment, repository, run_git
from arnes.host.gitwrite import contained
from arnes.host.paths import user_program_env
from tests.test_e2e_git_host import ALLOW, bash, git, plain_git, scripted
from tests.test_e2e_git_host import ws as ws  # the fixture: a repository with one commit


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2 :].split()[0]


def test_held_stops_every_descendant_until_the_block_ends() -> None:
    """Children and grandchildren are stopped for the block, and go on after it."""
    code = (
        "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'input()']); "
        "print(p.pid, flush=True); input()"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    grandchild = int(child.stdout.readline())
    try:
        with held() as count:
            assert count >= 2
            assert _state(child.pid) == "T" and _state(grandchild) == "T"
        assert _state(child.pid) != "T" and _state(grandchild) != "T"
    finally:
        child.stdin.write("\n")
        child.stdin.close()
        child.kill()
        os.kill(grandchild, 9)
        child.wait()


def test_a_background_job_in_the_sandbox_is_held_while_git_runs_on_the_host(ws: Path, tmp_path: Path) -> None:
    """02, 05, 11: a job started earlier in the sandbox waited for arnes's checks and changed the
    tree (`.gitignore`, an included config file) before git read it. The user's own filter runs
    inside that window and records the job's state: stopped."""
    seen = tmp_path / "seen"
    probe = tmp_path / "probe"
    probe.write_text(
        f"#!/bin/sh\nfor p in $(pgrep -f 'sleep 31337'); do cut -d' ' -f3 /proc/$p/stat; done >> {seen}\ncat\n"
    )
    probe.chmod(0o755)
    with open(Path(os.environ["HOME"]) / ".gitconfig", "a") as config:
        config.write(f'[filter "probe"]\n\tclean = {probe}\n')
    (ws / ".gitattributes").write_text("*.bin filter=probe\n")
    (ws / "x.bin").write_text("data\n")
    calls = [{"name": "Bash", "input": {"command": "sleep 31337", "run_in_background": True}}, bash("git add x.bin")]
    results = scripted(ws, tmp_path, calls, *ALLOW, "--allow", "Bash(sleep:*)")
    assert "Started background" in results[0][1] or "bash_" in results[0][1], results[0][1]
    assert results[1][1].startswith("exit code: 0"), results[1][1]
    states = seen.read_text().split()
    assert states and set(states) == {"T"}, states
    assert "x.bin" in git(ws, "diff", "--cached", "--name-only")


def test_a_hidden_file_the_index_marks_unchanged_is_never_stored(ws: Path, tmp_path: Path) -> None:
    """01: the repository tracks `.env` as a dummy with the assume-unchanged bit; the user's real
    key goes in it; `git commit -- .` ignores the bit. The check judges content, not the bit."""
    (ws / ".env").write_text("KEY=dummy\n")
    plain_git(ws, "add", "-f", ".env")
    plain_git(ws, "commit", "-qm", "dummy env")
    plain_git(ws, "update-index", "--assume-unchanged", ".env")
    (ws / ".env").write_text("KEY=real-secret\n")
    (ws / "a.py").write_text("changed\n")
    results = scripted(ws, tmp_path, [bash("git commit -m wip -- ."), bash("git commit -am wip")], *ALLOW)
    for _, output in results:
        assert "was not run" in output and ".env" in output and "a Read rule hides" in output, output
    assert "real-secret" not in plain_git(ws, "log", "-p", "--all").stdout


def test_git_on_the_host_finds_no_program_in_the_workspace(ws: Path) -> None:
    """03, 12: an activated `.venv/bin` inside the workspace is first on PATH and writable in the
    sandbox; git starts `git-lfs` by name, a user's unsandboxed hook starts `ruff` by name."""
    venv = ws / ".venv" / "bin"
    venv.mkdir(parents=True)
    path = f"{venv}:{os.environ['PATH']}"
    repo = repository(ws)
    assert not isinstance(repo, str)
    os.environ["PATH"], saved = path, os.environ["PATH"]
    try:
        env = environment(repo)
    finally:
        os.environ["PATH"] = saved
    assert str(venv) not in env["PATH"].split(os.pathsep) and "/usr/bin" in env["PATH"]
    hook = user_program_env({"PATH": path, "PYTHONPATH": f"{ws}/src:/opt/lib"}, ws)
    assert str(venv) not in hook["PATH"] and hook["PYTHONPATH"] == "/opt/lib"


def test_a_repositorys_protocol_allow_does_not_reopen_transports() -> None:
    """04: `protocol.file.allow=always` in the repository beat `protocol.allow=never`."""
    for name in ("file", "ext", "ssh"):
        assert f"protocol.{name}.allow=never" in SAFE_CONFIG


def test_a_submodules_hard_linked_objects_do_not_refuse_the_repository(ws: Path, tmp_path: Path) -> None:
    """A submodule cloned from a local path hard-links its objects: they are only ever added to."""
    objects = ws / ".git" / "modules" / "lib" / "objects" / "ab"
    objects.mkdir(parents=True)
    (objects / "cdef").write_text("x")
    os.link(objects / "cdef", tmp_path / "other-name")
    assert contained(ws / ".git") is None
    (ws / ".git" / "modules" / "lib" / "HEAD").write_text("ref: refs/heads/main\n")
    os.link(ws / ".git" / "modules" / "lib" / "HEAD", tmp_path / "head-elsewhere")
    assert "hard link" in (contained(ws / ".git") or "")


def test_read_only_git_does_not_run_with_an_included_config(ws: Path, tmp_path: Path) -> None:
    """02 on the read-only side (handoff, the gate's git probes): the same include is refused."""
    (ws / ".devconfig").write_text("[user]\n\tname = x\n")
    with open(ws / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = ../.devconfig\n")
    repo = repository(ws)
    assert not isinstance(repo, str)
    done = run_git(repo, ["status", "--porcelain"])
    assert done.returncode == 128 and b"include.path" in done.stderr


def test_an_include_that_is_a_fifo_is_refused_before_git_reads_it(ws: Path, tmp_path: Path) -> None:
    """11: git reads a repository's config with its includes before any command; an included
    FIFO that nobody writes would hold every git arnes starts there (and one a sandboxed job
    feeds serves the check one config and git another). The route and the read-only runner
    refuse from the config file itself, without starting git in the repository."""
    os.mkfifo(ws / ".devconfig")
    with open(ws / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = ../.devconfig\n")
    (ws / "a.py").write_text("changed\n")
    results = scripted(ws, tmp_path, [bash("git add a.py"), bash("git commit -am x")], *ALLOW)
    for _, output in results:
        assert "was not run" in output and "include.path" in output, output
    repo = repository(ws)
    assert not isinstance(repo, str)
    assert b"include.path" in run_git(repo, ["status", "--porcelain"]).stderr


def test_processes_that_wake_each_other_are_held_or_nothing_runs(tmp_path: Path) -> None:
    """Round 8, 01: background processes SIGCONT each other while arnes stops them, and one stops
    itself just before arnes looks. Either the hold is real (their counters do not move while it
    lasts, every thread is stopped) or it is refused; never a hold with one of them running."""
    from arnes.host.freeze import NotHeld, _reading, descendants

    counter = tmp_path / "count"
    code = (
        "import os, signal, sys, time\n"
        "peer = None\n"
        "n = 0\n"
        "out = open(sys.argv[1], 'a', buffering=1)\n"
        "while True:\n"
        "    n += 1\n"
        "    out.write('x')\n"
        "    for pid in map(int, open(sys.argv[2]).read().split() or []):\n"
        "        try: os.kill(pid, signal.SIGCONT)\n"
        "        except OSError: pass\n"
        "    if n % 50 == 0: os.kill(os.getpid(), signal.SIGSTOP)\n"
    )
    pids_file = tmp_path / "pids"
    pids_file.write_text("")
    counter.write_text("")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(counter), str(pids_file)]) for _ in range(4)]
    pids_file.write_text(" ".join(str(p.pid) for p in procs))
    try:
        for _ in range(3):
            try:
                with held():
                    before = counter.stat().st_size
                    reading = _reading(descendants(os.getpid()))
                    assert reading is not None
                    assert all(state in ("T", "t", "Z") for state, _ in reading.values()), reading
                    assert counter.stat().st_size == before
            except NotHeld:
                pass
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_thread_that_ran_between_the_two_readings_is_not_taken_as_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verification itself: a thread whose context-switch count moved between the two readings
    was woken (by a sibling's SIGCONT) and stopped again, so it may have acted: try again, and in
    the end refuse rather than hold."""
    from arnes.host import freeze

    child = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    moving = iter(range(1000))
    real = freeze._reading

    def reading(pids: list[int]) -> dict[int, tuple[str, int]] | None:
        found = real(pids)
        return None if found is None else {tid: (state, next(moving)) for tid, (state, _) in found.items()}

    monkeypatch.setattr(freeze, "_reading", reading)
    try:
        with pytest.raises(freeze.NotHeld), freeze.held():
            pass
        monkeypatch.setattr(freeze, "_reading", real)
        with freeze.held() as count:
            assert count >= 1 and _state(child.pid) == "T"
    finally:
        child.kill()
        child.wait()


def test_the_loaders_variables_name_no_folder_of_the_workspace(tmp_path: Path) -> None:
    """Round 8, 02 and 07: `LD_LIBRARY_PATH` with an empty entry (the folder a program starts in)
    or a folder of the workspace made arnes's own git, on the host, load a `libz.so.1` a sandboxed
    command copied there. arnes leaves those entries out of its own environment at start-up, so
    nothing it starts (host or sandbox) gets them, and says so."""
    import json

    from tests.conftest import run_arnes

    ws = tmp_path / "ws"
    (ws / "build" / "lib").mkdir(parents=True)
    script = tmp_path / "s.json"
    command = 'echo "[$LD_LIBRARY_PATH] [$LD_PRELOAD]"'
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}]}))
    env = {"LD_LIBRARY_PATH": f":/opt/cuda/lib64:{ws}/build/lib:lib", "LD_PRELOAD": f"{ws}/build/lib/x.so"}
    trace = tmp_path / "t.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--allow", "Bash(echo:*)", "go", env=env)  # fmt: skip
    from arnes.agent.trace import read_trace

    [output] = [e["output"] for e in read_trace(trace) if e["event"] == "tool_result"]
    assert "[/opt/cuda/lib64] []" in output, output
    assert f"LD_LIBRARY_PATH: {ws}/build/lib" in done.err and "LD_PRELOAD" in done.err
