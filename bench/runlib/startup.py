"""1. Start-up: `arnes --help` against a bare interpreter, and which heavy modules it imports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field

from runlib.harness import BENCH, HEAVY, arnes_exe, arnes_python, child_env, log, median, ms, timed


@dataclass
class Startup:
    rows: list[tuple[str, list[float]]] = field(default_factory=list)
    importtime_heavy: dict[str, bool] = field(default_factory=dict)
    sys_modules_heavy: dict[str, bool] = field(default_factory=dict)
    top_imports: list[tuple[str, int]] = field(default_factory=list)


def bench_startup(runs: int) -> Startup:
    py, exe = arnes_python(), arnes_exe()
    cases = [
        ("python -c pass", [py, "-c", "pass"]),
        ("arnes --help", [exe, "--help"]),
        ("python -c 'import openai'  (reference)", [py, "-c", "import openai"]),
        ("python -c 'import anthropic'  (reference)", [py, "-c", "import anthropic"]),
    ]
    out = Startup()
    for label, cmd in cases:
        for _ in range(2):  # warm the page cache and .pyc files
            subprocess.run(cmd, capture_output=True, check=True, env=child_env(), cwd=BENCH)
        times = []
        for _ in range(runs if "reference" not in label else max(3, runs // 2)):
            wall, _, proc = timed(cmd, cwd=BENCH)
            if proc.returncode != 0:
                sys.exit(f"bench: {label!r} failed: {proc.stderr[-2000:]}")
            times.append(wall)
        out.rows.append((label, times))
        log(f"  {label:45s} median {ms(median(times))} ms  min {ms(min(times))} ms  ({len(times)} runs)")

    # Which modules does `arnes --help` import? Two independent checks.
    r = subprocess.run(
        [py, "-X", "importtime", exe, "--help"], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH
    )
    imported: dict[str, int] = {}
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
        if m:
            imported[m.group(4).strip()] = int(m.group(2))
    tops = {name.split(".")[0] for name in imported}
    out.importtime_heavy = {h: h in tops for h in HEAVY}
    # Largest cumulative imports among top-level (unindented) entries.
    top_level = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\| (\S.*)$", line)
        if m:
            top_level.append((m.group(2), int(m.group(1))))
    out.top_imports = sorted(top_level, key=lambda x: -x[1])[:5]

    probe = (
        "import sys\nfrom arnes.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print(__import__('json').dumps({{h: h in sys.modules for h in {list(HEAVY)!r}}}))"
    )
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH)
    out.sys_modules_heavy = json.loads(r.stdout.strip().splitlines()[-1])
    return out
