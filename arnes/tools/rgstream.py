"""ripgrep as a stream: lines are read as rg writes them, and rg is killed once enough is read.

Why: a pattern that matches much on a big tree writes gigabytes; capturing all of it (and
splitting it into lists) cost seconds and gigabytes of memory for the 250 lines the model sees.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

CHUNK = 1 << 16


@dataclass
class RgRun:
    """A running rg: its records (text, separator gone), and after the run its exit code and stderr.

    A record ends at a newline, or at a NUL for `rg --null` listings (`sep=b"\\0"`): a file name
    may hold a newline, so only NUL marks where a listed name ends."""

    proc: subprocess.Popen[bytes]
    err_file: IO[bytes]
    code: int | None = None
    err: str = ""
    lines_read: int = field(default=0)
    sep: bytes = b"\n"

    def lines(self) -> Iterator[str]:
        """Each output record, split at `sep` only (splitlines() would also cut at \\f, \\v ..).

        Read in chunks as rg writes them, decoded and split a chunk at a time: a line at a time
        cost a third of Glob's time on 25,000 paths."""
        assert self.proc.stdout is not None
        fd, rest, sep, text_sep = self.proc.stdout.fileno(), b"", self.sep, self.sep.decode()
        while chunk := os.read(fd, CHUNK):
            cut = chunk.rfind(sep) + 1
            if not cut:
                rest += chunk
                continue
            whole, rest = rest + chunk[:cut], chunk[cut:]
            lines = whole.decode("utf-8", "replace").split(text_sep)
            lines.pop()  # the empty string after the last separator
            self.lines_read += len(lines)
            yield from lines
        if rest:
            self.lines_read += 1
            yield rest.decode("utf-8", "replace")


@contextmanager
def stream_rg(
    command: list[str], cwd: str, stdin: int | None, keep: tuple[int, ...], sep: bytes = b"\n"
) -> Iterator[RgRun]:
    """Run rg; on leaving, kill it if it still runs and reap it, so no rg outlives the call."""
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.DEVNULL if stdin is None else stdin, stdout=subprocess.PIPE,
            stderr=err_file, pass_fds=keep,
        )  # fmt: skip
        run = RgRun(proc, err_file, sep=sep)
        try:
            yield run
        finally:
            if proc.poll() is None:
                proc.kill()
            assert proc.stdout is not None
            proc.stdout.close()
            run.code = proc.wait()
            err_file.seek(0)
            run.err = err_file.read(4096).decode("utf-8", "replace")
