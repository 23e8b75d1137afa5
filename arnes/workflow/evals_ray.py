"""Evals on a Ray cluster (DESIGN §14): each (task, repeat) is a Ray task that unpacks the task on
its worker, runs arnes there exactly as a local run does (`evals.run_one`), and sends back the
record and the trace. `ray` is an optional extra, imported only here."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.workflow import evals

# Ray's own processes listen on 127.0.0.1 only when this is set in every one of them (head, workers,
# driver); without it a local cluster listens on every interface (measured with Ray 2.60).
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


class Interrupted(Exception):
    """Ctrl-C during a Ray batch: the runs that finished, for a partial report."""

    def __init__(self, records: list[evals.RunRecord]):
        super().__init__("interrupted")
        self.records = records


def _ray() -> Any:
    os.environ.update(LOOPBACK_ENV)  # before the import: Ray reads it when its modules load
    try:
        import ray
    except ImportError as exc:
        raise ConfigError('--backend ray needs Ray: pip install "arnes[ray]"') from exc
    return ray


def pack(folder: Path) -> bytes:
    """The task folder (task.md, workspace/, verify, script.json) as one tar, sent to the worker."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname="task", filter=lambda info: None if info.issym() or info.islnk() else info)
    return buffer.getvalue()


def run_packed(
    packed: bytes, name: str, prompt: str, verify: str, attempt: int, agent_argv: evals.AgentArgv, timeout: float
) -> tuple[dict[str, Any], str]:
    """On the worker: unpack, run like a local run, return the record and the trace's text."""
    with tempfile.TemporaryDirectory(prefix=f"arnes-ray-{name}-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")
        task = evals.EvalTask(name, Path(tmp) / "task", prompt, verify)
        traces = Path(tmp) / "traces"
        traces.mkdir()
        record = evals.run_one(task, attempt, agent_argv, timeout, traces)
        trace = traces / evals.trace_name(task, attempt)
        text = trace.read_text(encoding="utf-8", errors="replace") if trace.is_file() else ""
        worker = _worker_id()
        return asdict(replace(record, worker=worker)), text


def _worker_id() -> str:
    ray = _ray()
    return str(ray.get_runtime_context().get_node_id())


@contextmanager
def connected(address: str | None) -> Iterator[Any]:
    """Ray, connected to the cluster at `address`, or to a new local one on 127.0.0.1 only."""
    ray = _ray()
    try:
        if address:
            local = address.split(":")[0] in ("127.0.0.1", "localhost")
            where = {"_node_ip_address": "127.0.0.1"} if local else {}  # a driver on loopback stays there
            ray.init(address=address, log_to_driver=False, configure_logging=False, **where)
        else:
            ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                     configure_logging=False)  # fmt: skip
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"--ray-address {address or '(local)'}: cannot join the Ray cluster: {exc}") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


def run_all(
    tasks: list[evals.EvalTask],
    repeat: int,
    agent_argv: evals.AgentArgv,
    traces: Path,
    timeout: float,
    address: str | None,
    link: Path | None = None,
) -> list[evals.RunRecord]:
    traces.mkdir(parents=True, exist_ok=True)
    with connected(address) as ray:
        remote = ray.remote(num_cpus=1, max_retries=1)(run_packed)  # a dead worker's run is tried once more
        packed = {task.name: ray.put(pack(task.folder)) for task in tasks}
        jobs = [(task, attempt) for task in tasks for attempt in range(1, repeat + 1)]
        refs = [
            remote.options(scheduling_strategy="SPREAD").remote(
                packed[task.name], task.name, task.prompt, task.verify, attempt, agent_argv, timeout
            )
            for task, attempt in jobs
        ]
        records: list[evals.RunRecord] = []
        try:
            for (task, attempt), ref in zip(jobs, refs, strict=True):
                records.append(_collect(ray, ref, task, attempt, traces, link))
        except KeyboardInterrupt:
            for ref in refs[len(records) :]:
                ray.cancel(ref, force=True)
            raise Interrupted(records) from None
        return records


def _collect(
    ray: Any, ref: Any, task: evals.EvalTask, attempt: int, traces: Path, link: Path | None
) -> evals.RunRecord:
    """One run's record, its trace written beside the report; a worker lost twice is an error."""
    try:
        data, text = ray.get(ref)
    except ray.exceptions.RayError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return evals.RunRecord(task.name, attempt, False, "error", 0, 0, 0.0, 0.0, -1,
                               error=f"the Ray worker failed (after one retry): {reason}")  # fmt: skip
    trace = traces / evals.trace_name(task, attempt)
    trace.write_text(text, encoding="utf-8")
    data["trace"] = evals.shown_path(trace, link)
    return evals.RunRecord(**data)
