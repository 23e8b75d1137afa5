"""How long one permission decision takes with 200 rules loaded (target: median under 50 µs),
and one shell command of 200 parts judged against 200 Bash rules (target: under 20 ms).

Run: python bench/bench_permissions.py [--rules 200] [--calls 20000]
The worst case is measured: every rule is a Read rule (all are candidates for a Read call) and
none matches, so the engine must look at all of them, on both the written and the real path.
The command is 200 read-only and allowed parts (each judged against every rule of its kind,
its paths against the path rules), so nothing stops the walk early.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Target, ToolRequest


def rules(n: int) -> list[SourcedRule]:
    kinds = ("deny", "ask", "allow")
    shapes = ("Read(**/secret{i}/**)", "Read(src/module{i}/*.key)", "Read(/opt/data{i}/**)", "Read(~/private{i}/*)")
    return [SourcedRule(kinds[i % 3], shapes[i % 4].format(i=i), "bench") for i in range(n)]


def measure(n_rules: int, calls: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "src" / "pkg").mkdir(parents=True)
        (ws / "src" / "pkg" / "mod.py").write_text("x = 1\n")
        engine = RuleEngine(ws, "default", rules(n_rules))
        results: dict[str, float] = {}
        cases = {
            "read, no rule matches (worst case)": ToolRequest(
                "Read", {}, (Target(ws / "src" / "pkg" / "mod.py", "read"),)
            ),
            "write, no rule matches": ToolRequest("Edit", {}, (Target(ws / "src" / "pkg" / "mod.py", "write"),), False),
            "read, a deny rule matches": ToolRequest("Read", {}, (Target(ws / "a" / "secret0" / "k", "read"),)),
        }
        for name, request in cases.items():
            samples = []
            for _ in range(calls):
                start = time.perf_counter_ns()
                engine.decide(request)
                samples.append(time.perf_counter_ns() - start)
            results[name] = statistics.median(samples) / 1000
        return results


def command_rules(n: int) -> list[SourcedRule]:
    kinds = ("deny", "ask", "allow")
    shapes = ("Bash(tool{i} run:*)", "Bash(npm run job{i})", "Bash(git push origin b{i}:*)", "Read(**/secret{i}/**)")
    return [SourcedRule(kinds[i % 3], shapes[i % 4].format(i=i), "bench") for i in range(n)]


COMMAND_PARTS = ("git status", "ls -la src", "cat src/pkg/mod.py", "grep -n x src/pkg/mod.py", "npm run job5",
                 "wc -l src/pkg/mod.py", "head -3 src/pkg/mod.py", "echo done")  # fmt: skip


def measure_command(n_rules: int, n_parts: int, calls: int) -> float:
    """Median milliseconds for one decision on a compound command of `n_parts` parts."""
    command = " && ".join(COMMAND_PARTS[i % len(COMMAND_PARTS)] for i in range(n_parts))
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "src" / "pkg").mkdir(parents=True)
        (ws / "src" / "pkg" / "mod.py").write_text("x = 1\n")
        engine = RuleEngine(ws, "default", command_rules(n_rules))
        request = ToolRequest("Bash", {}, (), False, command)
        assert engine.decide(request).kind == "allow", engine.decide(request)
        samples = []
        for _ in range(calls):
            start = time.perf_counter_ns()
            engine.decide(request)
            samples.append(time.perf_counter_ns() - start)
        return statistics.median(samples) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20000)
    opts = parser.parse_args()
    for name, micros in measure(opts.rules, opts.calls).items():
        print(f"{opts.rules} rules, {name}: median {micros:.1f} µs")
    millis = measure_command(opts.rules, 200, max(20, opts.calls // 1000))
    print(f"{opts.rules} rules, a 200-part compound command: median {millis:.2f} ms")


if __name__ == "__main__":
    main()
