"""A recording pass-through between an agent and a local model server, to read what the model wrote.

    python bench/realmodel/tap.py --upstream http://127.0.0.1:8088 --port 8089 --log FILE.jsonl

Point the agent at http://127.0.0.1:8089/v1 instead of the server. Every request body and the
response (streamed bytes passed on as they arrive) is appended to the log as one JSON line:
{"path", "request", "status", "response"}; for a streamed reply `response` is the joined text and
tool-call arguments of the SSE chunks, `raw` the chunks, and `timings` the server's own prompt and
generation figures (llama-server sends them in the last chunk). A finding about a real model is
then the exact text it produced, not arnes's reading of it. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LOCK = threading.Lock()


def digest(raw: bytes) -> dict[str, Any]:
    """The text, tool calls, finish reason and timings of an SSE stream or a JSON body."""
    text, calls, finish, timings, usage = [], {}, None, None, None
    lines = raw.decode("utf-8", "replace").splitlines()
    if not any(line.startswith("data:") for line in lines):
        try:
            body = json.loads(raw)
        except ValueError:
            return {"body": raw.decode("utf-8", "replace")[:20000]}
        choice = (body.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        finish = choice.get("finish_reason")
        return {"text": msg.get("content"), "tool_calls": msg.get("tool_calls"), "finish": finish,
                "timings": body.get("timings"), "usage": body.get("usage")}  # fmt: skip
    for line in lines:
        if not line.startswith("data:") or line.strip() == "data: [DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        timings = chunk.get("timings", timings)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {"text": "".join(text), "tool_calls": list(calls.values()) or None, "finish": finish, "timings": timings,
            "usage": usage}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True)
    a = p.parse_args()
    up = urllib.parse.urlsplit(a.upstream)
    log = Path(a.log)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=3600)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            conn.request(method, self.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            raw = bytearray()
            gone = False
            while True:
                piece = resp.read1(65536)
                if not piece:
                    break
                raw += piece
                try:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                except OSError:  # the agent hung up (killed at its time-out): stop the generation too
                    gone = True
                    break
            if not gone:
                self.wfile.write(b"0\r\n\r\n")
            conn.close()
            try:
                request = json.loads(body) if body else None
            except ValueError:
                request = body.decode("utf-8", "replace")
            entry = {"path": self.path, "status": resp.status, "request": request, "response": digest(bytes(raw))}
            if gone:
                entry["client_gone"] = True
            with LOCK, log.open("a") as f:
                f.write(json.dumps(entry) + "\n")

        def do_GET(self) -> None:
            self._forward("GET")

        def do_POST(self) -> None:
            self._forward("POST")

    ThreadingHTTPServer(("127.0.0.1", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
