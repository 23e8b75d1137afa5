"""What the sandbox costs per shell command, and what every request pays before the conversation.

Run: python bench/bench_sandbox.py [--runs 50]
Each backend runs `echo hi` through the Bash tool (as the agent does) in a fresh workspace;
the median wall time per command is reported, and the difference to `--sandbox off`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from arnes.agent.context import fixed_tokens
from arnes.llm.script import ScriptProvider
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.sandbox.landlock import LandlockSandbox
from arnes.session import Session
from arnes.tools.bash import Bash, BashArgs


def per_command(mode: str, runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(workspace=Path(tmp), provider=ScriptProvider.from_turns([]), sandbox_mode=mode)  # type: ignore[arg-type]
        tool, args = Bash(), BashArgs(command="echo hi")
        tool.run(args, session.ctx)  # warm up
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            tool.run(args, session.ctx)
            samples.append((time.perf_counter() - start) * 1000)
        return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    opts = parser.parse_args()
    off = per_command("off", opts.runs)
    print(f"sandbox off:        {off:.2f} ms per `echo hi`")
    for name, backend in (("bubblewrap", Bubblewrap), ("landlock", LandlockSandbox)):
        problem = backend.unavailable()
        if problem:
            print(f"sandbox {name}: unavailable here ({problem})")
            continue
        cost = per_command(name, opts.runs)
        print(f"sandbox {name + ':':<11} {cost:.2f} ms per `echo hi` (+{cost - off:.2f} ms start-up per command)")
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(workspace=Path(tmp), provider=ScriptProvider.from_turns([]))
        tokens = fixed_tokens(session.system_prompt(), session.tools.specs())
        print(f"system prompt + {len(session.tools.names())} tool schemas: {tokens} tokens (4 characters a token)")


if __name__ == "__main__":
    main()
