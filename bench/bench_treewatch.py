"""What watching the workspace for shell commands' writes costs on a big tree.

Run: python bench/bench_treewatch.py [--files 50000]
Builds a workspace of 2,000 source files plus FILES in node_modules (gitignored) and .venv, then
times the snapshot taken before the session's first command (`walk`) and the report at the end
(a second walk, the comparison and ripgrep's list of not-ignored files), after one command wrote
a file, a .pth in .venv and 100 files in node_modules. Both run once per session, not per command.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from arnes.tools.treewatch import TreeWatch, walk


def build(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("node_modules/\n")
    for i in range(2000):
        folder = root / "src" / f"pkg{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i}.py").write_text("x = 1\n")
    for i in range(files):
        base = "node_modules" if i % 2 else ".venv/lib/python3.11/site-packages"
        folder = root / base / f"dep{i // 200}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.js").write_text("")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=5)
    opts = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="arnes-bench-tree-", dir="/var/tmp"))
    try:
        build(root, opts.files)
        walks, reports = [], []
        for rep in range(opts.reps):
            start = time.perf_counter()
            tree = walk(root)
            walks.append(time.perf_counter() - start)
            assert tree is not None
            watch = TreeWatch(root, early=False)
            watch.before_command()
            (root / "src" / f"new{rep}.py").write_text("y = 2\n")
            (root / ".venv" / f"evil{rep}.pth").write_text("import os\n")
            for i in range(100):
                (root / "node_modules" / "dep0" / f"added{rep}-{i}.js").write_text("")
            start = time.perf_counter()
            report = watch.report()
            reports.append(time.perf_counter() - start)
            assert f"src/new{rep}.py" in report.named and f".venv/evil{rep}.pth" in report.runs_code
        total = len(tree)
        print(f"workspace of {total} files ({opts.files} in node_modules and .venv), medians of {opts.reps}:")
        print(f"- snapshot before the first command: {statistics.median(walks) * 1000:.0f} ms")
        print(f"- report at the end (walk + compare + ripgrep listing): {statistics.median(reports) * 1000:.0f} ms")
        per_file = statistics.median(walks) / total * 1e6
        print(f"- {per_file:.2f} µs per file walked")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
