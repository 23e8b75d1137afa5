"""What finding nested git repositories costs on a tree with many folders (sandbox/repos.py).

Run: python bench/bench_nested_git.py [--folders 50000] [--reps 5]
Builds a workspace of FOLDERS folders (a node_modules-like tree: 20 files each, half of them in
node_modules, half in .venv) with 20 nested repositories, then times the record made when the
sandbox starts (`gitguard.start`: the walk and a fingerprint of each repository, in a background
thread from the session's start; the first command waits for it) and the check after each
command (`gitguard.check`: one lstat per folder that did not change, judging nothing).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from arnes.sandbox.gitguard import check, start
from arnes.sandbox.repos import RACY_NS, Walker


def build(root: Path, folders: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(folders):
        base = "node_modules" if i % 2 else ".venv/lib/python3.11/site-packages"
        folder = root / base / f"dep{i // 50}" / f"sub{i}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(20):
            (folder / f"f{j}.js").write_text("")
    for i in range(20):
        subprocess.run(["git", "init", "-q", str(root / "vendor" / f"lib{i}")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folders", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=5)
    opts = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="arnes-bench-repos-", dir="/var/tmp"))
    try:
        build(root, opts.folders)
        time.sleep(RACY_NS / 1e9)  # folders changed this recently are listed again by every check: not a steady state
        starts, checks = [], []
        for _ in range(opts.reps):
            walker = Walker(root)
            began = time.perf_counter()
            before = start(walker)
            starts.append(time.perf_counter() - began)
            assert len(before.found.repos) == 20 and before.found.complete
            began = time.perf_counter()
            assert check(walker, before) == []
            checks.append(time.perf_counter() - began)
        folders = sum(1 for p in root.rglob("*") if p.is_dir())
        print(f"workspace of {folders:,} folders, {opts.folders * 20:,} files, 20 nested repositories; "
              f"medians of {opts.reps}:")  # fmt: skip
        print(f"  record at start: {statistics.median(starts) * 1000:.0f} ms")
        print(f"  check after a command: {statistics.median(checks) * 1000:.0f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
