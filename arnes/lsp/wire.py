"""JSON-RPC 2.0 over a language server's stdin/stdout, with LSP's `Content-Length` framing.

One reader thread per server: responses wake the caller that waits for them, notifications go to
`on_notify`, and the server's own requests (`workspace/configuration`, `client/registerCapability`,
...) are answered at once from `on_request`. A message over MAX_MESSAGE bytes ends the connection:
a server is not allowed to fill arnes's memory.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from arnes.nesting import json_loads

MAX_MESSAGE = 32 << 20
MAX_HEADER = 8192


class LspError(Exception):
    """The server answered with an error, went away, or did not answer in time."""


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: str | None = None


class Connection:
    def __init__(
        self,
        reader: IO[bytes],
        writer: IO[bytes],
        on_notify: Callable[[str, Any], None],
        on_request: Callable[[str, Any], Any],
    ):
        self._reader, self._writer = reader, writer
        self._on_notify, self._on_request = on_notify, on_request
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.closed: str | None = None  # why the connection ended
        self._thread = threading.Thread(target=self._read_all, name="arnes-lsp-reader", daemon=True)
        self._thread.start()

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """The result of `method`; LspError if the server says no, goes away or takes longer than `timeout`."""
        number = next(self._ids)
        waiting = _Pending()
        with self._lock:
            if self.closed is not None:
                raise LspError(self.closed)
            self._pending[number] = waiting
        try:
            self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            if not waiting.done.wait(timeout):
                raise LspError(f"no answer to {method} within {timeout:g} s")
        finally:
            with self._lock:
                self._pending.pop(number, None)
        if waiting.error is not None:
            raise LspError(waiting.error)
        return waiting.result

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        try:
            with self._write_lock:
                self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self._writer.flush()
        except (OSError, ValueError) as exc:
            raise LspError(f"the server is gone ({exc})") from None

    def _read_all(self) -> None:
        why = "the server closed its output"
        try:
            while (message := self._read_one()) is not None:
                self._dispatch(message)
        except (OSError, ValueError, LspError) as exc:
            why = f"the server's output could not be read: {exc}"
        with self._lock:
            self.closed = why
            pending, self._pending = self._pending, {}
        for waiting in pending.values():
            waiting.error = why
            waiting.done.set()

    def _read_one(self) -> dict[str, Any] | None:
        length = None
        seen = 0
        while True:
            line = self._reader.readline(MAX_HEADER)
            if not line:
                return None
            seen += len(line)
            if seen > MAX_HEADER:
                raise LspError("a message header is too long")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None or length < 0 or length > MAX_MESSAGE:
            raise LspError(f"a message of {length} bytes (at most {MAX_MESSAGE})")
        body = self._reader.read(length)
        if len(body) < length:
            return None
        message = json_loads(body.decode("utf-8", errors="replace"))
        return message if isinstance(message, dict) else {}

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str) and "id" in message:  # the server asks
            try:
                answer: dict[str, Any] = {"result": self._on_request(method, message.get("params"))}
            except Exception as exc:  # an answer the server can read, whatever went wrong
                answer = {"error": {"code": -32603, "message": str(exc)}}
            with contextlib.suppress(LspError):
                self._send({"jsonrpc": "2.0", "id": message["id"], **answer})
        elif isinstance(method, str):
            self._on_notify(method, message.get("params"))
        elif isinstance(message.get("id"), int):
            with self._lock:
                waiting = self._pending.get(message["id"])
            if waiting is None:
                return
            error = message.get("error")
            if isinstance(error, dict):
                waiting.error = f"the server answered with an error: {error.get('message', error)}"
            else:
                waiting.result = message.get("result")
            waiting.done.set()
