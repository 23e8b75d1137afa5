"""Scripted fake LLM server speaking the OpenAI chat and Anthropic Messages wire APIs.

Stdlib only. Used in-process by tests (``with FakeLLMServer(turns) as srv: ...``) or as
a separate process for benchmarks::

    python tests/fakes/llm_server.py --script turns.json [--port N]
    python tests/fakes/llm_server.py --echo-loop 20

The first stdout line is the base URL (``http://127.0.0.1:PORT``); it then serves until
killed. A turn is ``{"text": "...", "tool_calls": [{"name": "Read", "input": {...}}]}``.

What real local servers do, on request: a turn may carry ``"finish": "length"`` (a reply cut by
the token cap: OpenAI ``finish_reason``, Anthropic ``stop_reason`` max_tokens, Ollama
``done_reason``) or ``"error": {"status": 400, "body": {...}}`` (llama.cpp's context-size
refusal); ``stall`` (a threading.Event) holds the reply before its first byte or after its first
chunk (``stall_at``) until the event is set; ``props`` is llama.cpp's ``GET /props`` and ``show``
Ollama's ``POST /api/show``; ``POST /api/chat`` speaks Ollama's native chat (NDJSON).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Json = dict[str, Any]
Responder = Callable[[str, Json], Json]

DONE_TURN: Json = {"text": "done."}
MODELS: list[Json] = [
    {"id": m, "object": "model", "type": "model", "created": 0, "owned_by": "fake"}
    | {"display_name": m, "created_at": "2024-01-01T00:00:00Z"}
    for m in ("fake-model", "fake-model-large")
]
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _pieces(s: str, n: int = 3) -> list[str]:
    """Split ``s`` into up to ``n`` non-empty consecutive pieces."""
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _calls(turn: Json) -> list[Json]:
    return [{"name": c["name"], "input": c.get("input") or {}} for c in turn.get("tool_calls") or []]


def _out_tokens(turn: Json) -> int:
    calls = turn.get("tool_calls")
    return max(1, (len(turn.get("text") or "") + len(json.dumps(calls or ""))) // 4)


def _id(prefix: str, n: int = 24) -> str:
    return prefix + uuid.uuid4().hex[:n]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # hang-ups are normal
            super().handle_error(request, client_address)


class FakeLLMServer:
    """Answers the N-th successful model POST with ``turns[N]``, then with ``done.``."""

    def __init__(
        self,
        turns: list[Json],
        *,
        fail_first: int = 0,
        fail_status: int = 429,
        text_tool_calls: bool = False,
        responder: Responder | None = None,
        input_tokens: int | Callable[[Json], int] | None = None,
        port: int = 0,
        stall: threading.Event | None = None,
        stall_at: str = "first_byte",
        props: Json | None = None,
        show: Json | None = None,
    ) -> None:
        self.stall = stall
        self.stall_at = stall_at  # "first_byte" | "mid_stream"
        self.props = props
        self.show = show
        self.turns = list(turns)
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.text_tool_calls = text_tool_calls
        self.responder = responder
        self.input_tokens = input_tokens
        self.requests: list[tuple[str, Json]] = []
        self.headers: list[dict[str, str]] = []  # each POST's headers, in order (who sent which key)
        self.turn_index = 0  # successful model POSTs so far
        self.connections = 0  # TCP connections accepted: a client that keeps its connection alive opens one
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> None:
        if self._thread is None:
            serve = self._httpd.serve_forever
            self._thread = threading.Thread(target=serve, args=(0.05,), daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- called from handler threads --
    def _record(self, path: str, body: Json, headers: dict[str, str] | None = None) -> bool:
        """Record a POST; return True if it must fail."""
        with self._lock:
            self.requests.append((path, body))
            self.headers.append({k.lower(): v for k, v in (headers or {}).items()})
            return len(self.requests) <= self.fail_first

    def _next_turn(self, api: str, body: Json) -> Json:
        with self._lock:
            i = self.turn_index
            self.turn_index += 1
        if self.responder is not None:
            return self.responder(api, body)
        return self.turns[i] if i < len(self.turns) else DONE_TURN

    def _input_tokens(self, body: Json, raw: bytes) -> int:
        if callable(self.input_tokens):
            return self.input_tokens(body)
        return max(1, len(raw) // 4) if self.input_tokens is None else self.input_tokens


# ------------------------------------------------------------ OpenAI chat completions
def _openai_message(turn: Json, text_calls: bool) -> tuple[str | None, list[Json]]:
    """Return (content, structured tool_calls)."""
    text, calls = turn.get("text") or "", _calls(turn)
    if text_calls and calls:  # qwen-on-ollama style: JSON objects in the content
        objs = [json.dumps({"name": c["name"], "arguments": c["input"]}) for c in calls]
        text, calls = "\n".join([text, *objs] if text else objs), []
    tcs = [
        {"id": _id("call_"), "type": "function"}
        | {"function": {"name": c["name"], "arguments": json.dumps(c["input"])}}
        for c in calls
    ]
    return text or None, tcs


def _openai_usage(inp: int, turn: Json) -> Json:
    out = _out_tokens(turn)
    return {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out}


def _openai_base(body: Json, obj: str) -> Json:
    return {
        "id": _id("chatcmpl-"),
        "object": obj,
        "created": int(time.time()),
        "model": body.get("model") or "fake-model",
    }


def openai_response(body: Json, turn: Json, inp: int, text_calls: bool) -> Json:
    content, tcs = _openai_message(turn, text_calls)
    msg: Json = {"role": "assistant", "content": content, "refusal": None}
    if tcs:
        msg["tool_calls"] = tcs
    finish = turn.get("finish") or ("tool_calls" if tcs else "stop")
    choice = {"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}
    return _openai_base(body, "chat.completion") | {
        "choices": [choice],
        "usage": _openai_usage(inp, turn),
    }


def openai_stream(body: Json, turn: Json, inp: int, text_calls: bool) -> Iterator[str]:
    content, tcs = _openai_message(turn, text_calls)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base = _openai_base(body, "chat.completion.chunk")

    def chunk(delta: Json, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        usage = {"usage": None} if include_usage else {}
        return f"data: {json.dumps(base | {'choices': [choice]} | usage)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(content or ""):
        yield chunk({"content": piece})
    for i, tc in enumerate(tcs):
        first = tc | {"index": i, "function": tc["function"] | {"arguments": ""}}
        yield chunk({"tool_calls": [first]})
        for piece in _pieces(tc["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, turn.get("finish") or ("tool_calls" if tcs else "stop"))
    if include_usage:
        final = base | {"choices": [], "usage": _openai_usage(inp, turn)}
        yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


# ------------------------------------------------------------ Anthropic messages
def _anthropic_blocks(turn: Json) -> list[Json]:
    text = turn.get("text")
    blocks: list[Json] = [{"type": "text", "text": text}] if text else []
    for c in _calls(turn):
        blocks.append({"type": "tool_use", "id": _id("toolu_01", 22)} | c)
    return blocks


def _anthropic_message(body: Json, blocks: list[Json], inp: int, out: int, finish: str | None = None) -> Json:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    stop = "max_tokens" if finish == "length" else stop
    return {
        "id": _id("msg_01", 22),
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "model": body.get("model") or "fake-model",
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": out},
    }


def anthropic_response(body: Json, turn: Json, inp: int) -> Json:
    return _anthropic_message(body, _anthropic_blocks(turn), inp, _out_tokens(turn), turn.get("finish"))


def anthropic_stream(body: Json, turn: Json, inp: int) -> Iterator[str]:
    def ev(name: str, **data: Any) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name} | data)}\n\n"

    blocks = _anthropic_blocks(turn)
    msg = _anthropic_message(body, blocks, inp, 1, turn.get("finish"))
    yield ev("message_start", message=msg | {"content": [], "stop_reason": None})
    yield ev("ping")
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            yield ev("content_block_start", index=i, content_block=b | {"text": ""})
            for piece in _pieces(b["text"]):
                delta = {"type": "text_delta", "text": piece}
                yield ev("content_block_delta", index=i, delta=delta)
        else:
            yield ev("content_block_start", index=i, content_block=b | {"input": {}})
            for piece in ["", *_pieces(json.dumps(b["input"]))]:
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield ev("content_block_delta", index=i, delta=delta)
        yield ev("content_block_stop", index=i)
    end: Json = {"stop_reason": msg["stop_reason"], "stop_sequence": None}
    yield ev("message_delta", delta=end, usage={"output_tokens": _out_tokens(turn)})
    yield ev("message_stop")


# ------------------------------------------------------------ Ollama native chat
def _ollama_message(turn: Json, text_calls: bool) -> Json:
    content, tcs = _openai_message(turn, text_calls)
    msg: Json = {"role": "assistant", "content": content or ""}
    if tcs:
        msg["tool_calls"] = [
            {"function": {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}}
            for c in tcs
        ]
    return msg


def _ollama_done(body: Json, turn: Json, inp: int) -> Json:
    return {
        "model": body.get("model") or "fake-model",
        "created_at": "2024-01-01T00:00:00Z",
        "done": True,
        "done_reason": turn.get("finish") or "stop",
        "prompt_eval_count": inp,
        "eval_count": _out_tokens(turn),
    }


def ollama_response(body: Json, turn: Json, inp: int, text_calls: bool) -> Json:
    return _ollama_done(body, turn, inp) | {"message": _ollama_message(turn, text_calls)}


def ollama_stream(body: Json, turn: Json, inp: int, text_calls: bool) -> Iterator[str]:
    msg = _ollama_message(turn, text_calls)
    base = {"model": body.get("model") or "fake-model", "created_at": "2024-01-01T00:00:00Z", "done": False}
    for piece in _pieces(msg["content"]):
        yield json.dumps(base | {"message": {"role": "assistant", "content": piece}}) + "\n"
    if msg.get("tool_calls"):
        yield json.dumps(base | {"message": {"role": "assistant", "content": "", "tool_calls": msg["tool_calls"]}})
        yield "\n"
    yield json.dumps(_ollama_done(body, turn, inp) | {"message": {"role": "assistant", "content": ""}}) + "\n"


# ------------------------------------------------------------ HTTP plumbing
def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # real servers answer at once; delayed ACKs add ~40 ms
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def setup(self) -> None:  # once per TCP connection
            with server._lock:
                server.connections += 1
            super().setup()

        def _json(self, status: int, obj: Json, **headers: str) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k.replace("_", "-"), v)
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: Iterator[str], kind: str = "text/event-stream") -> None:
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i, e in enumerate(events):
                data = e.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                if i == 0 and server.stall is not None and server.stall_at == "mid_stream":
                    server.stall.wait()  # a server that stops sending in the middle of a reply
            self.wfile.write(b"0\r\n\r\n")

        def _not_found(self) -> None:
            err = {"type": "not_found_error", "message": f"no route {self.path}"}
            self._json(404, {"type": "error", "error": err})

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/") == "/props" and server.props is not None:
                self._json(200, server.props)  # llama.cpp: default_generation_settings.n_ctx
                return
            if not self.path.split("?")[0].rstrip("/").endswith("/models"):
                self._not_found()
                return
            first_last = {"first_id": MODELS[0]["id"], "last_id": MODELS[-1]["id"]}
            page = {"object": "list", "data": MODELS, "has_more": False} | first_last
            self._json(200, page)

        def do_POST(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body: Json = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode(errors="replace")}
            if path == "/api/show":
                if server.show is None:
                    self._json(404, {"error": f"model '{body.get('model')}' not found"})
                else:
                    self._json(200, server.show)
                return
            fail = server._record(self.path, body, dict(self.headers.items()))
            if not path.endswith(("/messages", "/chat/completions", "/api/chat")):
                self._not_found()
                return
            api = "anthropic" if path.endswith("/messages") else "ollama" if path == "/api/chat" else "openai"
            if fail:
                status = server.fail_status
                err = {"type": ERROR_TYPES.get(status, "api_error")}
                err["message"] = f"fake failure (HTTP {status})"
                if api == "anthropic":
                    payload: Json = {"type": "error", "error": err}
                else:
                    payload = {"error": err | {"param": None, "code": err["type"]}}
                # The SDKs ignore `retry-after: 0` (they want > 0) and back off
                # ~0.5s; they prefer retry-after-ms, so a 1 ms retry is immediate.
                self._json(status, payload, retry_after="0", retry_after_ms="1")
                return
            turn = server._next_turn(api, body)
            if server.stall is not None and server.stall_at == "first_byte":
                server.stall.wait()  # a CPU still reading the prompt: nothing sent yet
            if turn.get("error"):
                self._json(turn["error"]["status"], turn["error"]["body"])
                return
            inp = server._input_tokens(body, raw)
            tc, stream = server.text_tool_calls, bool(body.get("stream"))
            if api == "ollama":
                if body.get("stream", True):  # Ollama streams unless told not to
                    self._sse(ollama_stream(body, turn, inp, tc), "application/x-ndjson")
                else:
                    self._json(200, ollama_response(body, turn, inp, tc))
            elif api == "anthropic" and stream:
                self._sse(anthropic_stream(body, turn, inp))
            elif api == "anthropic":
                self._json(200, anthropic_response(body, turn, inp))
            elif stream:
                self._sse(openai_stream(body, turn, inp, tc))
            else:
                self._json(200, openai_response(body, turn, inp, tc))

    return Handler


def tool_results(body: Json) -> int:
    """How many tool results a request's conversation holds, on either wire (OpenAI `tool`
    messages, Anthropic `tool_result` blocks): a stateless responder's step counter."""
    results = 0
    for m in body.get("messages") or []:
        content = m.get("content")
        results += m.get("role") == "tool"
        if isinstance(content, list):
            results += sum(b.get("type") == "tool_result" for b in content)
    return results


def echo_loop_responder(n: int) -> Responder:
    """Stateless: ask to Read a.txt until the conversation has ``n`` tool results."""

    def respond(api: str, body: Json) -> Json:
        results = tool_results(body)
        if results < n:
            return {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]}
        return DONE_TURN

    return respond


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--script", help="JSON file holding a list of turns")
    g.add_argument("--echo-loop", type=int, metavar="N", help="N Read calls, then end")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--text-tool-calls", action="store_true")
    a = p.parse_args(argv)
    turns: list[Json] = []
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            turns = json.load(f)
    responder = None if a.script else echo_loop_responder(a.echo_loop)
    kw: Any = {"port": a.port, "text_tool_calls": a.text_tool_calls}
    srv = FakeLLMServer(turns, responder=responder, **kw)
    print(srv.url, flush=True)
    try:
        srv._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv._httpd.server_close()


if __name__ == "__main__":
    main()
