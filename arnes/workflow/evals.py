"""Evals: run each task several times on a fresh copy, verify it, and report pass rates.

A task is a folder with `task.md` (the prompt), `workspace/` (the starting files) and `verify`
(a shell command run in the copy). An optional `script.json` is its scripted trajectory, used
with `--provider script`, so the machinery itself is tested without a model.

A run that never got a model to work (unreachable, refused, a crash of arnes itself) is an
*error*, counted apart from failures: a pass rate of 0 % must mean the agent failed the tasks,
not that no model was there. Every run's trace is kept, so a low score can be studied.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.host.files import HostFiles
from arnes.nesting import json_loads
from arnes.sandbox.base import Sandbox
from arnes.workflow.verify import run_check


@dataclass(frozen=True)
class EvalTask:
    name: str
    folder: Path
    prompt: str
    verify: str

    @property
    def script(self) -> Path | None:
        return self.folder / "script.json" if HostFiles(self.folder).is_file("script.json") else None


@dataclass(frozen=True)
class RunRecord:
    task: str
    attempt: int
    passed: bool
    stop_reason: str
    turns: int
    tokens: int
    cost: float
    seconds: float
    exit_code: int
    error: str | None = None  # set when the run could not reach a model or arnes broke: not a failure
    trace: str = ""  # the run's JSONL trace, relative to the report when there is one
    worker: str = "local"  # where it ran: "local", or the Ray node's id


STDERR_TAIL = 600  # characters of a crashed run's stderr kept in the report


def discover(folder: Path) -> list[EvalTask]:
    if not folder.is_dir():
        raise ConfigError(f"eval folder {folder} does not exist")
    tasks = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        shapes = {"task.md": (sub / "task.md").is_file(), "workspace": (sub / "workspace").is_dir(),
                  "verify": (sub / "verify").is_file()}  # fmt: skip
        missing = [name for name, fine in shapes.items() if not fine]
        if missing:
            if (sub / "task.md").exists():
                what = ", ".join(f"{n} (a {'folder' if n == 'workspace' else 'file'})" for n in missing)
                raise ConfigError(f"eval task {sub} lacks {what}")
            continue
        # Through no link out of the task's folder: task.md goes to the model, verify runs.
        files = HostFiles(sub)
        try:
            prompt = (files.read("task.md") or b"").decode("utf-8").strip()
            verify = (files.read("verify") or b"").decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise ConfigError(f"eval task {sub}: task.md and verify must be UTF-8 text ({exc.reason})") from exc
        except OSError as exc:
            raise ConfigError(f"eval task {sub}: {exc.strerror or exc}") from exc
        tasks.append(EvalTask(sub.name, sub, prompt, verify))
    if not tasks:
        raise ConfigError(f"no eval tasks in {folder} (each needs task.md, workspace/ and verify)")
    return tasks


AgentArgv = Callable[[EvalTask, Path, Path], list[str]]  # (task, workspace copy, trace file) -> argv


def trace_name(task: EvalTask, attempt: int) -> str:
    return f"{task.name}-{attempt}.jsonl"


def run_one(
    task: EvalTask, attempt: int, agent_argv: AgentArgv, timeout: float, traces: Path, link: Path | None = None
) -> RunRecord:
    """A fresh copy, the agent on it, then the task's own verify command; the trace stays in `traces`."""
    trace = traces / trace_name(task, attempt)
    trace.unlink(missing_ok=True)  # a trace is appended to: an earlier eval's run must not mix in
    with tempfile.TemporaryDirectory(prefix=f"arnes-eval-{task.name}-") as tmp:
        copy = Path(tmp) / "workspace"
        # Links stay links: copied as files, one to ~/.ssh would put the key in the agent's reach.
        shutil.copytree(task.folder / "workspace", copy, symlinks=True)
        started = time.monotonic()
        try:
            done = subprocess.run(
                agent_argv(task, copy, trace), capture_output=True, text=True, timeout=timeout,
                stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            code, out, err = 124, "", ""
        seconds = time.monotonic() - started
        try:
            data: dict[str, Any] = json_loads(out)
        except ValueError:
            data = {}
        stop = str(data.get("stop_reason") or ("timeout" if code == 124 else "crashed"))
        error = _error_of(stop, data, code, err)
        passed = error is None and run_check(task.verify, copy, verify_sandbox(copy), timeout=300).passed
        return RunRecord(
            task.name,
            attempt,
            passed,
            stop,
            int(data.get("turns", 0)),
            int(data.get("input_tokens", 0)) + int(data.get("output_tokens", 0)),
            float(data.get("cost", 0.0)),
            round(seconds, 3),
            code,
            error,
            shown_path(trace, link),
        )


def verify_sandbox(copy: Path) -> Sandbox:
    """A task's verify command runs like the agent's commands did: in bubblewrap where there is one
    (an eval folder may come from anyone; the built-in set's checks need nothing more)."""
    from arnes.permissions.engine import RuleEngine
    from arnes.session import workspace_sandbox

    return workspace_sandbox(RuleEngine(copy, "default", []), "auto")[1]


def shown_path(path: Path, base: Path | None) -> str:
    """Relative to the report's folder when inside it, so a report and its traces move together."""
    return str(path.relative_to(base)) if base is not None and path.is_relative_to(base) else str(path)


def _error_of(stop: str, data: dict[str, Any], code: int, stderr: str) -> str | None:
    """Why a run is an error rather than a result; None when the agent really ran (even badly)."""
    if stop == "error":
        return str(data.get("error") or "the model failed")
    if stop == "crashed":
        tail = stderr.strip()[-STDERR_TAIL:] or "no output"
        return f"arnes exited with {code} without a result: {tail}"
    return None


def run_all(
    tasks: list[EvalTask],
    repeat: int,
    workers: int,
    agent_argv: AgentArgv,
    traces: Path,
    timeout: float = 900,
    link: Path | None = None,
) -> list[RunRecord]:
    traces.mkdir(parents=True, exist_ok=True)
    jobs = [(task, attempt) for task in tasks for attempt in range(1, repeat + 1)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda job: run_one(job[0], job[1], agent_argv, timeout, traces, link), jobs))


def _stats(records: list[RunRecord]) -> dict[str, Any]:
    runs = len(records)
    passed = sum(r.passed for r in records)
    errors = sum(r.error is not None for r in records)
    return {
        "runs": runs,
        "passed": passed,
        "failed": runs - passed - errors,
        "errors": errors,
        "pass_rate": round(passed / runs, 4) if runs else 0.0,
        "turns_mean": round(statistics.mean(r.turns for r in records), 2) if runs else 0,
        "tokens_mean": round(statistics.mean(r.tokens for r in records), 1) if runs else 0,
        "cost": round(sum(r.cost for r in records), 6),
        "seconds_mean": round(statistics.mean(r.seconds for r in records), 3) if runs else 0,
    }


def report(records: list[RunRecord], meta: dict[str, Any]) -> dict[str, Any]:
    names = sorted({r.task for r in records})
    return {
        "meta": meta,
        "tasks": {name: _stats([r for r in records if r.task == name]) for name in names},
        "overall": _stats(records),
        "runs": [asdict(r) for r in records],
    }


def check_report(report: Any, name: str) -> dict[str, Any]:
    """An eval report as `report()` writes it, or a ConfigError saying what is off."""
    ok = (
        isinstance(report, dict)
        and isinstance(report.get("tasks"), dict)
        and all(isinstance(t, dict) and isinstance(t.get("pass_rate"), int | float) for t in report["tasks"].values())
        and isinstance(report.get("overall"), dict)
        and isinstance(report["overall"].get("pass_rate"), int | float)
    )
    if not ok:
        raise ConfigError(f"{name} is not an eval report (it needs tasks.*.pass_rate and overall.pass_rate)")
    return dict(report)


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per task: the pass rate before and after; which improved, regressed, or is missing from one.

    The second report is `worse` when a task regressed, a task of the first is missing from it,
    or its overall pass rate is lower: a comparison in CI fails on any of these.
    """
    rows = {}
    for name in sorted(set(a["tasks"]) | set(b["tasks"])):
        before = a["tasks"].get(name, {}).get("pass_rate")
        after = b["tasks"].get(name, {}).get("pass_rate")
        rows[name] = {"before": before, "after": after}
    both = {n: r for n, r in rows.items() if r["before"] is not None and r["after"] is not None}
    improved = [n for n, r in both.items() if r["after"] > r["before"]]
    regressed = [n for n, r in both.items() if r["after"] < r["before"]]
    missing_after = [n for n, r in rows.items() if r["after"] is None]
    missing_before = [n for n, r in rows.items() if r["before"] is None]
    overall = {"before": a["overall"]["pass_rate"], "after": b["overall"]["pass_rate"]}
    return {
        "tasks": rows,
        "improved": improved,
        "regressed": regressed,
        "missing_before": missing_before,
        "missing_after": missing_after,
        "overall": overall,
        "worse": bool(regressed or missing_after or overall["after"] < overall["before"]),
    }
