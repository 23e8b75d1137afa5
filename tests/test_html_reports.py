"""HTML pages people look at, opened in a real headless browser: eval reports (and team timelines)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tests.browser import dump_dom, rendered_bars
from tests.conftest import run_arnes


def report(tasks: dict[str, list[bool]], model: str, traces: Path | None = None) -> dict[str, Any]:
    runs = []
    for name, results in tasks.items():
        for attempt, passed in enumerate(results, 1):
            trace = ""
            if traces is not None:
                trace_file = traces / f"{name.strip('<>/b')}-{attempt}.jsonl"
                trace_file.write_text('{"event": "session_start"}\n')
                trace = f"{traces.name}/{trace_file.name}"
            run = {"task": name, "attempt": attempt, "passed": passed, "stop_reason": "end_turn", "turns": 3}
            runs.append({**run, "tokens": 1200, "cost": 0.0, "seconds": 1.5, "exit_code": 0, "trace": trace})

    def stats(items: list[bool]) -> dict[str, Any]:
        return {"runs": len(items), "passed": sum(items), "errors": 0, "pass_rate": sum(items) / len(items)}

    every = [r for results in tasks.values() for r in results]
    return {"meta": {"model": model, "provider": "openai", "date": "2026-12-01"},
            "tasks": {n: stats(r) for n, r in tasks.items()}, "overall": stats(every), "runs": runs}  # fmt: skip


def test_an_eval_report_page_draws_its_charts_in_a_browser(tmp_path: Path) -> None:
    (tmp_path / "a.traces").mkdir()
    a = report({"fizzbuzz": [True, False], "rename": [False, False], "<b>odd</b>": [True, True]}, "small",
               tmp_path / "a.traces")  # fmt: skip
    b = report({"fizzbuzz": [True, True], "rename": [True, False]}, "big")  # a task missing from b
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    out = tmp_path / "pages"
    out.mkdir()
    run = run_arnes("eval", "report", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--html", str(out / "r.html"))
    assert run.code == 0, run.err
    html = (out / "r.html").read_text()
    assert "http://" not in html and "https://" not in html  # nothing to fetch: the page works offline
    assert "<b>odd</b>" not in html and "&lt;b&gt;odd&lt;/b&gt;" in html  # names are text, never markup
    dom = dump_dom(out / "r.html")
    assert rendered_bars(dom) == 3 * 2 + 2  # every task for each report, and the two overall bars
    assert "50% to 50%" in dom or "33% to 67%" in dom  # a's spread over its two repeats
    links = [unquote(h) for h in re.findall(r'href="([^"]+\.jsonl)"', html)]
    assert len(links) == 6 and all((out / link).resolve().is_file() for link in links)


def test_a_report_that_is_not_one_is_refused_in_a_line(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"tasks": 3}')
    run = run_arnes("eval", "report", str(tmp_path / "x.json"), "--html", str(tmp_path / "r.html"))
    assert run.code == 2 and "is not an eval report" in run.err and not (tmp_path / "r.html").exists()


def test_a_team_run_writes_a_timeline_page_the_browser_draws(shop: Path, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
        {
            "tool_calls": [
                {"name": "Edit", "input": {"file_path": "pricing.py", "old_string": "0.10", "new_string": "0.15"}}
            ]
        },
        {"text": "implemented"},
        {"text": "The rate is not <script>alert(1)</script> tested.\nVERDICT: FAIL"},
        {"text": "implemented again"},
        {"text": "VERDICT: PASS"},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(shop), "--permission-mode", "bypass",
                    "team", "run", "maker-checker", "raise the discount")  # fmt: skip
    assert "page: " in run.out, run.out + run.err
    [page] = (shop / ".arnes" / "teams" / "runs").glob("*.html")
    html = page.read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    dom = dump_dom(page)
    assert rendered_bars(dom) == 4  # implement, check, implement, check
    assert dom.count('class="wrote"') == 1  # the first implement step wrote pricing.py
    assert "FAIL" in dom and "PASS" in dom and "is not" in dom  # verdicts with their reasons


def test_every_field_of_a_planted_report_is_escaped(tmp_path: Path) -> None:
    """A report is a file anyone can write: its counts and totals are text to the page, never markup."""
    from arnes.ui.html.eval_report import LoadedReport, render

    data = report({"t": [True]}, "m")
    evil = "<script>alert(1)</script>"
    data["overall"]["passed"] = evil
    data["overall"]["errors"] = evil
    data["runs"][0].update(attempt=evil, turns=evil, tokens=evil, seconds=evil)
    page = render([LoadedReport("r", data, tmp_path / "r.json")], tmp_path / "out.html")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
