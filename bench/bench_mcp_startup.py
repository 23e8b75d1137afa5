"""Start-up to the banner with three MCP servers configured (issue 15: target < 0.3 s).

Runs the real `arnes -p` with the scripted model in a folder whose `.mcp.json` names three stdio
servers (tests/fakes/mcp_server.py, a real SDK server that itself takes ~1 s to start), and times
from spawn to the banner's first line on stdout, against the same folder with no servers.
The servers connect behind the banner, so the two should be close.

    python bench/bench_mcp_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARNES = str(Path(sys.executable).parent / "arnes")
SERVER = str(ROOT / "tests" / "fakes" / "mcp_server.py")


def to_banner(ws: Path, script: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [ARNES, "--trust", "-p", "--provider", "script", "--script", str(script), "-w", str(ws), "go"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    while not (line := proc.stdout.readline()).startswith("workspace:"):  # warnings may come first
        assert line, f"no banner; arnes printed {seen}"
        seen.append(line)
    took = time.perf_counter() - start
    proc.communicate(timeout=120)
    return took


def workspaces(base: Path) -> tuple[Path, Path, Path]:
    """The scripted model's one-turn script, a folder with no servers and one with three."""
    script = base / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    plain, three = base / "plain", base / "three"
    plain.mkdir()
    three.mkdir()
    servers = {f"s{i}": {"command": sys.executable, "args": [SERVER, "stdio"]} for i in range(3)}
    (three / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return script, plain, three


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script, plain, three = workspaces(Path(tmp))
        to_banner(plain, script)  # warm the disk cache
        rows = {"no MCP servers": plain, "three MCP servers": three}
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(opts.runs):  # paired and alternating: the shared machine's drift hits both
            for name, ws in rows.items():
                times[name].append(to_banner(ws, script))
        for name, got in times.items():
            print(f"{name:20s} median {statistics.median(got):.3f} s  min {min(got):.3f} s  ({opts.runs} runs)")
        ratios = [b / a for a, b in zip(times["no MCP servers"], times["three MCP servers"], strict=True)]
        print(f"three / none, median of paired ratios: {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
