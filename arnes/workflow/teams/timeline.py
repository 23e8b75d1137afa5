"""The team timeline: JSONL under .arnes/teams/runs/, a readable Markdown view beside it, and the
same lines on the terminal as they happen."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from arnes.agent.events import now_iso
from arnes.host.files import HostFiles

RUNS = ".arnes/teams/runs"


class Timeline:
    """Both files live in the workspace and are opened through no link (host/files.py): a
    repository's `.arnes/teams/runs -> elsewhere` cannot send them out of it."""

    def __init__(self, workspace: Path, run_id: str, console: Console | None = None):
        self._files = HostFiles(workspace)
        self._names = (f"{RUNS}/{run_id}.jsonl", f"{RUNS}/{run_id}.md")
        self.jsonl, self.readable = (self._files.root / name for name in self._names)
        self.console = console
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        with self._files.append(self._names[1]) as out:
            out.write(f"# team run {run_id}\n\n")

    def record(self, event: str, line: str, style: str | None = None, **fields: Any) -> None:
        entry = {"ts": now_iso(), "event": event, **fields}
        with self._lock:
            self.events.append(entry)
            with self._files.append(self._names[0]) as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            with self._files.append(self._names[1]) as out:
                out.write(f"- {entry['ts']} {line}\n")
            if self.console:
                self.console.print(f"[team] {line}", style=style, markup=False)
