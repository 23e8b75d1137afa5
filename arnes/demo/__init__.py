"""`arnes demo`: a scripted run on a bundled tiny shop, no model needed, then its tests."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from arnes.cliargs import parse_subcommand

TASK = "Change the order discount from 10 % to 15 %."


def run_demo(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.errors import EXIT_RED
    from arnes.runner import run_task

    parser = argparse.ArgumentParser(prog="arnes demo", description="Replay a scripted fix on a bundled shop.")
    parser.add_argument("--dir", help="where to copy the example (default: a new temporary folder)")
    opts = parse_subcommand(parser, rest, args)
    bundle = resources.files("arnes.demo")
    target = Path(opts.dir) if opts.dir else Path(tempfile.mkdtemp(prefix="arnes-demo-"))
    with resources.as_file(bundle / "shop") as shop, resources.as_file(bundle / "script.json") as script:
        shutil.copytree(shop, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        args.provider, args.script = "script", str(script)
        args.model = None
        args.permission_mode = args.permission_mode or "acceptEdits"
        args.steering = getattr(args, "steering", None) or "tests"  # show the self-check, the one piece of `tests`
        print(f"demo: a scripted model fixes a copy of the example shop in {target}")
        print(f"task: {TASK}")
        code = run_task(args, TASK, workspace=target)
    if code != 0:
        return code
    print("running the example's tests: python -m unittest")
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=target, capture_output=True, text=True, check=False
    )
    print(tests.stderr.strip() or tests.stdout.strip())
    if tests.returncode == 0:
        print("tests pass: the discount is 15 %")
        return 0
    print("tests fail")
    return EXIT_RED
