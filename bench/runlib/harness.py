"""What every part of bench/run.py shares: paths, the fake server, child processes and their
clocks, the machine's description, mini-swe-agent's venv, and the README's results blocks."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent
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
from tests.fakes.llm_server import DONE_TURN as DONE_TURN  # noqa: E402  (re-exported to the parts)
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402
from tests.fakes.llm_server import Json as Json  # noqa: E402
from tests.fakes.llm_server import tool_results as tool_results  # noqa: E402

Responder = Callable[[str, Json], Json]


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
    return env | extra


def use_snapshot(folder: str) -> None:
    """--rev: the snapshot's arnes package shadows the editable install in every child process
    (through this process's PYTHONPATH, which its own imports never read again)."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")]))


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


def fake_server(responder: Responder) -> FakeLLMServer:
    """The repo's fake server with TCP_NODELAY on its connections, as real model servers have.

    Without it, a response written as two small segments (headers, then body: the non-streaming
    path that litellm uses) waits for the client's delayed ACK: Nagle + delayed ACK add ~40 ms to
    every mini-swe-agent step and measure the harness rather than the agent.
    """
    srv = FakeLLMServer([], responder=responder)
    srv._httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    return srv


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


def write_readme(block: str, key: str) -> None:
    begin, end = MARKERS[key]
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    if begin not in text or end not in text:
        text = text.rstrip("\n") + f"\n\n## Results ({key})\n\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{begin}\n{block}\n{end}{tail}", encoding="utf-8")
