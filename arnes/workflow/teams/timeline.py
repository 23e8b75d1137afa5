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
from arnes.host.files import HostFiles
from arnes.safe import one_line, visible

RUNS = ".arnes/teams/runs"
SCREEN_LINES = 12  # of a verdict's reasons on the terminal; the Markdown view has them all


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

    def record(self, event: str, line: str, style: str | None = None, detail: str = "", **fields: Any) -> None:
        """One step: a line, and under it `detail` (a verdict's reasons) when there is one."""
        entry = {"ts": now_iso(), "event": event, **fields}
        reasons = detail.strip().splitlines()
        with self._lock:
            self.events.append(entry)
            with self._files.append(self._names[0]) as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            with self._files.append(self._names[1]) as out:
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
