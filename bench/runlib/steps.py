"""2. Per step: N scripted steps against the same fake server, arnes and mini-swe-agent side by
side; per step = (median at N - median at base N) / (N - base N)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlib.harness import (
    DONE_TURN,
    MINI_DRIVER,
    MINI_PY,
    WHATIF,
    Json,
    Responder,
    arnes_exe,
    arnes_python,
    child_env,
    fake_server,
    log,
    median,
    ms,
    self_cpu,
    timed,
    tool_results,
)

# "mini": as the `mini` command runs (trajectory file rewritten after every step);
# "mini-nosave": the same agent with no trajectory file (DefaultAgent's own default).
# Diagnostics, only with --only: "arnes-notransform" is arnes with the openai SDK's request transform
# skipped (bench/whatif_no_sdk_transform.py); "arnes-anthropic" is arnes on the same fake server
# through its Anthropic provider (the Messages API) instead of the OpenAI-compatible one.
# "arnes-nosandbox" is arnes with --sandbox off (mini-swe-agent runs its commands unsandboxed).
AGENTS = ["arnes", "mini", "mini-nosave"]
ALL_AGENTS = [*AGENTS, "arnes-notransform", "arnes-anthropic", "arnes-nosandbox"]
LABELS = {
    "arnes": "arnes",
    "mini": "mini-swe-agent",
    "mini-nosave": "mini-swe-agent, no trajectory file",
    "arnes-notransform": "arnes without the SDK transform (diagnostic)",
    "arnes-anthropic": "arnes --provider anthropic (diagnostic)",
    "arnes-nosandbox": "arnes --sandbox off (diagnostic)",
}


def loop_responder(n: int, call: Callable[[int], Json], final: Json) -> Responder:
    """Stateless: `call(k)` while the conversation holds k < n tool results (either wire), then
    `final`. arnes's loop guard stops a model that repeats one call with one result three turns in
    a row, so arnes's calls differ by k (a Read `limit` past the file's end, an `echo` argument)."""

    def respond(api: str, body: Json) -> Json:
        results = tool_results(body)
        return {"tool_calls": [call(results)]} if results < n else final

    return respond


MINI_SUBMIT = {"tool_calls": [{"name": "bash", "input": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]}


@dataclass
class Variant:
    """What the scripted model asks each agent to do, N times."""

    name: str
    task: str
    arnes_responder: Callable[[int], Responder]
    arnes_flags: list[str]
    mini_command: str


def READ_INPUT(k: int) -> Json:  # noqa: N802  (a constant's shape, built per step)
    return {"file_path": "a.txt", "limit": 10_000 + k}


READ = Variant(
    name="read a.txt",
    task="read a.txt {n} times",
    arnes_responder=lambda n: loop_responder(n, lambda k: {"name": "Read", "input": READ_INPUT(k)}, DONE_TURN),
    arnes_flags=["--permission-mode", "acceptEdits"],
    mini_command="cat a.txt",
)


@dataclass
class Sample:
    wall: float
    cpu: float  # the agent's process tree
    server_cpu: float  # this process: the fake server's threads (and a little of the harness)
    loop: float  # the agent's own run loop, by its own clock: arnes's trace, mini's agent.run()


def run_once(agent: str, variant: Variant, n: int) -> Sample:
    with tempfile.TemporaryDirectory(prefix=f"arnes-bench-{agent}-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("hello from a.txt\n")
        task = variant.task.format(n=n)
        if agent.startswith("arnes"):
            responder = variant.arnes_responder(n)
        else:
            command = variant.mini_command  # a `{i}` becomes the step's number, as on arnes's side
            responder = loop_responder(
                n, lambda k: {"name": "bash", "input": {"command": command.replace("{i}", str(k))}}, MINI_SUBMIT
            )
        env = child_env(OPENAI_API_KEY="test", ANTHROPIC_API_KEY="test", XDG_CONFIG_HOME=str(Path(tmp) / "xdg"))
        with fake_server(responder) as srv:
            base = srv.url + "/v1"
            if agent.startswith("arnes"):
                cmd = [arnes_exe()] if agent != "arnes-notransform" else [arnes_python(), str(WHATIF)]
                if agent == "arnes-anthropic":
                    cmd += ["--provider", "anthropic", "--base-url", srv.url, "--model", "fake-model"]
                else:
                    cmd += ["--provider", "openai", "--base-url", base, "--model", "fake"]
                cmd += ["-w", str(ws), *variant.arnes_flags, "--max-turns", str(n + 10)]
                cmd += ["--output-format", "json", task]
                if agent == "arnes-nosandbox":
                    cmd[-1:-1] = ["--sandbox", "off"]
            else:
                cmd = [str(MINI_PY), str(MINI_DRIVER), "--base-url", base, "--workspace", str(ws), "--task", task]
                if agent == "mini":  # the `mini` command rewrites its trajectory file after every step
                    cmd += ["--traj", str(Path(tmp) / "traj.json")]
            s0 = self_cpu()
            wall, cpu, proc = timed(cmd, env=env, cwd=tmp)
            server_cpu = self_cpu() - s0
            posts = len(srv.requests)
        out = check(agent, n, proc, posts)
        if agent.startswith("arnes"):  # session_start .. session_end in the JSONL trace (ms resolution)
            events = [json.loads(line) for line in Path(out["trace"]).read_text().splitlines() if line.strip()]
            stamps = {e["event"]: dt.datetime.fromisoformat(e["ts"]) for e in events}
            loop = (stamps["session_end"] - stamps["session_start"]).total_seconds()
        else:
            loop = float(out["loop_seconds"])
    return Sample(wall, cpu, server_cpu, loop)


def check(agent: str, n: int, proc: subprocess.CompletedProcess[str], posts: int) -> dict[str, Any]:
    """The agent's JSON summary; fails loudly unless the run did exactly n tool steps and ended normally."""
    problem = ""
    try:
        out = json.loads(proc.stdout) if agent.startswith("arnes") else json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        out = {}
    if proc.returncode != 0:
        problem = f"exit code {proc.returncode}"
    elif agent.startswith("arnes") and (out.get("stop_reason") != "end_turn" or out.get("tool_calls") != n):
        problem = f"stop_reason={out.get('stop_reason')} tool_calls={out.get('tool_calls')} (want end_turn, {n})"
    elif agent.startswith("mini") and (out.get("exit_status") != "Submitted" or out.get("n_calls") != n + 1):
        problem = f"exit_status={out.get('exit_status')} n_calls={out.get('n_calls')} (want Submitted, {n + 1})"
    elif posts != n + 1:
        problem = f"server saw {posts} model requests, want {n + 1}"
    if problem:
        sys.exit(f"bench: {agent} N={n}: {problem}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return out


@dataclass
class StepResult:
    agent: str
    base: list[Sample]
    full: list[Sample]
    steps: int

    def per_step(self, attr: str) -> float:
        hi = median([getattr(s, attr) for s in self.full])
        lo = median([getattr(s, attr) for s in self.base])
        return (hi - lo) / self.steps


def bench_steps(agents: list[str], variant: Variant, n: int, base_n: int, reps: int) -> dict[str, StepResult]:
    results = {a: StepResult(a, [], [], n - base_n) for a in agents}
    for a in agents:  # warm-up: .pyc files, page cache; not counted
        log(f"  warm-up {a} ...")
        run_once(a, variant, base_n)
    for rep in range(reps):
        for a in agents:  # interleaved, so drift hits both agents alike
            results[a].base.append(run_once(a, variant, base_n))
            results[a].full.append(run_once(a, variant, n))
            r = results[a]
            log(
                f"  rep {rep + 1}/{reps} {a:5s} N={base_n}: {r.base[-1].wall:6.2f}s  "
                f"N={n}: {r.full[-1].wall:6.2f}s  -> {ms((r.full[-1].wall - r.base[-1].wall) / r.steps)} ms/step"
            )
    return results


def profile_arnes(n: int) -> str:
    """cProfile of one arnes run (main thread only: tool calls run in a pool and are not seen)."""
    with tempfile.TemporaryDirectory(prefix="arnes-bench-prof-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("hello from a.txt\n")
        prof = Path(tmp) / "arnes.prof"
        env = child_env(OPENAI_API_KEY="test", XDG_CONFIG_HOME=str(Path(tmp) / "xdg"))
        with fake_server(READ.arnes_responder(n)) as srv:
            cmd = [arnes_python(), "-m", "cProfile", "-o", str(prof), "-m", "arnes", "--provider", "openai"]
            cmd += ["--base-url", srv.url + "/v1", "--model", "fake", "-w", str(ws)]
            cmd += ["--permission-mode", "acceptEdits", "--max-turns", str(n + 10), "--output-format", "json"]
            cmd += [f"read a.txt {n} times"]
            subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp, check=True)
        code = "import pstats, sys\ns = pstats.Stats(sys.argv[1]); s.sort_stats('tottime'); s.print_stats(25)\n"
        r = subprocess.run([arnes_python(), "-c", code, str(prof)], capture_output=True, text=True, check=True)
        return r.stdout
