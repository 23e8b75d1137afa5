"""The end of what a server process wrote on stderr: why an MCP or language server stopped."""

from __future__ import annotations

import contextlib
import os
from typing import IO, Any

TAIL_LINES, TAIL_BYTES = 20, 2048  # how much of a failed server's stderr the user sees


def stderr_tail(errlog: IO[Any] | None) -> list[str]:
    """The last lines a server wrote on stderr (at most TAIL_LINES lines of its last TAIL_BYTES),
    which usually say why it stopped: a missing variable, a package not found, a stack trace.
    Read from the file the process wrote to, whatever its size."""
    if errlog is None or errlog.closed:
        return []
    with contextlib.suppress(OSError, ValueError):
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES))
        lines = data.decode("utf-8", errors="replace").splitlines()
        if size > TAIL_BYTES and lines:
            lines = lines[1:]  # the first line was cut in the middle
        return [line.rstrip()[:300] for line in lines if line.strip()][-TAIL_LINES:]
    return []
