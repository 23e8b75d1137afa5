"""Benchmark: arnes start-up, and per-step cost side by side with mini-swe-agent.

Run from the repository root with the project venv active:

    python bench/run.py            # full run, rewrites the results block of bench/README.md
    python bench/run.py --quick    # fewer repetitions
    python bench/run.py --bash     # 100 `echo hi` steps instead of Read/cat (needs arnes's Bash tool)
    python bench/run.py --rev HEAD # arnes as committed, not the working tree being edited

Plain Python (stdlib). It creates bench/.venv-mini itself (python -m venv + pip install of a pinned
mini-swe-agent) and never installs anything into the project venv. Everything talks to a local
fake server (tests/fakes/llm_server.py) on 127.0.0.1; nothing leaves the machine.

Method (see bench/README.md): each agent is run as a fresh process, once with N=1 scripted tool
steps and once with N=100, on the same in-process FakeLLMServer. Per-step cost is
(median wall time at N=100 - median wall time at N=1) / 99, so interpreter start-up, imports and
the first connection are excluded. CPU time of the agent's process tree (RUSAGE_CHILDREN) and of
the server (this process) are reported beside it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
MINI_VENV = BENCH / ".venv-mini"
MINI_PY = MINI_VENV / "bin" / "python"
MINI_DRIVER = BENCH / "mini_driver.py"
WHATIF = BENCH / "whatif_no_sdk_transform.py"
README = BENCH / "README.md"
# Pinned so that a rerun measures the same code; --mini-spec overrides.
MINI_SPEC = ["mini-swe-agent==2.4.6", "litellm==1.110.2"]
# The README holds one results block per variant, between these markers.
MARKERS = {
    "read": ("<!-- results:begin (written by bench/run.py) -->", "<!-- results:end -->"),
    "bash": ("<!-- results-bash:begin (written by bench/run.py --bash) -->", "<!-- results-bash:end -->"),
}
HEAVY = ("anthropic", "openai", "httpx", "pydantic", "rich")  # reported; the first two must be absent

sys.path.insert(0, str(ROOT))
from tests.fakes.llm_server import DONE_TURN, FakeLLMServer, Json, echo_loop_responder  # noqa: E402

Responder = Callable[[str, Json], Json]
ARNES_SNAPSHOT: str | None = None  # set by --rev: a folder holding `git archive REV arnes`
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


# --------------------------------------------------------------------------------- helpers
def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def child_env(**extra: str) -> dict[str, str]:
    """This environment with bytecode caching on, as on a user's machine: some sandboxes and CI
    images set PYTHONDONTWRITEBYTECODE=1, which makes every start compile the editable source anew."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if ARNES_SNAPSHOT:  # --rev: the snapshot's arnes package shadows the editable install
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [ARNES_SNAPSHOT, env.get("PYTHONPATH")]))
    return env | extra


def timed(cmd: list[str], **kw: Any) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds of the child process tree, the completed process)."""
    c0, t0 = children_cpu(), time.perf_counter()
    kw.setdefault("env", child_env())
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    return wall, children_cpu() - c0, proc


def arnes_python() -> str:
    """The interpreter that has arnes installed: this one, if the project venv is active."""
    probe = subprocess.run([sys.executable, "-c", "import arnes"], capture_output=True, env=child_env(), cwd=BENCH)
    if probe.returncode != 0:
        sys.exit("bench: `import arnes` fails here; activate the project venv (. .venv/bin/activate) first")
    return sys.executable


def arnes_exe() -> str:
    exe = Path(sys.executable).parent / "arnes"
    found = str(exe) if exe.exists() else shutil.which("arnes")
    if not found:
        sys.exit("bench: no `arnes` command next to this python or on PATH; pip install -e . first")
    return found


# --------------------------------------------------------------------------------- machine
ARNES_DEPS = ["openai", "anthropic", "httpx", "pydantic"]


def dist_versions(python: str, names: list[str]) -> dict[str, str]:
    """Installed versions of these distributions in that interpreter's environment."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for d in sys.argv[1:]:\n"
        "    try: out[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))"
    )
    r = subprocess.run([python, "-c", code, *names], capture_output=True, text=True, cwd=BENCH)
    return dict(json.loads(r.stdout)) if r.returncode == 0 else {}


def machine_info(rev: str | None) -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        info: dict[str, str] = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
        if "model name" in info:
            cpu = info["model name"]
            extra = [f"family {info.get('cpu family', '?')} model {info.get('model', '?')}"]
            if "cpu MHz" in info:
                extra.append(f"{float(info['cpu MHz']):.0f} MHz")
            if "hypervisor" in info.get("flags", "").split():
                extra.append("virtual machine")
            cpu += f" ({', '.join(extra)})"
    except (OSError, ValueError):
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0

    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else "?"

    if rev:
        arnes = f"{git('rev-parse', '--short', rev)} (`git archive {rev}`, not the working tree)"
    else:
        dirty = git("status", "--porcelain", "--", "arnes") not in ("", "?")
        arnes = git("rev-parse", "--short", "HEAD") + (" + uncommitted changes in arnes/" if dirty else "")
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "arnes": arnes,
        "arnes's SDKs": ", ".join(f"{k} {v}" for k, v in dist_versions(sys.executable, ARNES_DEPS).items()),
    }


# --------------------------------------------------------------------------------- 1. start-up
@dataclass
class Startup:
    rows: list[tuple[str, list[float]]] = field(default_factory=list)
    importtime_heavy: dict[str, bool] = field(default_factory=dict)
    sys_modules_heavy: dict[str, bool] = field(default_factory=dict)
    top_imports: list[tuple[str, int]] = field(default_factory=list)


def bench_startup(runs: int) -> Startup:
    py, exe = arnes_python(), arnes_exe()
    cases = [
        ("python -c pass", [py, "-c", "pass"]),
        ("arnes --help", [exe, "--help"]),
        ("python -c 'import openai'  (reference)", [py, "-c", "import openai"]),
        ("python -c 'import anthropic'  (reference)", [py, "-c", "import anthropic"]),
    ]
    out = Startup()
    for label, cmd in cases:
        for _ in range(2):  # warm the page cache and .pyc files
            subprocess.run(cmd, capture_output=True, check=True, env=child_env(), cwd=BENCH)
        times = []
        for _ in range(runs if "reference" not in label else max(3, runs // 2)):
            wall, _, proc = timed(cmd, cwd=BENCH)
            if proc.returncode != 0:
                sys.exit(f"bench: {label!r} failed: {proc.stderr[-2000:]}")
            times.append(wall)
        out.rows.append((label, times))
        log(f"  {label:45s} median {ms(median(times))} ms  min {ms(min(times))} ms  ({len(times)} runs)")

    # Which modules does `arnes --help` import? Two independent checks.
    r = subprocess.run(
        [py, "-X", "importtime", exe, "--help"], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH
    )
    imported: dict[str, int] = {}
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
        if m:
            imported[m.group(4).strip()] = int(m.group(2))
    tops = {name.split(".")[0] for name in imported}
    out.importtime_heavy = {h: h in tops for h in HEAVY}
    # Largest cumulative imports among top-level (unindented) entries.
    top_level = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\| (\S.*)$", line)
        if m:
            top_level.append((m.group(2), int(m.group(1))))
    out.top_imports = sorted(top_level, key=lambda x: -x[1])[:5]

    probe = (
        "import sys\nfrom arnes.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print(__import__('json').dumps({{h: h in sys.modules for h in {list(HEAVY)!r}}}))"
    )
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH)
    out.sys_modules_heavy = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# --------------------------------------------------------------------------------- 2. steps
def loop_responder(n: int, call: Json, final: Json) -> Responder:
    """Stateless, like echo_loop_responder: `call` until the conversation holds n tool results.
    A `{i}` in its command becomes the count so far: arnes's repeat guard (agent/guard.py) stops a
    model that makes the very same call with the very same result turn after turn."""

    def respond(api: str, body: Json) -> Json:
        results = sum(m.get("role") == "tool" for m in body.get("messages") or [])
        if results >= n:
            return final
        command = (call.get("input") or {}).get("command")
        if isinstance(command, str) and "{i}" in command:
            return {"tool_calls": [{**call, "input": {**call["input"], "command": command.format(i=results)}}]}
        return {"tool_calls": [call]}

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


READ = Variant(
    name="read a.txt",
    task="read a.txt {n} times",
    arnes_responder=echo_loop_responder,  # Read {"file_path": "a.txt"} n times, then "done."
    arnes_flags=["--permission-mode", "acceptEdits", "--max-turns", "1000"],  # a run nobody watches stops at 50
    mini_command="cat a.txt",
)

# ---- BASH VARIANT ------------------------------------------------------------------------------
# `--bash` runs 100 `echo hi` steps on both sides. The arnes half uses the tool named "Bash" that
# takes {"command": ...}, allowed by `--allow Bash`; on an arnes without it, --bash exits with
# "needs the Bash tool" (see main). Adjust here if the tool's name or arguments change.
BASH = Variant(
    name="echo hi",
    task="run echo hi {n} times",
    arnes_responder=lambda n: loop_responder(n, {"name": "Bash", "input": {"command": "echo hi {i}"}}, DONE_TURN),
    arnes_flags=["--permission-mode", "acceptEdits", "--allow", "Bash", "--max-turns", "1000"],
    mini_command="echo hi {i}",
)


def arnes_has_bash() -> bool:
    code = "from arnes.session import default_tools; print(' '.join(t.name for t in default_tools()))"
    r = subprocess.run(
        [arnes_python(), "-c", code], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH
    )
    return "Bash" in r.stdout.split()


# -------------------------------------------------------------------------------------------------


def fake_server(responder: Responder) -> FakeLLMServer:
    """The repo's fake server with TCP_NODELAY on its connections, as real model servers have.

    Without it, a response written as two small segments (headers, then body: the non-streaming
    path that litellm uses) waits for the client's delayed ACK: Nagle + delayed ACK add ~40 ms to
    every mini-swe-agent step and measure the harness rather than the agent.
    """
    srv = FakeLLMServer([], responder=responder)
    srv._httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    return srv


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
            responder = loop_responder(n, {"name": "bash", "input": {"command": variant.mini_command}}, MINI_SUBMIT)
        env = child_env(OPENAI_API_KEY="test", ANTHROPIC_API_KEY="test", XDG_CONFIG_HOME=str(Path(tmp) / "xdg"))
        with fake_server(responder) as srv:
            base = srv.url + "/v1"
            if agent.startswith("arnes"):
                cmd = [arnes_exe()] if agent != "arnes-notransform" else [arnes_python(), str(WHATIF)]
                if agent == "arnes-anthropic":
                    cmd += ["--provider", "anthropic", "--base-url", srv.url, "--model", "fake-model"]
                else:
                    cmd += ["--provider", "openai", "--base-url", base, "--model", "fake"]
                cmd += ["-w", str(ws), *variant.arnes_flags, "--output-format", "json", task]
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


# --------------------------------------------------------------------------------- mini venv
def ensure_mini(spec: list[str]) -> dict[str, str]:
    want = {s.split("==")[0]: s.split("==")[1] for s in spec if "==" in s}

    def installed() -> dict[str, str]:
        return dist_versions(str(MINI_PY), ["mini-swe-agent", "litellm", "openai", "httpx"]) if MINI_PY.exists() else {}

    have = installed()
    if "mini-swe-agent" in have and all(have.get(k) == v for k, v in want.items()):
        return have
    if not MINI_PY.exists():
        log(f"  creating {MINI_VENV.relative_to(ROOT)} ...")
        subprocess.run([sys.executable, "-m", "venv", str(MINI_VENV)], check=True)
    log(f"  pip install {' '.join(spec)} into {MINI_VENV.relative_to(ROOT)} (about a minute) ...")
    r = subprocess.run([str(MINI_PY), "-m", "pip", "install", "-q", *spec], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench: pip install into {MINI_VENV} failed:\n{r.stderr[-3000:]}")
    have = installed()
    if "mini-swe-agent" not in have:
        sys.exit("bench: mini-swe-agent did not install")
    return have


# --------------------------------------------------------------------------------- profile
def profile_arnes(n: int) -> str:
    """cProfile of one arnes run (main thread only: tool calls run in a pool and are not seen)."""
    with tempfile.TemporaryDirectory(prefix="arnes-bench-prof-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("hello from a.txt\n")
        prof = Path(tmp) / "arnes.prof"
        env = child_env(OPENAI_API_KEY="test", XDG_CONFIG_HOME=str(Path(tmp) / "xdg"))
        with fake_server(echo_loop_responder(n)) as srv:
            cmd = [arnes_python(), "-m", "cProfile", "-o", str(prof), "-m", "arnes", "--provider", "openai"]
            cmd += ["--base-url", srv.url + "/v1", "--model", "fake", "-w", str(ws)]
            cmd += ["--permission-mode", "acceptEdits", "--output-format", "json", f"read a.txt {n} times"]
            subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp, check=True)
        code = "import pstats, sys\ns = pstats.Stats(sys.argv[1]); s.sort_stats('tottime'); s.print_stats(25)\n"
        r = subprocess.run([arnes_python(), "-c", code, str(prof)], capture_output=True, text=True, check=True)
        return r.stdout


# --------------------------------------------------------------------------------- report
def report(
    args: argparse.Namespace,
    machine: dict[str, str],
    startup: Startup | None,
    steps: dict[str, StepResult] | None,
    variant: Variant,
    versions: dict[str, str],
) -> str:
    lines: list[str] = []
    add = lines.append
    cmd = "python bench/run.py" + (" " + " ".join(args.argv) if args.argv else "")
    add(f"Measured {machine['date']} with `{cmd}` (project venv active, from the repository root).")
    add("")
    add("| machine | |")
    add("| --- | --- |")
    for k in ("cpu", "cores", "memory", "os", "python", "arnes", "arnes's SDKs"):
        add(f"| {k} | {machine[k]} |")
    if versions:
        add(
            f"| mini-swe-agent | {versions.get('mini-swe-agent', '?')} (litellm {versions.get('litellm', '?')}, "
            f"openai {versions.get('openai', '?')}; in bench/.venv-mini) |"
        )
    add("")
    if startup:
        add("### Start-up")
        add("")
        add("| command | median ms | min ms | runs |")
        add("| --- | ---: | ---: | ---: |")
        for label, times in startup.rows:
            add(f"| `{label}` | {ms(median(times))} | {ms(min(times))} | {len(times)} |")
        base = median(startup.rows[0][1])
        help_ = median(startup.rows[1][1])
        add("")
        add(f"`arnes --help` costs {ms(help_ - base)} ms over a bare interpreter (medians).")
        add("")
        it = ", ".join(f"{h}: {'**yes**' if v else 'no'}" for h, v in startup.importtime_heavy.items())
        sm = ", ".join(f"{h}: {'**yes**' if v else 'no'}" for h, v in startup.sys_modules_heavy.items())
        ok = not any(
            startup.importtime_heavy.get(h) or startup.sys_modules_heavy.get(h) for h in ("anthropic", "openai")
        )
        add(
            f"Imported by `arnes --help`: `python -X importtime` says {it}; `sys.modules` after "
            f"`arnes.cli.main(['--help'])` says {sm}. "
            + ("**OK: neither anthropic nor openai is imported.**" if ok else "**FAIL: a provider SDK is imported.**")
        )
        add("")
        tops = ", ".join(f"{name} {us / 1000:.1f} ms" for name, us in startup.top_imports)
        add(f"Largest top-level imports (cumulative, from `-X importtime`): {tops}.")
        add("")
    if steps:
        st = next(iter(steps.values()))
        n_full, n_base = st.steps + args.base_n, args.base_n
        cols = [r for r in (steps.get(k) for k in ALL_AGENTS) if r is not None]
        arnes_r = steps.get("arnes")
        minis = [r for r in cols if r.agent != "arnes"]  # every other column, compared with arnes
        add(f"### Per step: {n_full} scripted steps (`{variant.name}`), arnes vs mini-swe-agent")
        add("")
        add(f"Medians of {len(st.full)} repetitions; per step = (N={n_full} - N={n_base}) / {st.steps}.")
        add("")
        head = [LABELS[r.agent] for r in cols] + ([f"arnes / {LABELS[r.agent]}" for r in minis] if arnes_r else [])
        add("| | " + " | ".join(head) + " |")
        add("| --- |" + " ---: |" * len(head))

        def row(label: str, f: Callable[[StepResult], float], unit: Callable[[float], str]) -> None:
            cells = [unit(f(r)) for r in cols]
            if arnes_r:
                cells += [f"{f(arnes_r) / f(r):.2f}" if f(r) > 0 and f(arnes_r) > 0 else "n/a" for r in minis]
            add(f"| {label} | " + " | ".join(cells) + " |")

        def sec(x: float) -> str:
            return f"{x:.2f} s"

        def msu(x: float) -> str:
            return f"{x * 1000:.2f} ms"

        row(f"wall, whole run at N={n_base}", lambda r: median([s.wall for s in r.base]), sec)
        row(f"wall, whole run at N={n_full}", lambda r: median([s.wall for s in r.full]), sec)
        row("**wall per step**", lambda r: r.per_step("wall"), msu)
        row("agent's own loop clock per step (less noisy)", lambda r: r.per_step("loop"), msu)
        row("agent CPU per step (its process tree)", lambda r: r.per_step("cpu"), msu)
        row("fake-server CPU per step (shared harness)", lambda r: r.per_step("server_cpu"), msu)
        add("")
        m = steps.get("mini")
        if arnes_r and m:
            for what, attr in (("Wall per step", "wall"), ("Loop-clock per step", "loop")):
                pa, pm = arnes_r.per_step(attr), m.per_step(attr)
                if pa <= 0 or pm <= 0:
                    add(
                        f"{what}: inconclusive (a difference came out ≤ 0: start-up noise exceeds the signal; "
                        "use more --reps or --steps)."
                    )
                else:
                    ratio = pa / pm
                    verdict = "meets" if ratio < 0.5 else "does NOT meet"
                    add(
                        f"{what}, arnes / mini-swe-agent = **{ratio:.2f}**: {verdict} the project's goal of "
                        "well under half (< 0.5)."
                    )
                add("")
        add("<details><summary>raw wall times (s)</summary>")
        add("")
        for r in steps.values():
            add(f"- {r.agent} N={n_base}: " + ", ".join(f"{s.wall:.3f}" for s in r.base))
            add(f"- {r.agent} N={n_full}: " + ", ".join(f"{s.wall:.3f}" for s in r.full))
        add("")
        add("</details>")
    return "\n".join(lines)


def write_readme(block: str, key: str) -> None:
    begin, end = MARKERS[key]
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    if begin not in text or end not in text:
        text = text.rstrip("\n") + f"\n\n## Results ({key})\n\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{begin}\n{block}\n{end}{tail}", encoding="utf-8")


# --------------------------------------------------------------------------------- main
def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer repetitions (2 step reps, 8 start-up runs)")
    p.add_argument("--reps", type=int, help="repetitions of each N=base/N=steps pair (default 5; quick 2)")
    p.add_argument("--startup-runs", type=int, help="runs per start-up command (default 20; quick 8)")
    p.add_argument("--steps", type=int, default=100, help="tool steps in the long run (default 100)")
    p.add_argument("--base-n", type=int, default=1, help="tool steps in the short run that is subtracted")
    p.add_argument("--bash", action="store_true", help="100 `echo hi` steps instead of reading a.txt")
    p.add_argument("--only", choices=ALL_AGENTS, nargs="+", help="run the step benchmark for these only")
    p.add_argument("--skip-startup", action="store_true")
    p.add_argument("--skip-steps", action="store_true")
    p.add_argument("--profile", action="store_true", help="also print a cProfile of one arnes run")
    p.add_argument("--mini-spec", nargs="+", default=MINI_SPEC, metavar="REQ", help="what to pip install")
    p.add_argument(
        "--rev",
        help="benchmark arnes as committed at REV (git archive; e.g. HEAD) instead of "
        "the working tree, so that edits in progress cannot break or skew the run",
    )
    p.add_argument("--no-write", action="store_true", help="print the results; leave bench/README.md alone")
    args = p.parse_args()
    args.argv = sys.argv[1:]
    reps = args.reps or (2 if args.quick else 5)
    runs = args.startup_runs or (8 if args.quick else 20)
    if args.steps <= args.base_n:
        p.error("--steps must be larger than --base-n")

    global ARNES_SNAPSHOT
    snapshot_dir = None
    if args.rev:
        snapshot_dir = tempfile.TemporaryDirectory(prefix="arnes-bench-rev-")
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev, "arnes"], capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"bench: git archive {args.rev} failed: {archive.stderr.decode()[-500:]}")
        subprocess.run(["tar", "-x", "-C", snapshot_dir.name], input=archive.stdout, check=True)
        ARNES_SNAPSHOT = snapshot_dir.name
        where = subprocess.run(
            [sys.executable, "-c", "import arnes; print(arnes.__file__)"],
            capture_output=True,
            text=True,
            env=child_env(),
            cwd=BENCH,
        ).stdout.strip()
        if not where.startswith(snapshot_dir.name):
            sys.exit(f"bench: --rev: arnes still imports from {where}")
        log(f"arnes from `git archive {args.rev}` in {snapshot_dir.name}")
    variant = READ
    if args.bash:
        # ---- BASH VARIANT: enabled once arnes has a Bash tool --------------------------------------
        if not arnes_has_bash():
            print(
                "bench: --bash needs the Bash tool in arnes (arnes.session.default_tools has none yet)", file=sys.stderr
            )
            return 2
        variant = BASH

    machine = machine_info(args.rev)
    started = time.perf_counter()
    startup = None
    if not args.skip_startup:
        log(f"start-up, {runs} runs each:")
        startup = bench_startup(runs)
    steps = None
    versions: dict[str, str] = {}
    if not args.skip_steps:
        agents = args.only or AGENTS
        if any(a.startswith("mini") for a in agents):
            log("mini-swe-agent venv:")
            versions = ensure_mini(args.mini_spec)
            log(f"  {versions}")
        log(f"steps: {args.steps} vs {args.base_n} scripted steps, {reps} repetitions:")
        steps = bench_steps(agents, variant, args.steps, args.base_n, reps)
    block = report(args, machine, startup, steps, variant, versions)
    print()
    print(block)
    if args.profile:
        print("\n### cProfile of one arnes run (main thread, sorted by own time)\n")
        print(profile_arnes(args.steps))
    log(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    if not args.no_write:
        write_readme(block, "bash" if args.bash else "read")
        log(f"wrote the results into {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
