"""The `--bash` variant: 100 `echo hi` steps on both sides, arnes's Bash tool against
mini-swe-agent's `bash`. The arnes half uses the tool named "Bash" that takes {"command": ...},
allowed by `--allow Bash`; on an arnes without it, --bash exits with "needs the Bash tool" (see
run.py). Adjust here if the tool's name or arguments change."""

from __future__ import annotations

import subprocess

from runlib.harness import BENCH, DONE_TURN, Json, arnes_python, child_env
from runlib.steps import Variant, loop_responder


def echo(k: int) -> Json:
    """`echo hi K`: a new command each step (arnes's loop guard stops repeats); mini-swe-agent
    runs the same commands (`mini_command`'s `{i}`)."""
    return {"name": "Bash", "input": {"command": f"echo hi {k}"}}


BASH = Variant(
    name="echo hi",
    task="run echo hi {n} times",
    arnes_responder=lambda n: loop_responder(
        n, lambda k: {"name": "Bash", "input": {"command": f"echo hi {k}"}}, DONE_TURN
    ),
    arnes_flags=["--permission-mode", "acceptEdits", "--allow", "Bash"],
    mini_command="echo hi {i}",
)


def arnes_has_bash() -> bool:
    code = "from arnes.session import default_tools; print(' '.join(t.name for t in default_tools()))"
    r = subprocess.run(
        [arnes_python(), "-c", code], capture_output=True, text=True, check=True, env=child_env(), cwd=BENCH
    )
    return "Bash" in r.stdout.split()
