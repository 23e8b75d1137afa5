"""The team timeline: JSONL under .arnes/teams/runs/, a readable Markdown view beside it, and the
same lines on the terminal as they happen."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from arnes.agent.events import now_iso
from arnes.ui.safe import one_line, visible

SCREEN_LINES = 12  # of a verdict's reasons on the terminal; the Markdown view has them all


class Timeline:
    def __init__(self, folder: Path, run_id: str, console: Console | None = None):
        folder.mkdir(parents=True, exist_ok=True)
        self.jsonl = folder / f"{run_id}.jsonl"
        self.readable = folder / f"{run_id}.md"
        self.console = console
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.readable.write_text(f"# team run {run_id}\n\n", encoding="utf-8")

    def record(self, event: str, line: str, style: str | None = None, detail: str = "", **fields: Any) -> None:
        """One step: a line, and under it `detail` (a verdict's reasons) when there is one."""
        entry = {"ts": now_iso(), "event": event, **fields}
        reasons = detail.strip().splitlines()
        with self._lock:
            self.events.append(entry)
            with self.jsonl.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            with self.readable.open("a", encoding="utf-8") as out:
                # A readable view gets printed with `cat` too: no escape sequence survives into it.
                out.write(f"- {entry['ts']} {visible(line)}\n")
                out.writelines(f"  > {visible(r)}\n" if r.strip() else "  >\n" for r in reasons)
            if self.console:
                self.console.print(Text(f"[team] {visible(line)}", style=style or ""))
                if reasons:
                    self.console.print(Text(_indented(reasons), style="dim"))


def _indented(reasons: list[str]) -> str:
    """The last lines of a report (where findings and the verdict are), indented under its step."""
    shown = [one_line(r) for r in reasons[-SCREEN_LINES:]]
    if len(reasons) > SCREEN_LINES:
        shown.insert(0, f"… {len(reasons) - SCREEN_LINES} earlier lines in the timeline")
    return "\n".join(f"       {r}" for r in shown)
