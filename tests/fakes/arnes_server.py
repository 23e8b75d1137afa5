"""A pre-imported `arnes` for the test suite: imports arnes and its SDKs once, then forks a child per
run (tests only; started by tests/fakes/arnes_forks.py).

Why: the suite starts the real `arnes` about 500 times, and each start spent ~0.7 s of CPU on a new
interpreter and the same imports (2.5 s more when the Anthropic SDK was loaded): more than a third
of CI's time. Each child is still its own process with its own argv, environment, working folder
and standard streams (sent with the request), running the console script's entry point and ending
as the console script would (atexit handlers, flushed streams, the exit code of `main()`).

What it cannot hide: the modules are imported here with a scrubbed environment (a HOME that does
not exist, no arnes settings), so a module that read the environment or the home folder at import
time would fail the tests instead of passing for the wrong reason.

Protocol (a Unix socket): the client sends an 8-byte length with the fds of stdin, stdout and
stderr, then that many bytes of JSON {argv, env, cwd}; the server answers "PID\n" once forked and
"STATUS\n" when the child has ended (negative: killed by that signal, as subprocess says it).
Requests are served one at a time: a test worker runs one `arnes` at a time through it.
"""

from __future__ import annotations

import gc
import importlib
import io
import json
import os
import pkgutil
import selectors
import socket
import sys
import threading
from typing import Any

_SDKS = ("anthropic", "openai", "mcp", "mcp.client.stdio", "mcp.client.sse", "mcp.client.streamable_http", "yaml")
# Never imported ahead: running them has effects (a __main__), or they start threads (Ray).
_SKIP = ("__main__", "ray")


def preload() -> None:
    """Import every arnes module that imports cleanly, and the SDKs arnes loads on demand."""
    import arnes

    for info in pkgutil.walk_packages(arnes.__path__, "arnes."):
        if any(part in _SKIP for part in info.name.split(".")):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional extra that is not installed: arnes imports it lazily too
            continue
    for name in _SDKS:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    gc.collect()
    gc.freeze()  # children share these pages: a collection in a child must not touch (and copy) them
    if threading.active_count() != 1:
        raise SystemExit("arnes_server: an import started a thread; forking would copy a half-held lock")


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(path: str) -> tuple[dict[str, Any], list[int]] | None:
    """Accept requests until the client goes away (stdin closes). In a forked child, return its
    request and fds; in the server, return None at the end."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                return None  # the test worker is gone
            conn, _ = listener.accept()
            with conn:
                try:
                    head, fds, _, _ = socket.recv_fds(conn, 8, 3)
                    head += _recv_exact(conn, 8 - len(head))
                    request = json.loads(_recv_exact(conn, int.from_bytes(head, "big")))
                except (EOFError, OSError, ValueError):
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    listener.close()
                    conn.detach()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                try:
                    conn.sendall(f"{pid}\n".encode())
                    _, status = os.waitpid(pid, 0)
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    continue


def _text_stream(fd: int, mode: str, like: io.TextIOWrapper) -> io.TextIOWrapper:
    """A standard stream as CPython makes one at start-up for this fd."""
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: io.BufferedIOBase = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    line_buffered = fd == 2 or (fd == 1 and raw.isatty())
    return io.TextIOWrapper(buffered, encoding=like.encoding, errors=like.errors, line_buffering=line_buffered)


def become_arnes(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: take the request's streams, folder, environment and argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(request["argv"][0])  # as the console script's own folder
    sys.stdin = sys.__stdin__ = _text_stream(0, "r", sys.stdin)  # type: ignore[arg-type]
    sys.stdout = sys.__stdout__ = _text_stream(1, "w", sys.stdout)  # type: ignore[arg-type]
    sys.stderr = sys.__stderr__ = _text_stream(2, "w", sys.stderr)  # type: ignore[arg-type]


if __name__ == "__main__":
    preload()
    job = serve(sys.argv[1])
    if job is None:
        raise SystemExit(0)
    become_arnes(*job)
    from arnes.cli import main

    raise SystemExit(main())
