"""Long sessions (issue 14): is a step's cost flat in the conversation, and how often does a small window compact?

    python bench/bench_longrun.py flat [--steps 1000] [--provider openai|anthropic]
    python bench/bench_longrun.py compaction [--turns 200] [--window 4096] [--read-bytes 2048]

`flat` runs the real `arnes` command for N Read steps against the repo's fake server (in this
process, TCP_NODELAY as in run.py) and reads the JSONL trace: the time between consecutive
`model_request` events is one whole step (request, stream, tool, trace). It prints the mean over
steps 1-100 and over the last 100, their ratio, and the server's own time per request in each
window (the floor: the fake server parses the whole body and answers). Nothing here is a test.

`compaction` runs N Read steps of a file of `--read-bytes` in a `--window`-token context and
counts the passes that made room, by kind (`clear`: old results cleared, no model call; `summary`:
an extra model call, answered by the server with a short summary). It also models what a local
server with one slot (llama.cpp `--parallel 1`) must prefill anew for each request: the part past
the longest common prefix with the request before, summary calls included, since they take the
slot too. That, not harness time, is what a user of a local model waits for. `--replay URL`
sends the first requests of the run, in order, to a real llama.cpp server and adds up the
timings it reports (bench/realmodel/run.py serve starts one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.fakes.llm_server import DONE_TURN, FakeLLMServer, Json  # noqa: E402

SERVER_SECONDS: list[float] = []  # one per model request, in order


class CountingResponder:
    """Read a.txt until `n` calls were asked for, then `done.`; summary calls (no tools) get a summary.

    Counting, not walking the body: the server's own cost must not grow with the conversation.
    """

    def __init__(self, n: int, slot: bool = False) -> None:
        self.n, self.asked = n, 0
        self._lock = threading.Lock()
        self.slot = slot  # model one llama.cpp slot's prefix cache (costs a walk of each body)
        self._cached: list[str] = []
        self.prefill: list[tuple[bool, int]] = []  # (summary call?, tokens past the cached prefix)
        self.bodies: list[Json] = []  # what was sent, in order, for --replay

    def _prefill(self, body: Json) -> None:
        """What a server with one slot must process anew: the request past its longest common
        prefix with the one before (any request, a summary call too, takes the slot)."""
        parts = [json.dumps([body.get("tools"), body.get("system")])] + [json.dumps(m) for m in body["messages"]]
        same = 0
        for a, b in zip(parts, self._cached, strict=False):
            if a != b:
                break
            same += 1
        self._cached = parts
        self.bodies.append(body)
        self.prefill.append((not body.get("tools"), sum(len(x) for x in parts[same:]) // 4))

    def __call__(self, api: str, body: Json) -> Json:
        if self.slot:
            self._prefill(body)
        if not body.get("tools"):
            return {"text": "Summary: the user asked to read a.txt many times; it was read; nothing changed."}
        with self._lock:
            self.asked += 1
            if self.asked <= self.n:
                # A new `limit` each time (same content): the loop guard must not see a repeat.
                call = {"file_path": "a.txt", "limit": 10_000 + self.asked}
                return {"tool_calls": [{"name": "Read", "input": call}]}
        return DONE_TURN


def run(
    steps: int, provider: str, window: int | None, read_bytes: int, responder: CountingResponder | None = None
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="arnes-longrun-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        line = "x" * 63 + "\n"
        (ws / "a.txt").write_text(line * max(1, read_bytes // 64) if read_bytes else "hello from a.txt\n")
        srv = FakeLLMServer([], responder=responder or CountingResponder(steps))
        srv._httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        # Keeping every parsed request (1,000 of up to 1,000 messages) makes the harness's garbage
        # collector the slowest part of a late step; only the count is needed here.
        srv._record = lambda path, body, headers=None: False  # type: ignore[method-assign]
        handler = srv._httpd.RequestHandlerClass
        post = handler.do_POST  # type: ignore[attr-defined]

        def timed_post(self: Any) -> None:  # the server's own time per request: the floor of a step
            t = time.perf_counter()
            post(self)
            SERVER_SECONDS.append(time.perf_counter() - t)

        handler.do_POST = timed_post  # type: ignore[attr-defined]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test", "XDG_CONFIG_HOME": f"{tmp}/xdg"}
        exe = str(Path(sys.executable).parent / "arnes")
        with srv:
            if provider == "anthropic":
                cmd = [exe, "--provider", "anthropic", "--base-url", srv.url, "--model", "fake-model"]
            else:
                cmd = [exe, "--provider", "openai", "--base-url", srv.url + "/v1", "--model", "fake"]
            if window:
                cmd += ["--context-window", str(window)]
            cmd += ["-w", str(ws), "--permission-mode", "acceptEdits", "--output-format", "json"]
            cmd += ["--max-turns", str(steps + 10), f"read a.txt {steps} times"]
            t0 = time.perf_counter()
            prefix = os.environ.get("BENCH_PREFIX", "").split()  # e.g. "py-spy record -o out.txt --format raw --"
            proc = subprocess.run([*prefix, *cmd], capture_output=True, text=True, env=env, cwd=tmp)
            wall = time.perf_counter() - t0
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            sys.exit(f"bench: arnes failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        if out.get("tool_calls") != steps or out.get("stop_reason") != "end_turn":
            sys.exit(f"bench: want {steps} tool calls and end_turn, got {out}")
        print(f"whole run: {wall:.2f} s, {out.get('compactions')} compactions", file=sys.stderr)
        lines = Path(out["trace"]).read_text().splitlines()
        return [json.loads(x) for x in lines if x.strip()]


def flat(args: argparse.Namespace) -> None:
    events = run(args.steps, args.provider, None, 0)
    stamps = [dt.datetime.fromisoformat(e["ts"]).timestamp() for e in events if e["event"] == "model_request"]
    steps = [b - a for a, b in itertools.pairwise(stamps)]
    first, last = steps[:100], steps[-100:]
    a, b = sum(first) / len(first) * 1000, sum(last) / len(last) * 1000
    print(f"provider {args.provider}, {len(steps)} steps")
    print(f"steps 1-100:                 {a:.2f} ms/step")
    print(f"steps {len(steps) - 99}-{len(steps)}:          {b:.2f} ms/step")
    print(f"ratio last/first:            {b / a:.2f}x")
    server = SERVER_SECONDS[1:]  # aligned with `steps`: step i ends with request i+1
    sa, sb = sum(server[:100]) / 100 * 1000, sum(server[-100:]) / 100 * 1000
    print(f"fake server's own time:      {sa:.2f} -> {sb:.2f} ms/request (parsing the body it is sent)")
    print(f"step minus server:           {a - sa:.2f} -> {b - sb:.2f} ms/step, {(b - sb) / (a - sa):.2f}x")


def compaction(args: argparse.Namespace) -> None:
    responder = CountingResponder(args.turns, slot=True)
    events = run(args.turns, args.provider, args.window, args.read_bytes, responder)
    turns = sum(e["event"] == "model_request" for e in events)
    passes = [e for e in events if e["event"] == "compaction"]
    print(f"window {args.window}, {args.turns} reads of {args.read_bytes} bytes, {turns} requests")
    for method in ("clear", "summary", "drop", "trim"):
        done = [e for e in passes if e["method"] == method]
        if done:
            after = sorted(e["tokens_after"] / args.window for e in done)
            print(
                f"  {method:8} {len(done):4}  one every {turns / len(done):5.1f} turns, window after: "
                f"median {after[len(after) // 2]:.0%}, max {after[-1]:.0%}"
            )
    main = [t for summary, t in responder.prefill if not summary]
    summaries = [t for summary, t in responder.prefill if summary]
    print(
        f"  prefill past a one-slot prefix cache: {sum(main) / len(main):.0f} tokens per main request; "
        f"{len(summaries)} summary calls, {sum(summaries) / max(1, len(summaries)):.0f} tokens each"
    )
    print(f"  tokens processed in all: {sum(main) + sum(summaries):,}")
    if args.replay:
        replay(args.replay, responder.bodies[: args.replay_requests])


def replay(url: str, bodies: list[Json]) -> None:
    """Send the same requests, in order, to a real llama.cpp server and add up its own timings:
    what its one slot really had to prefill and generate. Main requests generate one token (their
    answers here are scripted); a summary call generates what the model writes (up to 200)."""
    import urllib.request

    totals = {"prompt_n": 0, "prompt_ms": 0.0, "predicted_n": 0, "predicted_ms": 0.0}
    for body in bodies:
        summary = not body.get("tools")
        sent = {**body, "stream": False, "max_tokens": 200 if summary else 1, "temperature": 0}
        sent.pop("stream_options", None)
        request = urllib.request.Request(
            url.rstrip("/") + "/chat/completions", json.dumps(sent).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=900) as response:
            timings = json.loads(response.read())["timings"]
        for key in totals:
            totals[key] += timings.get(key, 0)
    seconds = (totals["prompt_ms"] + totals["predicted_ms"]) / 1000
    print(
        f"  replayed {len(bodies)} requests on {url}: prefilled {totals['prompt_n']:,} tokens "
        f"({totals['prompt_ms'] / 1000:.0f} s), generated {totals['predicted_n']:,} "
        f"({totals['predicted_ms'] / 1000:.0f} s); "
        f"server time {seconds:.0f} s"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    f = sub.add_parser("flat")
    f.add_argument("--steps", type=int, default=1000)
    f.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    c = sub.add_parser("compaction")
    c.add_argument("--turns", type=int, default=200)
    c.add_argument("--window", type=int, default=4096)
    c.add_argument("--read-bytes", type=int, default=2048)
    c.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    c.add_argument("--replay", metavar="URL", help="a llama.cpp server's /v1 URL: replay the requests, add its timings")
    c.add_argument("--replay-requests", type=int, default=40, metavar="N", help="how many requests to replay (40)")
    args = p.parse_args()
    flat(args) if args.what == "flat" else compaction(args)


if __name__ == "__main__":
    main()
