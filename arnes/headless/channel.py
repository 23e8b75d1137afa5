"""stdin as Claude Code's Agent SDKs write it (`--input-format stream-json`), one JSON object a
line: user messages (each one a turn), control requests for arnes to answer (`initialize`,
`interrupt`, ...), and the answers to arnes's own requests (`can_use_tool`).

One reader thread takes every line as it comes, so a control request is answered while a turn
runs; user messages wait in a queue for the main thread. At end of input the queue ends and any
request of arnes's still waiting for an answer gets none (ChannelClosed: what it asked is denied).
"""

from __future__ import annotations

import itertools
import json
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from arnes.nesting import json_loads
from arnes.safe import visible
from arnes.ui import sdk_messages as sdk
from arnes.ui.stdout import Stdout

Json = dict[str, Any]


def as_object(value: Any) -> Json:
    """A JSON value that should be an object, or an empty one: a malformed message carries nothing."""
    return value if isinstance(value, dict) else {}


class ChannelClosed(Exception):
    """The SDK closed stdin before answering."""


class Unanswered(Exception):
    """A control request arnes does not answer; its message goes back to the SDK as the error."""


@dataclass
class Channel:
    stdin: TextIO
    out: Stdout
    session_id: str = ""
    _answer: Callable[[Json], Json] | None = None
    _inbox: queue.Queue[Json | None] = field(default_factory=queue.Queue)
    _waiting: dict[str, queue.Queue[Json | None]] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _closed: bool = False
    _pending: int = 0  # user messages taken and not yet answered with their result
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, answer: Callable[[Json], Json]) -> None:
        """Read stdin from now on; `answer` turns a control request into its response (or raises Unanswered)."""
        self._answer = answer
        threading.Thread(target=self._read, name="arnes-stdin", daemon=True).start()

    def messages(self) -> Iterator[Json]:
        """The user messages, in order, until stdin ends; `answered` after each one's result."""
        while (message := self._inbox.get()) is not None:
            yield message

    def answered(self) -> None:
        with self._lock:
            self._pending -= 1

    def idle(self) -> bool:
        """No turn runs or waits to: every user message read so far has had its result. Asked on
        the reader's thread, so no message can come in while the answer is used."""
        with self._lock:
            return self._pending == 0

    def request(self, request: Json, timeout: float | None = None) -> Json:
        """Ask the SDK (a `control_request`) and wait for its `control_response`; TimeoutError
        after `timeout` seconds without one (None: as long as it takes)."""
        with self._lock:
            if self._closed:
                raise ChannelClosed
            request_id = f"arnes_{next(self._ids)}"
            box: queue.Queue[Json | None] = queue.Queue(maxsize=1)
            self._waiting[request_id] = box
        self.out.line({"type": "control_request", "request_id": request_id, "request": request})
        try:
            reply = box.get(timeout=timeout)
        except queue.Empty:
            with self._lock:
                self._waiting.pop(request_id, None)
            raise TimeoutError(f"no answer in {timeout:g} s") from None
        if reply is None:
            raise ChannelClosed
        return reply

    def _read(self) -> None:
        try:
            while line := self.stdin.readline():
                self._take(line)
        except (OSError, ValueError):  # stdin closed under the reader: the same as its end
            pass
        finally:
            with self._lock:
                self._closed = True
                boxes = list(self._waiting.values())
                self._waiting.clear()
            for box in boxes:
                box.put(None)
            self._inbox.put(None)

    def _take(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json_loads(line)
        except json.JSONDecodeError as exc:
            self._skip(f"stdin: a line that is not JSON was skipped ({exc.msg}, column {exc.colno})")
            return
        except ValueError as exc:
            self._skip(f"stdin: a line was skipped: {exc}")
            return
        if not isinstance(message, dict):
            self._skip("stdin: a line that is not a JSON object was skipped")
            return
        kind = message.get("type")
        if kind == "user":
            with self._lock:
                self._pending += 1
            self._inbox.put(message)
        elif kind == "control_request":
            self._respond(message)
        elif kind == "control_response":
            reply = as_object(message.get("response"))
            with self._lock:
                box = self._waiting.pop(str(reply.get("request_id")), None)
            if box is not None:
                box.put(reply)
        # other types (keep_alive, ...) carry nothing arnes acts on

    def _respond(self, message: Json) -> None:
        request_id = message.get("request_id")
        request = as_object(message.get("request"))
        try:
            if self._answer is None:
                raise Unanswered("arnes is not ready to answer control requests")
            response: Json = {"subtype": "success", "request_id": request_id, "response": self._answer(request)}
        except Unanswered as exc:
            response = {"subtype": "error", "request_id": request_id, "error": str(exc)}
        self.out.line({"type": "control_response", "response": response})

    def _skip(self, warning: str) -> None:
        print(f"arnes: warning: {visible(warning)}", file=sys.stderr)
        self.out.line(sdk.system("warning", self.session_id, message=warning, parent_tool_use_id=None))
