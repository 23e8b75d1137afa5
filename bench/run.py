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

The parts live in bench/runlib/: harness.py (what all share: the fake server, child processes,
the machine, mini-swe-agent's venv), startup.py, steps.py (the per-step loop), bash_variant.py
and report.py.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

from runlib.bash_variant import BASH, arnes_has_bash
from runlib.harness import (
    BENCH,
    MINI_SPEC,
    README,
    ROOT,
    child_env,
    ensure_mini,
    log,
    machine_info,
    use_snapshot,
    write_readme,
)
from runlib.report import report
from runlib.startup import bench_startup
from runlib.steps import AGENTS, ALL_AGENTS, READ, bench_steps, profile_arnes


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

    snapshot_dir = None
    if args.rev:
        snapshot_dir = tempfile.TemporaryDirectory(prefix="arnes-bench-rev-")
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev, "arnes"], capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"bench: git archive {args.rev} failed: {archive.stderr.decode()[-500:]}")
        subprocess.run(["tar", "-x", "-C", snapshot_dir.name], input=archive.stdout, check=True)
        use_snapshot(snapshot_dir.name)
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
