"""Issue 14's table in one run: each figure side by side with its peer or its floor (point 8).

    python bench/bench_all.py [--reps 3] [--no-write]

From the repository root with the project venv active; the first run creates bench/.venv-mini
(see bench/README.md) and bench_search.py's 50,000-file tree under /tmp. Each figure comes from
the bench script that owns it, called here with the same method:

| figure | from | peer / floor |
|---|---|---|
| start-up (`--help`) | runlib/startup.py | `python -c pass` |
| Read step, steps 1-100 | runlib/steps.py | mini-swe-agent (no trajectory file), same server |
| Read step, steps 900-1000 | bench_longrun.py flat | the fake server's own time per request |
| Bash `echo` step | runlib/steps.py + bash_variant.py | mini-swe-agent's `bash`, same server |
| Grep content, Grep files, Glob | bench_search.py | raw `rg` for the same output |
| shell judgement, 200 x 200 | bench_permissions.py | (none; target 20 ms) |
| start-up with three MCP servers | bench_mcp_startup.py | the same folder with none |

The machine is shared: pairs run alternately and the ratios are medians of paired runs where a
figure has a peer. The block it prints goes into bench/README.md between the `all` markers.
Nothing here is a test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import bench_longrun  # noqa: E402
import bench_mcp_startup  # noqa: E402
import bench_search  # noqa: E402
from runlib.bash_variant import BASH  # noqa: E402
from runlib.harness import README, ensure_mini, log, machine_info  # noqa: E402
from runlib.startup import bench_startup  # noqa: E402
from runlib.steps import READ, StepResult, bench_steps  # noqa: E402

MINI_SPEC = ["mini-swe-agent==2.4.6", "litellm==1.110.2"]
BEGIN, END = "<!-- all:begin (written by bench/bench_all.py) -->", "<!-- all:end -->"

Row = tuple[str, str, str, str]  # figure, arnes, peer or floor, ratio


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def lscpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    keep = ("Model name", "CPU(s)", "Thread(s) per core", "Hypervisor vendor", "L3 cache")
    return "; ".join(f"{k.strip()} {fields[k].strip()}" for k in keep if k in fields)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a > 0 and b > 0 else "n/a"


def paired(first: Callable[[], float], second: Callable[[], float], reps: int) -> tuple[float, float, float]:
    """Medians of each side and of the paired ratios, the two run alternately."""
    xs, ys = [], []
    for _ in range(reps):
        xs.append(first())
        ys.append(second())
    return statistics.median(xs), statistics.median(ys), statistics.median(x / y for x, y in zip(xs, ys, strict=True))


def startup_rows(runs: int) -> list[Row]:
    st = bench_startup(runs)
    rows = dict(st.rows)
    bare, help_ = statistics.median(rows["python -c pass"]), statistics.median(rows["arnes --help"])
    return [("start-up, `arnes --help`", f"{help_ * 1000:.0f} ms", f"`python -c pass` {bare * 1000:.0f} ms",
             ratio(help_, bare))]  # fmt: skip


def step_rows(reps: int) -> list[Row]:
    def per(r: StepResult) -> float:
        return r.per_step("wall") * 1000

    log("Read steps, arnes vs mini-swe-agent (no trajectory file):")
    read = bench_steps(["arnes", "mini-nosave"], READ, 100, 1, reps)
    log("Bash steps, arnes vs mini-swe-agent:")
    bash = bench_steps(["arnes", "mini"], BASH, 100, 1, reps)
    a, m = per(read["arnes"]), per(read["mini-nosave"])
    b, mb = per(bash["arnes"]), per(bash["mini"])
    return [
        ("Read step, steps 1-100 (wall)", f"{a:.2f} ms", f"mini-swe-agent {m:.2f} ms", ratio(a, m)),
        ("Bash `echo` step, steps 1-100 (wall)", f"{b:.2f} ms", f"mini-swe-agent {mb:.2f} ms", ratio(b, mb)),
    ]


def longrun_rows(steps: int) -> list[Row]:
    log(f"{steps} Read steps in one session (bench_longrun.py flat):")
    bench_longrun.SERVER_SECONDS.clear()
    events = bench_longrun.run(steps, "openai", None, 0)
    stamps = [e["ts"] for e in events if e["event"] == "model_request"]
    times = [dt.datetime.fromisoformat(t).timestamp() for t in stamps]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    first, last = statistics.mean(gaps[:100]) * 1000, statistics.mean(gaps[-100:]) * 1000
    server = bench_longrun.SERVER_SECONDS[1:]
    s_first, s_last = statistics.mean(server[:100]) * 1000, statistics.mean(server[-100:]) * 1000
    n = len(gaps)
    return [
        (f"Read step, steps {n - 99}-{n} (wall)", f"{last:.2f} ms",
         f"steps 1-100 {first:.2f} ms; fake server's own {s_first:.2f} -> {s_last:.2f} ms", ratio(last, first)),
        (f"Read step, steps {n - 99}-{n}, arnes's share (wall minus the server's)", f"{last - s_last:.2f} ms",
         f"steps 1-100 {first - s_first:.2f} ms", ratio(last - s_last, first - s_first)),
    ]  # fmt: skip


def search_rows(reps: int) -> list[Row]:
    log("Grep and Glob on 50,000 files (bench_search.py):")
    tree = Path("/tmp/arnes-bench-tree")
    bench_search.build(tree)
    from arnes.tools.search import ripgrep

    rg = ripgrep()
    out: list[Row] = []
    for title, ours, theirs in bench_search.CASES:
        peaks: dict[str, float] = {}

        def side(case: str, peaks: dict[str, float] = peaks) -> Callable[[], float]:
            def once() -> float:
                wall, _, rss = bench_search.child(case, tree, rg)
                peaks[case] = max(peaks.get(case, 0.0), rss)
                return wall

            return once

        a, b, r = paired(side(ours), side(theirs), reps)
        out.append((f"{title}, 50k files", f"{a * 1000:.0f} ms, {peaks[ours]:.0f} MB",
                    f"`rg` {b * 1000:.0f} ms, {peaks[theirs]:.0f} MB", f"{r:.2f}x"))  # fmt: skip
        log(f"  {title}: {a * 1000:.0f} ms vs {b * 1000:.0f} ms")
    return out


def judgement_rows() -> list[Row]:
    log("shell judgement, a 200-part command against 200 rules (bench_permissions.py):")
    done = subprocess.run([sys.executable, str(BENCH / "bench_permissions.py"), "--calls", "20000"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    line = next(x for x in done.stdout.splitlines() if "200-part" in x)
    millis = float(line.rsplit("median", 1)[1].split()[0])
    return [("shell judgement, 200-part command, 200 rules", f"{millis:.2f} ms", "target < 20 ms", "-")]


def mcp_rows(reps: int) -> list[Row]:
    log("start-up to the banner, three MCP servers vs none (bench_mcp_startup.py):")
    with tempfile.TemporaryDirectory() as tmp:
        script, plain, three = bench_mcp_startup.workspaces(Path(tmp))
        bench_mcp_startup.to_banner(plain, script)
        b, a, r = paired(lambda: bench_mcp_startup.to_banner(plain, script),
                         lambda: bench_mcp_startup.to_banner(three, script), reps)  # fmt: skip
    return [("start-up to the banner, three MCP servers", f"{a * 1000:.0f} ms", f"no server {b * 1000:.0f} ms",
             f"{1 / r:.2f}x")]  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=3, help="paired repetitions of each figure (default 3)")
    p.add_argument("--startup-runs", type=int, default=10)
    p.add_argument("--long-steps", type=int, default=1000)
    p.add_argument("--no-write", action="store_true", help="print the block; leave bench/README.md alone")
    args = p.parse_args()
    started, load_before = time.perf_counter(), load()
    machine = machine_info(None)
    ensure_mini(MINI_SPEC)
    rows = [
        *startup_rows(args.startup_runs),
        *step_rows(args.reps),
        *longrun_rows(args.long_steps),
        *search_rows(args.reps * 2 + 1),
        *judgement_rows(),
        *mcp_rows(args.reps * 2 + 1),
    ]
    took = time.perf_counter() - started
    command = "python bench/bench_all.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    lines = [
        f"Measured {machine['date']} with `{command}` (project venv active, from the repository root), "
        f"in {took / 60:.0f} min; arnes {machine['arnes']}.",
        "",
        f"Machine: {lscpu()}; {machine['memory']}; {machine['os']}; {machine['python']}. "
        f"Load average (1 / 5 / 15 min) {load_before} at the start, {load()} at the end.",
        "",
        "| figure | arnes | peer / floor | ratio |",
        "|---|---:|---|---:|",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
    ]
    block = "\n".join(lines)
    print(block)
    if not args.no_write:
        text = README.read_text(encoding="utf-8")
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", encoding="utf-8")
        log(f"wrote the block into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
