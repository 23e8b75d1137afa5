"""What rewind's checkpoints cost, beside the floor: `git add -A && git write-tree` into a fresh repository.

Run: python bench/bench_rewind.py [--files 20000] [--mb 200] [--reps 3]
Builds a workspace of FILES source-like text files (~MB in total) in /var/tmp, then, REPS times,
alternating so that a busy machine slows both alike:
  - the floor: a fresh GIT_DIR outside the tree, `git add -A && git write-tree` (git reads,
    hashes, compresses and writes every file, as a first checkpoint must);
  - arnes's first checkpoint of a session in an empty store (Checkpoints.begin);
  - a later checkpoint after a turn that changed 10 files (Checkpoints.end), and one after a turn
    that changed nothing.
Peak memory of this process (ru_maxrss) is printed beside: contents are read in batches of at
most 32 MB, never the whole tree.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from arnes.rewind.checkpoints import Checkpoints
from arnes.rewind.store import Store

WORDS = "def return class import self value for in if else print data result items total name".split()


def build(root: Path, files: int, mb: int) -> int:
    rng = random.Random(7)
    mean = mb * (1 << 20) // files
    total = 0
    for i in range(files):
        folder = root / f"pkg{i // 2000}" / f"mod{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.randint(mean // 4, mean * 7 // 4)
        words = []
        length = 0
        while length < size:
            word = rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        text = " ".join(words)[:size]
        (folder / f"f{i}.py").write_text(text)
        total += len(text)
    return total


def floor(tree: Path, scratch: Path) -> float:
    git_dir = scratch / "floor.git"
    shutil.rmtree(git_dir, ignore_errors=True)
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(tree)}
    subprocess.run(["git", "init", "-q"], env=env, check=True)
    start = time.perf_counter()
    subprocess.run("git add -A && git write-tree", shell=True, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def change(tree: Path, files: int, count: int, rep: int) -> None:
    for i in range(count):
        path = tree / f"pkg{i // 2000}" / f"mod{i // 100}" / f"f{i}.py"
        path.write_text(f"changed in rep {rep}\n" + path.read_text()[:1000])


def _each(values: list[float]) -> list[float]:
    return [round(x, 2) for x in values]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    opts = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="arnes-bench-rewind-", dir="/var/tmp"))
    tree = scratch / "tree"
    try:
        size = build(tree, opts.files, opts.mb)
        floors, firsts, laters, idles = [], [], [], []
        for rep in range(opts.reps):
            floors.append(floor(tree, scratch))
            store_root = scratch / f"store{rep}"
            checkpoints = Checkpoints(tree, "bench", Store(store_root))
            start = time.perf_counter()
            checkpoints.begin("turn", "first")
            firsts.append(time.perf_counter() - start)
            time.sleep(2.1)  # past the "racy" window: files written in the last 2 s are read again
            change(tree, opts.files, 10, rep)
            time.sleep(2.1)
            start = time.perf_counter()
            checkpoints.end()
            laters.append(time.perf_counter() - start)
            assert checkpoints.last is not None and checkpoints.last.files_read == 10, checkpoints.last
            start = time.perf_counter()
            checkpoints.begin("turn", "second")
            idles.append(time.perf_counter() - start)
            stored = Store(store_root).size()
            shutil.rmtree(store_root)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        med = statistics.median
        print(f"tree: {opts.files} files, {size / (1 << 20):.0f} MB; medians of {opts.reps}")
        print(f"  floor, git add -A && git write-tree (fresh repo): {med(floors):.2f} s  {_each(floors)}")
        print(f"  arnes first checkpoint (empty store):             {med(firsts):.2f} s  {_each(firsts)}")
        print(f"  ratio arnes / git:                                {med(firsts) / med(floors):.2f}x")
        print(f"  later checkpoint, a turn that changed 10 files:   {med(laters) * 1000:.0f} ms")
        print(f"  later checkpoint, a turn that changed nothing:    {med(idles) * 1000:.0f} ms")
        print(f"  store size after one session: {stored / (1 << 20):.0f} MB; peak RSS of this process: {peak:.0f} MB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
