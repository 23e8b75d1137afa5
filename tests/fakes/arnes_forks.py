"""Run the real `arnes` as a child forked from a pre-imported one (tests/fakes/arnes_server.py),
with what `subprocess.run(..., stdin=DEVNULL, capture_output=True, text=True)` gives a test:
exit code, stdout, stderr, and a TimeoutExpired after killing it. Reading goes on until both
pipes close, as `communicate` does, so a process arnes leaves holding them is noticed the same.

`ARNES_TEST_EXEC=1` runs every start as a new interpreter instead (the slow, plain way)."""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SERVER = Path(__file__).with_name("arnes_server.py")
# What the server imports with: no home, no arnes settings (see arnes_server.py's docstring).
_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING")


class ArnesForks:
    """One server per test worker, started on first use, gone when the worker's stdin pipe to it
    closes (the worker ended)."""

    def __init__(self) -> None:
        self._folder = tempfile.mkdtemp(prefix="arnes-forks-")
        self._path = os.path.join(self._folder, "s")
        env = {k: os.environ[k] for k in _KEPT if k in os.environ}
        env["HOME"] = os.path.join(self._folder, "no-home")
        self._proc = subprocess.Popen(
            [sys.executable, str(_SERVER), self._path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self._folder,
        )  # fmt: skip
        assert self._proc.stdout is not None
        if self._proc.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the arnes fork server did not start (exit {self._proc.wait()})")

    def run(self, argv: list[str], cwd: str | None, env: dict[str, str], timeout: float) -> tuple[int, str, str]:
        deadline = time.monotonic() + timeout
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        request = json.dumps({"argv": argv, "env": env, "cwd": cwd or os.getcwd()}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self._path)
            socket.send_fds(conn, [len(request).to_bytes(8, "big")], [stdin, out_w, err_w])
            conn.sendall(request)
            for fd in (stdin, out_w, err_w):
                os.close(fd)
            answers = conn.makefile("rb")
            pid = int(answers.readline())
            out, err = _read_both(out_r, err_r, deadline)
            if out is None:
                os.kill(pid, 9)
                answers.readline()
                raise subprocess.TimeoutExpired(argv, timeout)
            status = int(answers.readline())
        return status, out, err or ""


def _read_both(out_fd: int, err_fd: int, deadline: float) -> tuple[str | None, str | None]:
    """Both pipes to their end, or (None, None) at the deadline."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, None
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
        finally:
            os.close(out_fd)
            os.close(err_fd)
    out, err = (b"".join(chunks[fd]).decode() for fd in (out_fd, err_fd))
    return _newlines(out), _newlines(err)


def _newlines(text: str) -> str:
    """As subprocess's text mode reads a pipe (universal newlines)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
