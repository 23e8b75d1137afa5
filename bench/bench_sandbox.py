"""What the sandbox costs per shell command, and what every request pays before the conversation.

Run: python bench/bench_sandbox.py [--runs 50]
     python bench/bench_sandbox.py --compare REV [--rounds 7]   # this tree against REV, A/B
Each backend runs `echo hi` through the Bash tool (as the agent does) in a fresh workspace;
the median wall time per command is reported, and the difference to `--sandbox off`.
`--compare` runs this working tree and `git archive REV` in alternating child processes (so
load from other work on the machine hits both alike) and reports the medians of the rounds, wall
and CPU (user + system of the command's processes and of arnes itself), and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def per_command(mode: str, runs: int) -> tuple[float, float]:
    """(median wall ms, mean CPU ms) of one `echo hi` through the Bash tool."""
    from arnes.llm.script import ScriptProvider
    from arnes.session import Session
    from arnes.tools.bash import Bash, BashArgs

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(workspace=Path(tmp), provider=ScriptProvider.from_turns([]), sandbox_mode=mode)  # type: ignore[arg-type]
        tool, args = Bash(), BashArgs(command="echo hi")
        tool.run(args, session.ctx)  # warm up (and the first command's workspace snapshot)
        samples = []
        cpu_before = _cpu()
        for _ in range(runs):
            start = time.perf_counter()
            tool.run(args, session.ctx)
            samples.append((time.perf_counter() - start) * 1000)
        return statistics.median(samples), (_cpu() - cpu_before) * 1000 / runs


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compare(rev: str, rounds: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as old_tree:
        archive = subprocess.run(["git", "archive", rev, "arnes"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", old_tree], input=archive.stdout, check=True)
        trees = {"this tree": str(ROOT), rev: old_tree}
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for i in range(rounds):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for name in order:
                env = {**os.environ, "PYTHONPATH": trees[name]}
                child = [sys.executable, __file__, "--child", "--runs", str(runs)]
                done = subprocess.run(child, env=env, capture_output=True, text=True, check=True)
                results[name].append(tuple(json.loads(done.stdout)))  # type: ignore[arg-type]
    print(f"bubblewrap, `echo hi` through the Bash tool: medians of {rounds} alternating rounds of {runs} commands")
    print("| tree | wall per command | CPU per command |\n| --- | ---: | ---: |")
    medians = {}
    for name, samples in results.items():
        wall, cpu = statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)
        medians[name] = (wall, cpu)
        print(f"| {name} | {wall:.2f} ms | {cpu:.2f} ms |")
    (new_wall, new_cpu), (old_wall, old_cpu) = medians["this tree"], medians[rev]
    print(f"ratio this tree / {rev}: wall {new_wall / old_wall:.2f}x, CPU {new_cpu / old_cpu:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--compare", metavar="REV", help="A/B against git revision REV (bubblewrap only)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(per_command("bubblewrap", opts.runs)))
        return
    if opts.compare:
        compare(opts.compare, opts.rounds, opts.runs)
        return
    from arnes.agent.context import fixed_tokens
    from arnes.llm.script import ScriptProvider
    from arnes.sandbox.bubblewrap import Bubblewrap
    from arnes.sandbox.landlock import LandlockSandbox
    from arnes.session import Session

    off, _ = per_command("off", opts.runs)
    print(f"sandbox off:        {off:.2f} ms per `echo hi`")
    for name, backend in (("bubblewrap", Bubblewrap), ("landlock", LandlockSandbox)):
        problem = backend.unavailable()
        if problem:
            print(f"sandbox {name}: unavailable here ({problem})")
            continue
        cost, _ = per_command(name, opts.runs)
        print(f"sandbox {name + ':':<11} {cost:.2f} ms per `echo hi` (+{cost - off:.2f} ms start-up per command)")
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(workspace=Path(tmp), provider=ScriptProvider.from_turns([]))
        tokens = fixed_tokens(session.system_prompt(), session.tools.specs())
        print(f"system prompt + {len(session.tools.names())} tool schemas: {tokens} tokens (4 characters a token)")


if __name__ == "__main__":
    main()
