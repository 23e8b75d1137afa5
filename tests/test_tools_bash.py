"""The Bash tools: exit codes, time-outs that kill the whole group, capped output, background jobs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arnes.envlimits import DAY_MS
from arnes.tools import processes
from arnes.tools.base import ToolContext, ToolError, ToolRegistry
from arnes.tools.bash import Bash, BashArgs, BashOutput, JobArgs, KillShell
from arnes.tools.processes import CappedOutput
from tests.conftest import gone


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def bash(ctx: ToolContext, command: str, **kw: object) -> str:
    return Bash().run(BashArgs(command=command, **kw), ctx)  # type: ignore[arg-type]


def test_runs_in_the_workspace_and_reports_the_exit_code(ctx: ToolContext) -> None:
    out = bash(ctx, "pwd; echo err >&2")
    assert out.startswith("exit code: 0\n") and str(ctx.workspace) in out and "[stderr]\nerr" in out


def test_a_failing_command_is_an_error_with_its_output(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        bash(ctx, "echo partial; exit 3")
    assert "exit code: 3" in str(info.value) and "partial" in str(info.value)


def test_no_output_says_so(ctx: ToolContext) -> None:
    assert bash(ctx, "true") == "exit code: 0\n(no output)"


def test_empty_command_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="empty"):
        bash(ctx, "   ")


@pytest.mark.parametrize("raw", [{"command": "x", "timeout": 0}, {"command": "x", "timeout": DAY_MS + 1}, {"cmd": "x"}])
def test_timeout_bounds_and_arguments_are_validated(raw: dict[str, object]) -> None:
    with pytest.raises(ToolError, match="Invalid arguments for Bash"):
        ToolRegistry([Bash()]).parse("Bash", raw)


def test_a_time_limit_past_the_users_maximum_is_the_maximum(ctx: ToolContext) -> None:
    """BASH_MAX_TIMEOUT_MS (envlimits.py, on the context): the model's 10 minutes are half a second."""
    ctx.bash_max_ms = 500
    with pytest.raises(ToolError, match=r"^Timed out after 0\.5 s"):
        bash(ctx, "sleep 30", timeout=600_000)


def test_time_out_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    with pytest.raises(ToolError, match=r"Timed out after 0\.5 s"):
        bash(ctx, f"sleep 30 & echo $! > {marker}; wait", timeout=500)
    assert gone(int(marker.read_text())), "the background child survived the time-out"


def test_long_output_keeps_head_and_tail(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, max_output_chars=2000)
    out = bash(ctx, "seq 1 100000")
    assert out.startswith("exit code: 0\n1\n2\n") and out.rstrip().endswith("100000")
    assert "bytes cut from the middle" in out and len(out) < 3000


def test_capped_output_counts_what_it_cut() -> None:
    buf = CappedOutput(4, 4)
    for chunk in (b"abc", b"defgh", b"ijklmnop"):
        buf.add(chunk)
    assert buf.total == 16 and buf.head == b"abcd" and buf.tail == b"mnop"
    assert "[8 bytes cut" in buf.text()


def test_background_jobs_stream_new_output_and_can_be_killed(ctx: ToolContext) -> None:
    started = bash(ctx, "echo one; sleep 0.3; echo two; sleep 30", run_in_background=True)
    assert "bash_1" in started
    deadline = time.monotonic() + 10
    seen = ""
    while "two" not in seen and time.monotonic() < deadline:
        seen += BashOutput().run(JobArgs(id="bash_1"), ctx)
        time.sleep(0.05)
    assert "one" in seen and "two" in seen and "running" in seen
    assert "(no new output)" in BashOutput().run(JobArgs(id="bash_1"), ctx)
    assert KillShell().run(JobArgs(id="bash_1"), ctx) == "Killed bash_1."
    assert "finished with exit code -9" in BashOutput().run(JobArgs(id="bash_1"), ctx)
    assert "already finished" in KillShell().run(JobArgs(id="bash_1"), ctx)


def test_unknown_job_ids_list_the_known_ones(ctx: ToolContext) -> None:
    bash(ctx, "true", run_in_background=True)
    with pytest.raises(ToolError, match=r"No background shell .bash_9.\. Running or finished ones: bash_1"):
        BashOutput().run(JobArgs(id="bash_9"), ctx)


def test_closing_the_session_kills_every_background_job(ctx: ToolContext) -> None:
    bash(ctx, "sleep 30", run_in_background=True)
    bash(ctx, "sleep 30", run_in_background=True)
    jobs = [ctx.jobs.get(i) for i in ctx.jobs.ids()]
    ctx.jobs.close()
    assert all(j is not None and j.proc.poll() is not None for j in jobs)


def test_ctrl_c_right_after_the_command_starts_still_kills_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race behind a child outliving Ctrl-C: SIGINT lands as the process starts, before any `try`."""
    started: list[subprocess.Popen[bytes]] = []
    real_spawn = processes.spawn

    def spawn_then_ctrl_c(
        argv: list[str], cwd: Path, env: dict[str, str] | None = None, pass_fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes]:
        proc = real_spawn(argv, cwd, env, pass_fds)
        started.append(proc)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C arrives before spawn has even returned
        return proc

    monkeypatch.setattr(processes, "spawn", spawn_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        processes.run_foreground(["sleep", "60"], tmp_path, 60, 1000)
    assert started and started[0].poll() is not None, "the command outlived Ctrl-C"


def test_ctrl_c_as_a_background_job_starts_leaves_it_owned_by_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_spawn = processes.spawn

    def spawn_then_ctrl_c(
        argv: list[str], cwd: Path, env: dict[str, str] | None = None, pass_fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes]:
        proc = real_spawn(argv, cwd, env, pass_fds)
        os.kill(os.getpid(), signal.SIGINT)
        return proc

    monkeypatch.setattr(processes, "spawn", spawn_then_ctrl_c)
    jobs = processes.BackgroundJobs()
    with pytest.raises(KeyboardInterrupt):
        jobs.start(["sleep", "60"], tmp_path, "sleep 60")
    [job_id] = jobs.ids()
    job = jobs.get(job_id)
    assert job is not None
    jobs.close()
    assert job.proc.poll() is not None


def test_claude_code_parameter_names_for_background_shells_are_accepted(ctx: ToolContext) -> None:
    bash(ctx, "sleep 30", run_in_background=True)
    registry = ToolRegistry([Bash(), BashOutput(), KillShell()])
    tool, args = registry.parse("BashOutput", {"bash_id": "bash_1"})
    assert "running" in tool.run(args, ctx)
    tool, args = registry.parse("KillShell", {"shell_id": "bash_1"})
    assert tool.run(args, ctx) == "Killed bash_1."
    with pytest.raises(ToolError, match="id"):
        registry.parse("KillShell", {"job": "bash_1"})
