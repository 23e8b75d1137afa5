"""Evals on a real local Ray cluster: a head and one more node, both on 127.0.0.1 only.

One cluster for the module (it takes seconds to start); every process it started is stopped by
the cluster's own shutdown, which knows their ids."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_arnes

# Before Ray is imported (it reads this when its modules load): every listener stays on 127.0.0.1.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
if os.environ.get("ARNES_REQUIRE_RAY"):  # CI installs the extra: a missing Ray fails there, it does not skip
    import ray.cluster_utils as ray_cluster_utils
else:
    ray_cluster_utils = pytest.importorskip("ray.cluster_utils")

LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    saved = {k: os.environ.get(k) for k in LOOPBACK}
    os.environ.update(LOOPBACK)  # inherited by every Ray process the cluster starts
    node = {"num_cpus": 1, "node_ip_address": "127.0.0.1"}
    started = ray_cluster_utils.Cluster(
        initialize_head=True, connect=False, head_node_args={**node, "include_dashboard": False}
    )
    try:
        started.add_node(**node)
        started.wait_for_nodes()
        yield started
    finally:
        started.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _pids(cluster: Any) -> set[int]:
    """Every process the cluster started, and their children."""
    roots = {p.process.pid for n in cluster.list_all_nodes() for ps in n.all_processes.values() for p in ps}
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _listening_addresses(pids: set[int]) -> list[str]:
    """The local addresses of the TCP sockets these processes listen on (from /proc, no psutil)."""
    inodes: set[str] = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                addresses.append(cols[1].split(":")[0])
    return addresses


def run_eval(tmp_path: Path, name: str, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    run = run_arnes("--provider", "script", "eval", "--out", str(out), *extra, timeout=600)
    assert run.code == 0, run.out + run.err
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def test_a_ray_eval_reports_like_a_local_one_and_spreads_over_the_nodes(cluster: Any, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"  # four of the built-in tasks: enough for both nodes, a minute less of CI
    built_in = sorted(p for p in Path(str(resources.files("arnes.evals"))).iterdir() if (p / "task.md").exists())
    for task in built_in[:4]:
        shutil.copytree(task, tasks / task.name)
    local = run_eval(tmp_path, "local", str(tasks))
    remote = run_eval(tmp_path, "ray", str(tasks), "--backend", "ray", "--ray-address", cluster.address)
    assert remote["overall"]["passed"] == local["overall"]["passed"] == local["overall"]["runs"] == 4
    assert {n: t["passed"] for n, t in remote["tasks"].items()} == {n: t["passed"] for n, t in local["tasks"].items()}
    assert set(remote) == set(local) and set(remote["overall"]) == set(local["overall"])
    assert [set(r) for r in remote["runs"]] == [set(r) for r in local["runs"]]
    workers = {r["worker"] for r in remote["runs"]}
    assert len(workers) == 2 and "local" not in workers, workers  # both nodes ran some
    for run in remote["runs"]:
        trace = (tmp_path / run["trace"]).read_text().splitlines()
        assert json.loads(trace[0])["event"] == "session_start" and json.loads(trace[-1])["event"] == "session_end"
    # loopback only: every listener of every process the cluster started is on 127.0.0.1
    addresses = _listening_addresses(_pids(cluster))
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, and as ::ffff:127.0.0.1
    assert addresses and set(addresses) <= loopback, addresses


def test_a_worker_that_dies_is_retried_once_then_reported_as_an_error(cluster: Any, tmp_path: Path) -> None:
    from arnes.workflow import evals, evals_ray

    tasks = evals.discover(Path(str(resources.files("arnes.evals"))))[:1]
    calls = tmp_path / "calls"
    calls.mkdir()

    def die(task: evals.EvalTask, workspace: Path, trace: Path) -> list[str]:
        (calls / f"{os.getpid()}").write_text("x")  # one file per worker process that tried
        os._exit(1)  # the worker process dies under the run

    [record] = evals_ray.run_all(tasks, 1, die, tmp_path / "traces", 60, cluster.address)
    assert record.error is not None and "after one retry" in record.error and not record.passed
    assert len(list(calls.iterdir())) == 2  # the first try and the one retry


def test_ctrl_c_cancels_the_rest_and_still_writes_the_partial_report(cluster: Any, tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    from tests.conftest import ARNES

    evals_dir = tmp_path / "evals"
    for name, turns in (("a-fast", [{"text": "done"}]), ("b-slow", [{"sleep": 300, "text": "thinking"}])):
        task = evals_dir / name
        (task / "workspace").mkdir(parents=True)
        (task / "task.md").write_text("hi\n")
        (task / "verify").write_text("true\n")
        (task / "script.json").write_text(json.dumps({"turns": turns}))
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [ARNES, "--provider", "script", "eval", str(evals_dir), "--backend", "ray", "--ray-address", cluster.address,
         "--out", str(out)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    fast_trace = tmp_path / "r.traces" / "a-fast-1.jsonl"
    deadline = time.monotonic() + 120
    while not fast_trace.exists() and time.monotonic() < deadline:  # a-fast collected: b-slow is still out
        time.sleep(0.1)
    assert fast_trace.exists()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    report = json.loads(out.read_text())
    assert [r["task"] for r in report["runs"]] == ["a-fast"] and "interrupted" in err
