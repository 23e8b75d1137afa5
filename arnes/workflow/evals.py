"""Evals: run each task several times on a fresh copy, verify it, and report pass rates.

A task is a folder with `task.md` (the prompt), `workspace/` (the starting files) and `verify`
(a shell command run in the copy). An optional `script.json` is its scripted trajectory, used
with `--provider script`, so the machinery itself is tested without a model.
"""

from __future__ import annotations

import json
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


AgentArgv = Callable[[EvalTask, Path], list[str]]


def run_one(task: EvalTask, attempt: int, agent_argv: AgentArgv, timeout: float) -> RunRecord:
    """A fresh copy, the agent on it, then the task's own verify command."""
    with tempfile.TemporaryDirectory(prefix=f"arnes-eval-{task.name}-") as tmp:
        copy = Path(tmp) / "workspace"
        # Links stay links: copied as files, one to ~/.ssh would put the key in the agent's reach.
        shutil.copytree(task.folder / "workspace", copy, symlinks=True)
        started = time.monotonic()
        try:
            done = subprocess.run(
                agent_argv(task, copy), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                check=False,
            )  # fmt: skip
            code, out = done.returncode, done.stdout
        except subprocess.TimeoutExpired:
            code, out = 124, ""
        seconds = time.monotonic() - started
        try:
            data: dict[str, Any] = json.loads(out)
        except json.JSONDecodeError:
            data = {}
        verdict = run_check(task.verify, copy, timeout=300)
        return RunRecord(
            task.name,
            attempt,
            verdict.passed,
            str(data.get("stop_reason", "crashed" if code not in (0, 3, 4) else "unknown")),
            int(data.get("turns", 0)),
            int(data.get("input_tokens", 0)) + int(data.get("output_tokens", 0)),
            float(data.get("cost", 0.0)),
            round(seconds, 3),
            code,
        )


def run_all(
    tasks: list[EvalTask], repeat: int, workers: int, agent_argv: AgentArgv, timeout: float = 900
) -> list[RunRecord]:
    jobs = [(task, attempt) for task in tasks for attempt in range(1, repeat + 1)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda job: run_one(job[0], job[1], agent_argv, timeout), jobs))


def _stats(records: list[RunRecord]) -> dict[str, Any]:
    runs = len(records)
    passed = sum(r.passed for r in records)
    return {
        "runs": runs,
        "passed": passed,
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
    """Per task: the pass rate before and after; which improved, which regressed."""
    rows = {}
    for name in sorted(set(a["tasks"]) | set(b["tasks"])):
        before = a["tasks"].get(name, {}).get("pass_rate")
        after = b["tasks"].get(name, {}).get("pass_rate")
        rows[name] = {"before": before, "after": after}
    improved = [
        n for n, r in rows.items() if r["before"] is not None and r["after"] is not None and r["after"] > r["before"]
    ]
    regressed = [
        n for n, r in rows.items() if r["before"] is not None and r["after"] is not None and r["after"] < r["before"]
    ]
    return {
        "tasks": rows,
        "improved": improved,
        "regressed": regressed,
        "overall": {"before": a["overall"]["pass_rate"], "after": b["overall"]["pass_rate"]},
    }
