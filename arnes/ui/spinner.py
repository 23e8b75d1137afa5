"""A one-line spinner and timer while the model thinks, so a slow model does not look like a hang.

Only on a terminal: piped output and logs never see it. It draws on one line with `\\r` and erases
that line when it stops; it hides no cursor and takes no screen, so a crash cannot leave the
terminal in a strange state. The renderer stops it before it prints anything else.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import IO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1  # seconds between frames


@dataclass
class Spinner:
    file: IO[str]
    label: str = "thinking"
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    _shown: bool = False

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start the timer; nothing is drawn until `show()`, so the caller can finish its line first."""
        if self._thread is not None:
            return
        self._stop = threading.Event()
        self._shown = False
        self._thread = threading.Thread(target=self._spin, args=(time.monotonic(),), name="arnes-spinner", daemon=True)
        self._thread.start()

    def show(self) -> None:
        self._draw(0, 0.0)  # at once: the first frame does not wait for a tick
        self._shown = True

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        if thread.ident is not None:  # Ctrl-C can land between creating the thread and starting it
            thread.join()
        if self._shown:
            self.file.write("\r\x1b[2K")  # erase the spinner's line: what comes next starts clean
            self.file.flush()

    def _spin(self, started: float) -> None:
        frame = 1
        while not self._stop.wait(TICK):
            if self._shown:
                self._draw(frame, time.monotonic() - started)
                frame += 1

    def _draw(self, frame: int, elapsed: float) -> None:
        self.file.write(f"\r{FRAMES[frame % len(FRAMES)]} {self.label} {elapsed:.0f}s")
        self.file.flush()
