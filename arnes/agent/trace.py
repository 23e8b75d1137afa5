"""The JSONL trace of DESIGN §7: one object a line, written as it happens so a crash loses nothing."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

from arnes.agent.events import Event, Nested, now_iso

OUTPUT_CAP = 4000


class JsonlTrace:
    def __init__(self, path: Path, handle: IO[str] | None = None):
        """`handle`: the file already opened (arnes/host/files.py opens logs in the workspace)."""
        self.path = path
        if handle is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("a", encoding="utf-8")
        self._file: IO[str] = handle
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        inner = event.inner if isinstance(event, Nested) else event
        if not inner.traced:
            return
        record: dict[str, Any] = {"ts": now_iso(), "event": inner.event, **event.payload()}
        output = record.get("output")
        if isinstance(output, str) and len(output) > OUTPUT_CAP:
            record["output"] = output[:OUTPUT_CAP] + f"... [{len(output) - OUTPUT_CAP} chars cut]"
        line = json.dumps(record, ensure_ascii=False)
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (a model's "\udcff", a file name): escaped
                line = json.dumps(record)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The events, one a line. Lines end at \n only: json.dumps leaves U+2028 and friends in a
    string as they are, and splitlines() would cut the line there."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
