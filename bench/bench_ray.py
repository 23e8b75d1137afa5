"""The Ray backend's overhead per run against the local backend, on the same scripted tasks.

Starts a warm two-node Ray cluster on 127.0.0.1 (one CPU each), then runs the built-in eval set
with the scripted model alternately with `--backend local --workers 2` and `--backend ray`
against that cluster, and prints the wall time per run of each and the difference.

    python bench/bench_ray.py --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before Ray loads: loopback only

ARNES = str(Path(sys.executable).parent / "arnes")
RUNS = 9  # the built-in set, one repeat


def batch(extra: list[str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run(
            [ARNES, "--provider", "script", "eval", "--out", f"{tmp}/r.json", *extra],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"eval failed: {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    from ray.cluster_utils import Cluster

    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    reps = parser.parse_args().reps
    node = {"num_cpus": 1, "node_ip_address": "127.0.0.1"}
    cluster = Cluster(initialize_head=True, connect=False, head_node_args={**node, "include_dashboard": False})
    try:
        cluster.add_node(**node)
        cluster.wait_for_nodes()
        ray_args = ["--backend", "ray", "--ray-address", cluster.address]
        batch(ray_args)  # warm: workers started, arnes imported once on each
        local, remote = [], []
        for _ in range(reps):
            local.append(batch(["--workers", "2"]))
            remote.append(batch(ray_args))
    finally:
        cluster.shutdown()
    lo, re_ = statistics.median(local) / RUNS, statistics.median(remote) / RUNS
    print(f"local (2 workers): {lo:.3f} s per run   ray (2 nodes, warm): {re_:.3f} s per run")
    print(f"Ray overhead per run: {re_ - lo:+.3f} s (median of {reps} batches of {RUNS} runs each)")


if __name__ == "__main__":
    main()
