"""Grep and Glob on a big tree, side by side with raw ripgrep: wall time and peak memory.

Builds (once) a tree of 50,000 files / ~500 MB under /tmp (never in the repository), then runs
each case in a child process, so its peak RSS (the child's and rg's, from RUSAGE_CHILDREN) is
its own. Medians of --reps runs. Not part of the test suite.

    python bench/bench_search.py [--tree /tmp/arnes-bench-tree] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

FILES, DIRS = 50_000, 500
LINE = "def handler_{n}(value):  # needle: a line the pattern matches, repeated to make the tree big\n"
FILLER = "    return value * 2 + 1  # some code that does not match the pattern at all, padding\n"

# The child: runs one case twice and prints the second one's wall time (the call alone: not
# Python's start-up, nor the first call's warm-up, on either side).
CHILD = r"""
import json, subprocess, sys, time
from pathlib import Path
case, tree, rg = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
def raw(argv, keep=None):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    for _ in proc.stdout:
        n += 1
        if keep is not None and n >= keep:
            break
    proc.kill(); proc.wait()
    return time.perf_counter() - start, n
if case.startswith("arnes"):
    from arnes.tools.base import ToolContext
    from arnes.tools.search import Glob, Grep
    ctx = ToolContext(tree)
    def call():
        if case == "arnes-grep":
            return Grep().run(Grep.args_model(pattern="needle", output_mode="content"), ctx)
        if case == "arnes-grep-files":
            return Grep().run(Grep.args_model(pattern="needle"), ctx)
        return Glob().run(Glob.args_model(pattern="**/*.py"), ctx)
    call()  # warm, as in a session: the second call is timed
    start = time.perf_counter()
    out = call()
    wall, n = time.perf_counter() - start, out.count("\n") + 1
else:
    base = [rg, "--no-require-git", "--hidden", "--color", "never", "--no-messages"]
    once = {
        "rg-grep-250": lambda: raw([*base, "--line-number", "--with-filename", "needle", "."], keep=250),
        "rg-grep-all": lambda: raw([*base, "--line-number", "--with-filename", "needle", "."]),
        "rg-files-with-matches": lambda: raw([*base, "--files-with-matches", "needle", "."]),
        "rg-files-py": lambda: raw([*base, "--files", "--type-add", "x:*.py", "--type", "x", "."]),
        "rg-files": lambda: raw([*base, "--files", "."]),
    }[case]
    once()  # warm, as for arnes
    wall, n = once()
print(json.dumps({"wall": wall, "lines": n}))
"""

CASES = [
    ("Grep content, default cap (250 lines)", "arnes-grep", "rg-grep-250"),
    ("Grep files_with_matches (newest 250)", "arnes-grep-files", "rg-files-with-matches"),
    ("Glob **/*.py (first 100 by path of 25,000)", "arnes-glob", "rg-files-py"),
]


def build(tree: Path) -> None:
    """50,000 files in 500 folders, ~10 kB each; one line in ten matches `needle`."""
    if (tree / ".complete").exists():
        return
    body = "".join(LINE.format(n=i) if i % 10 == 0 else FILLER for i in range(115))
    for d in range(DIRS):
        folder = tree / f"pkg{d // 20:02}" / f"mod{d:03}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(FILES // DIRS):
            (folder / (f"f{f:03}.py" if f % 2 else f"f{f:03}.txt")).write_text(body)
    (tree / ".complete").write_text("")


def child(case: str, tree: Path, rg: str) -> tuple[float, int, float]:
    """(wall seconds, lines printed, peak RSS in MB of the child or any process it ran)."""
    script = f"import resource, subprocess, sys\nout = subprocess.run([sys.executable, '-c', {CHILD!r}, *sys.argv[1:]], capture_output=True, text=True, check=True).stdout\nprint(out.strip() + '|' + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))"  # noqa: E501
    done = subprocess.run(
        [sys.executable, "-c", script, case, str(tree), rg], capture_output=True, text=True, check=True
    )
    data, rss = done.stdout.strip().rsplit("|", 1)
    parsed = json.loads(data)
    return float(parsed["wall"]), int(parsed["lines"]), int(rss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path("/tmp/arnes-bench-tree"))
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    build(args.tree)
    size = sum(p.stat().st_size for p in args.tree.rglob("*") if p.is_file()) / 1e6
    print(f"tree: {args.tree} ({FILES} files, {size:.0f} MB; built/checked in {time.perf_counter() - started:.1f} s)")
    from arnes.host.ripgrep import ripgrep

    rg = ripgrep()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {rg}")
    print(f"{'case':40} {'arnes ms':>9} {'MB':>6} {'rg ms':>8} {'MB':>6} {'ratio':>6}")
    for title, ours, theirs in CASES:
        runs: dict[str, list[tuple[float, int, float]]] = {ours: [], theirs: []}
        for _ in range(args.reps):  # paired, alternating: drift on a shared machine hits both
            for case in (ours, theirs):
                runs[case].append(child(case, args.tree, rg))
        a, b = (statistics.median(r[0] for r in runs[c]) * 1000 for c in (ours, theirs))
        ma, mb = (max(r[2] for r in runs[c]) for c in (ours, theirs))
        print(f"{title:40} {a:9.0f} {ma:6.0f} {b:8.0f} {mb:6.0f} {a / b:5.2f}x")
    for reference in ("rg-grep-all", "rg-files"):
        wall, lines, rss = child(reference, args.tree, rg)
        print(f"reference {reference}: {wall * 1000:.0f} ms, {lines} lines, {rss:.0f} MB")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"MB: peak RSS (ru_maxrss) of the child and anything it ran, rg included; this process: {own} MB")


if __name__ == "__main__":
    main()
