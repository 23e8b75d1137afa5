"""`arnes eval`: traces kept, run options passed on, errors apart from failures; `eval compare`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test"}


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"name": name, "input": inp}


def task_set(root: Path, names: tuple[str, ...] = ("hello",), script: bool = True) -> Path:
    tasks = root / "tasks"
    for name in names:
        (tasks / name / "workspace").mkdir(parents=True)
        (tasks / name / "task.md").write_text("write ok into out.txt\n")
        (tasks / name / "verify").write_text("grep -qx ok out.txt\n")
        if script:
            turns = [{"tool_calls": [call("Write", file_path="out.txt", content="ok\n")]}]
            (tasks / name / "script.json").write_text(json.dumps({"turns": turns}))
    return tasks


def test_every_run_keeps_its_trace_beside_the_report(tmp_path: Path) -> None:
    tasks = task_set(tmp_path, ("a", "b"))
    out = tmp_path / "reports" / "r.json"
    run = run_arnes("--provider", "script", "eval", str(tasks), "--repeat", "2", "--out", str(out))
    assert run.code == 0, run.err
    report = json.loads(out.read_text())
    assert report["meta"]["traces"] == "r.traces"
    links = sorted(r["trace"] for r in report["runs"])
    assert links == ["r.traces/a-1.jsonl", "r.traces/a-2.jsonl", "r.traces/b-1.jsonl", "r.traces/b-2.jsonl"]
    for link in links:
        events = [e["event"] for e in read_trace(out.parent / link)]
        assert events[0] == "session_start" and events[-1] == "session_end" and "tool_call" in events
    assert report["overall"] | {"errors": 0, "failed": 0, "passed": 4} == report["overall"]
    again = run_arnes("--provider", "script", "eval", str(tasks), "--out", str(out))
    assert again.code == 0
    assert [e["event"] for e in read_trace(out.parent / links[0])].count("session_start") == 1  # not appended


def test_the_run_options_reach_every_agent(tmp_path: Path) -> None:
    tasks = task_set(tmp_path, script=False)
    endless = [{"tool_calls": [call("Glob", pattern=f"*{i}*")]} for i in range(20)]
    out = tmp_path / "r.json"
    with FakeLLMServer(endless) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "tiny", "--no-stream",
            "--context-window", "4096", "--max-turns", "3", "--deny", "Bash", "eval", str(tasks), "--out", str(out),
            env=KEYS,
        )  # fmt: skip
        bodies = [body for path, body in server.requests if path.endswith("/chat/completions")]
    assert run.code == 0, run.err
    assert len(bodies) == 3 and all(b["model"] == "tiny" and not b.get("stream") for b in bodies)
    (record,) = json.loads(out.read_text())["runs"]
    assert record["stop_reason"] == "max_turns" and not record["passed"] and record["error"] is None
    trace = read_trace(tmp_path / record["trace"])
    assert {e["ctx_window"] for e in trace if e["event"] == "model_request"} == {4096}
    options = json.loads(out.read_text())["meta"]["options"]
    assert options[options.index("--deny") : options.index("--deny") + 2] == ["--deny", "Bash"]


def test_a_run_that_cannot_reach_a_model_is_an_error_not_a_failure(tmp_path: Path) -> None:
    tasks = task_set(tmp_path, ("a", "b"), script=False)
    out = tmp_path / "r.json"
    with FakeLLMServer([], fail_first=100, fail_status=401) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "m", "eval", str(tasks),
            "--out", str(out), env=KEYS,
        )  # fmt: skip
    assert run.code == 1
    assert "2 of 2 run(s) are errors, not failures" in run.err and "Traceback" not in run.err
    report = json.loads(out.read_text())
    assert report["overall"] | {"runs": 2, "passed": 0, "failed": 0, "errors": 2} == report["overall"]
    assert all(t["errors"] == 1 and t["failed"] == 0 for t in report["tasks"].values())
    assert all(r["stop_reason"] == "error" and "401" in r["error"] for r in report["runs"])
    assert "error" in run.out  # the table shows an error, not 0 %


def test_compare_names_missing_tasks_and_fails_when_the_second_report_is_worse(tmp_path: Path) -> None:
    def report(path: Path, rates: dict[str, float]) -> str:
        tasks = {n: {"runs": 1, "passed": int(r), "pass_rate": r} for n, r in rates.items()}
        overall = sum(rates.values()) / len(rates)
        path.write_text(json.dumps({"tasks": tasks, "overall": {"pass_rate": overall}}))
        return str(path)

    base = report(tmp_path / "a.json", {"x": 1.0, "y": 0.0, "gone": 1.0})
    fewer = report(tmp_path / "b.json", {"x": 1.0, "y": 1.0, "new": 1.0})
    run = run_arnes("eval", "compare", base, fewer)
    assert run.code == 1
    assert f"gone: 100% -> - (missing from {fewer})" in run.out and "(same)" not in run.out.split("x:")[0]
    assert f"new: - -> 100% (missing from {base})" in run.out and "y: 0% -> 100% (improved)" in run.out
    better = report(tmp_path / "c.json", {"x": 1.0, "y": 1.0, "gone": 1.0})
    assert run_arnes("eval", "compare", base, better).code == 0
    assert run_arnes("eval", "compare", better, base).code == 1  # y regressed
