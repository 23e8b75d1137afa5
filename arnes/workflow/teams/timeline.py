"""The team timeline: JSONL under .arnes/teams/runs/, a readable Markdown view beside it, and the
same lines on the terminal as they happen."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from arnes.agent.events import now_iso


class Timeline:
    def __init__(self, folder: Path, run_id: str, console: Console | None = None):
        folder.mkdir(parents=True, exist_ok=True)
        self.jsonl = folder / f"{run_id}.jsonl"
        self.readable = folder / f"{run_id}.md"
        self.console = console
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.readable.write_text(f"# team run {run_id}\n\n", encoding="utf-8")

    def record(self, event: str, line: str, style: str | None = None, **fields: Any) -> None:
        entry = {"ts": now_iso(), "event": event, **fields}
        with self._lock:
            self.events.append(entry)
            with self.jsonl.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            with self.readable.open("a", encoding="utf-8") as out:
                out.write(f"- {entry['ts']} {line}\n")
            if self.console:
                self.console.print(f"[team] {line}", style=style, markup=False)
