"""The HTML view of a team run: each node's steps as bars on a time axis, coloured by verdict, with
marks where a node wrote to the tree (red for a read-only node) and the reasons under each verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from typing import Any

from arnes.ui.html.page import page, table

LABEL_W, CHART_W, ROW_H = 150, 720, 26
COLORS = {"pass": "#2a9d5b", "fail": "#c62828", None: "#8a96a3"}


@dataclass
class Step:
    node: str
    start: float
    end: float | None = None
    verdict: str | None = None
    report: str = ""
    wrote: list[tuple[float, list[str], bool]] = field(default_factory=list)


def _seconds(ts: str, origin: datetime) -> float:
    return (datetime.fromisoformat(ts) - origin).total_seconds()


def steps_of(events: list[dict[str, Any]]) -> tuple[list[Step], float, dict[str, Any] | None]:
    """Node steps in order, the run's length in seconds, and its team_end event."""
    if not events:
        return [], 0.0, None
    origin = datetime.fromisoformat(events[0]["ts"])
    steps: list[Step] = []
    open_by_node: dict[str, Step] = {}
    end_event = None
    for e in events:
        at = _seconds(e["ts"], origin)
        kind, node = e.get("event"), e.get("node")
        if kind == "node_start" and node:
            open_by_node[node] = Step(node, at)
            steps.append(open_by_node[node])
        elif kind == "node_end" and node in open_by_node:
            step = open_by_node.pop(node)
            step.end, step.verdict, step.report = at, e.get("verdict"), str(e.get("report", ""))
        elif kind == "node_wrote" and node:
            owner = open_by_node.get(node) or next((s for s in reversed(steps) if s.node == node), None)
            if owner is not None:
                owner.wrote.append((at, list(e.get("files", [])), bool(e.get("read_only"))))
        elif kind == "team_end":
            end_event = e
    total = max([_seconds(events[-1]["ts"], origin), *(s.end or s.start for s in steps), 0.001])
    return steps, total, end_event


def _chart(steps: list[Step], total: float) -> str:
    nodes = list(dict.fromkeys(s.node for s in steps))
    height = len(nodes) * ROW_H + 34
    parts = [f'<svg width="{LABEL_W + CHART_W + 40}" height="{height}" role="img">']
    for i in range(5):
        x = LABEL_W + CHART_W * i / 4
        parts.append(f'<line x1="{x}" y1="0" x2="{x}" y2="{height - 22}" stroke="#e3e7ea"/>')
        parts.append(f'<text x="{x}" y="{height - 6}" text-anchor="middle">{total * i / 4:.1f} s</text>')
    for row, node in enumerate(nodes):
        y = row * ROW_H + 4
        parts.append(f'<text x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{escape(node)}</text>')
    for step in steps:
        y = nodes.index(step.node) * ROW_H + 4
        x = LABEL_W + CHART_W * step.start / total
        end = step.end if step.end is not None else total
        w = max(3.0, CHART_W * (end - step.start) / total)
        title = f"{step.node}: {step.verdict or 'unfinished'} ({end - step.start:.1f} s)"
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW_H - 8}" rx="3" '
            f'fill="{COLORS.get(step.verdict, COLORS[None])}"><title>{escape(title)}</title></rect>'
        )
        for at, files, read_only in step.wrote:
            mx = LABEL_W + CHART_W * at / total
            color = "#c62828" if read_only else "#1d232a"
            what = ("READ-ONLY NODE WROTE: " if read_only else "wrote: ") + ", ".join(files)
            mark = f'x="{mx - 1.5:.1f}" y="{y - 3}" width="3" height="{ROW_H - 2}"'
            parts.append(f'<rect class="wrote" {mark} fill="{color}"><title>{escape(what)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def render(run_id: str, events: list[dict[str, Any]]) -> str:
    steps, total, end = steps_of(events)
    status = str(end.get("status", "unknown")).upper() if end else "UNFINISHED"
    rows = []
    for s in steps:
        verdict = s.verdict or "unfinished"
        css = {"pass": "pass", "fail": "fail"}.get(verdict, "error")
        wrote = "; ".join(("read-only! " if ro else "") + ", ".join(f) for _, f, ro in s.wrote) or "-"
        took = f"{(s.end or total) - s.start:.1f}"
        reasons = escape(s.report.strip()[-600:]).replace("\n", "<br>") or "-"
        rows.append([escape(s.node), f'<span class="{css}">{escape(verdict.upper())}</span>', took, escape(wrote),
                     f'<div style="white-space:normal;max-width:40rem">{reasons}</div>'])  # fmt: skip
    body = _chart(steps, total) + "<h2>Steps</h2>" + table(["node", "verdict", "seconds", "wrote", "why"], rows, {2})
    return page(f"team run {run_id}", f"{status} · {len(steps)} steps · {total:.1f} s", body)
