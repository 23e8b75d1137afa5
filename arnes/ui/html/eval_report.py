"""`arnes eval report A.json [B.json ...] --html FILE`: pass rates per task and per report as a chart,
the overall rates with their spread over repeats, and every run with a link to its kept trace."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arnes.ui.html.page import PALETTE, legend, page, table

LABEL_W, CHART_W, BAR_H, GAP = 190, 560, 14, 12


@dataclass(frozen=True)
class LoadedReport:
    label: str  # what the legend calls it: the file name, or the model when names clash
    data: dict[str, Any]
    path: Path


def spread(report: dict[str, Any]) -> tuple[float, float, float, float]:
    """(mean, low, high, standard deviation) of the overall pass rate over the repeats."""
    by_attempt: dict[int, list[bool]] = {}
    for run in report.get("runs", []):
        attempt = run.get("attempt", 1)  # a report is anyone's file: a repeat that is no number is the first
        by_attempt.setdefault(attempt if isinstance(attempt, int) else 1, []).append(bool(run.get("passed")))
    rates = [sum(v) / len(v) for v in by_attempt.values() if v] or [float(report["overall"]["pass_rate"])]
    sd = statistics.pstdev(rates) if len(rates) > 1 else 0.0
    return statistics.mean(rates), min(rates), max(rates), sd


def _bars(
    groups: list[tuple[str, list[tuple[float, str]]]], whiskers: dict[tuple[int, int], tuple[float, float]]
) -> str:
    """Horizontal grouped bars, 0-100 %; `whiskers[(group, bar)]` draws a low-high line over a bar."""
    per_group = max((len(bars) for _, bars in groups), default=1)
    group_h = per_group * (BAR_H + 2) + GAP
    height = len(groups) * group_h + 30
    width = LABEL_W + CHART_W + 60
    parts = [f'<svg width="{width}" height="{height}" role="img">']
    for pct in (0, 25, 50, 75, 100):
        x = LABEL_W + CHART_W * pct / 100
        parts.append(f'<line x1="{x}" y1="0" x2="{x}" y2="{height - 20}" stroke="#e3e7ea"/>')
        parts.append(f'<text x="{x}" y="{height - 6}" text-anchor="middle">{pct}%</text>')
    for g, (name, bars) in enumerate(groups):
        top = g * group_h + 4
        mid = top + len(bars) * (BAR_H + 2) / 2 + 4
        parts.append(f'<text x="{LABEL_W - 8}" y="{mid}" text-anchor="end">{escape(name)}</text>')
        for b, (rate, title) in enumerate(bars):
            y = top + b * (BAR_H + 2)
            w = max(2.0, CHART_W * rate)  # a 0 % bar stays visible as a stub
            color = PALETTE[b % len(PALETTE)]
            parts.append(
                f'<rect class="bar" x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{color}">'
                f"<title>{escape(title)}</title></rect>"
            )
            parts.append(f'<text x="{LABEL_W + w + 4:.1f}" y="{y + BAR_H - 3}">{rate:.0%}</text>')
            if (g, b) in whiskers:
                low, high = whiskers[(g, b)]
                x1, x2, yy = LABEL_W + CHART_W * low, LABEL_W + CHART_W * high, y + BAR_H / 2
                parts.append(
                    f'<line x1="{x1:.1f}" y1="{yy}" x2="{x2:.1f}" y2="{yy}" stroke="#1d232a" stroke-width="2"/>'
                )
    parts.append("</svg>")
    return "".join(parts)


def _trace_link(run: dict[str, Any], report: LoadedReport, html_dir: Path) -> str:
    trace = run.get("trace") or ""
    if not trace:
        return "-"
    target = Path(trace) if Path(trace).is_absolute() else report.path.parent / trace
    href = quote(os.path.relpath(target.resolve(), html_dir.resolve()))
    return f'<a href="{escape(href)}">{escape(Path(trace).name)}</a>'


def _number(value: Any) -> float:
    """A count or a time from a report (anyone's file): a number, else 0, never a traceback."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _outcome(run: dict[str, Any]) -> str:
    if run.get("error"):
        return f'<span class="error" title="{escape(str(run["error"]))}">error</span>'
    return '<span class="pass">pass</span>' if run.get("passed") else '<span class="fail">fail</span>'


def render(reports: list[LoadedReport], html_path: Path) -> str:
    labels = [r.label for r in reports]
    tasks = sorted({name for r in reports for name in r.data["tasks"]})
    groups = []
    for name in tasks:
        bars = []
        for r in reports:
            stats = r.data["tasks"].get(name)
            rate = float(stats["pass_rate"]) if stats else 0.0
            title = f"{r.label}: {stats['passed']}/{stats['runs']} passed" if stats else f"{r.label}: missing"
            bars.append((rate, title))
        groups.append((name, bars))
    overall_bars, whiskers, rows = [], {}, []
    for i, r in enumerate(reports):
        _, low, high, sd = spread(r.data)
        o = r.data["overall"]
        overall_bars.append((float(o["pass_rate"]), f"{r.label}: {o['passed']}/{o['runs']} passed"))
        whiskers[(0, i)] = (low, high)
        errors = int(_number(o.get("errors")))
        rows.append([
            escape(r.label), f"{float(o['pass_rate']):.0%}", escape(f"{o['passed']}/{o['runs']}"), str(errors),
            f"{low:.0%} to {high:.0%}", f"{sd:.0%}", escape(str(r.data.get("meta", {}).get("model") or "-")),
        ])  # fmt: skip
    body = [
        legend(labels),
        "<h2>Pass rate per task</h2>",
        _bars(groups, {}),
        "<h2>Overall</h2>",
        _bars([("overall", overall_bars)], whiskers),
        table(["report", "pass rate", "passed", "errors", "over repeats", "sd", "model"], rows, {1, 2, 3, 4, 5}),
    ]
    html_dir = html_path.parent
    for r in reports:
        run_rows = [
            [
                escape(str(run.get("task"))), escape(str(run.get("attempt", 1))), _outcome(run),
                escape(str(run.get("stop_reason", ""))), escape(str(run.get("turns", 0))),
                escape(str(run.get("tokens", 0))),
                f"{_number(run.get('seconds')):.1f}", _trace_link(run, r, html_dir),
            ]
            for run in r.data.get("runs", [])
        ]  # fmt: skip
        body.append(f"<h2>Runs: {escape(r.label)}</h2>")
        body.append(table(["task", "repeat", "result", "stop", "turns", "tokens", "seconds", "trace"], run_rows,
                          {1, 4, 5, 6}))  # fmt: skip
    subtitle = " · ".join(
        f"{r.label}: {r.data.get('meta', {}).get('date', '')} {r.data.get('meta', {}).get('provider', '')}".strip()
        for r in reports
    )
    return page("arnes eval report", subtitle, "\n".join(body))
