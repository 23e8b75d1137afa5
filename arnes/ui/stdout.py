"""stdout that may close while arnes runs (`arnes -p ... --output-format stream-json | head -1`).

Python ignores SIGPIPE, so a reader that went away shows up as BrokenPipeError on the next
write, from whichever thread wrote, and again as "Exception ignored" when the interpreter
flushes stdout on its way out. Here the first broken write points stdout at /dev/null (so
nothing later can fail), and the main thread is told once, with OutputClosed: the run stops
as on Ctrl-C, and nothing is said about it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console

from arnes.errors import OutputClosed


def silence(stream: TextIO) -> None:
    """Point the stream's descriptor at /dev/null: what is still buffered, and anything later, goes nowhere."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # a stream with no descriptor (tests): nothing to redirect
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def settle(stream: TextIO | None = None) -> None:
    """Flush what is left before exit; a reader already gone is not an error worth a word."""
    stream = stream or sys.stdout
    try:
        stream.flush()
    except BrokenPipeError:
        silence(stream)
    except (OSError, ValueError):  # closed by someone else: nothing left to say
        pass


def _put(stream: TextIO, text: str) -> None:
    """Write and flush. Through the byte buffer where there is one: a reader that leaves in the
    middle of a long write makes it return short, where the text layer would drop the rest unsaid."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        stream.flush()
        return
    stream.flush()  # what was printed through the text layer goes first
    data = text.encode(stream.encoding or "utf-8", stream.errors or "strict")
    written = buffer.write(data)
    buffer.flush()
    if written is not None and written < len(data):
        raise BrokenPipeError


class PipedConsole(Console):
    """rich's console for stdout, whose broken pipe goes to Stdout.guard (rich's own would exit 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


@dataclass
class Stdout:
    """Everything a run prints on stdout, from any thread, through one lock."""

    stream: TextIO = field(default_factory=lambda: sys.stdout)
    closed: bool = False
    _told: bool = False
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def line(self, obj: dict[str, Any]) -> None:
        """One JSON object on one line, flushed at once: a reader sees it while the run goes. A lone
        surrogate (a model's call may hold `\\ud800`) cannot be UTF-8: that line is written escaped."""
        text = json.dumps(obj, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(obj)
        self.write(text + "\n")

    def write(self, text: str) -> None:
        self.guard(lambda: _put(self.stream, text))

    def guard(self, action: Callable[[], None]) -> None:
        """Run a write (a renderer's, a print); a closed pipe closes this writer instead of raising."""
        with self._lock:
            if not self.closed:
                try:
                    action()
                except BrokenPipeError:
                    self.closed = True
                    silence(self.stream)
        self._tell()

    def _tell(self) -> None:
        """OutputClosed once, on the main thread (where the loop ends a turn on it); other threads
        drop their lines quietly, and the main thread hears of it at its next write."""
        if self.closed and not self._told and threading.current_thread() is threading.main_thread():
            self._told = True
            raise OutputClosed
