"""`arnes eval [DIR] --repeat N --workers K --out REPORT.json` and `arnes eval compare A.json B.json`."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arnes.cli import parse_subcommand
from arnes.errors import ConfigError
from arnes.ui.safe import visible
from arnes.workflow import evals

# Global options passed on to each run's own `arnes` process.
PASSED_ON = ("provider", "model", "base_url", "context_window", "max_turns", "max_tokens", "max_cost", "sandbox")


def run(args: argparse.Namespace, rest: list[str]) -> int:
    if rest[:1] == ["compare"]:
        return run_compare(rest[1:])
    if rest[:1] == ["report"]:
        from arnes.commands.eval_report import run_report

        return run_report(rest[1:])
    parser = argparse.ArgumentParser(prog="arnes eval", description="Run an eval set (default: the built-in one).")
    parser.add_argument("dir", nargs="?", help="folder of tasks (default: the built-in set)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    opts = parse_subcommand(parser, rest, args)
    if opts.repeat < 1 or opts.workers < 1:
        raise ConfigError("--repeat and --workers must be at least 1")
    folder = Path(opts.dir) if opts.dir else Path(str(resources.files("arnes.evals")))
    tasks = evals.discover(folder)
    provider = args.provider or "ollama"
    records = evals.run_all(tasks, opts.repeat, opts.workers, lambda t, ws: agent_argv(args, t, ws), opts.timeout)
    meta = {
        "dir": str(folder),
        "provider": provider,
        "model": args.model,
        "repeat": opts.repeat,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    report = evals.report(records, meta)
    show(report)
    if opts.out:
        Path(opts.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"report: {opts.out}")
    return 0


def agent_argv(args: argparse.Namespace, task: evals.EvalTask, workspace: Path) -> list[str]:
    argv = [sys.executable, "-m", "arnes", "-w", str(workspace), "--permission-mode", "acceptEdits"]
    for name in PASSED_ON:
        value = getattr(args, name, None)
        if value is not None:
            argv += [f"--{name.replace('_', '-')}", str(value)]
    if args.provider == "script":
        script = args.script or (str(task.script) if task.script else None)
        if script is None:
            raise ConfigError(f"eval task {task.name} has no script.json for --provider script")
        argv += ["--script", script]
    argv += ["--trace", str(workspace.parent / "trace.jsonl"), "--output-format", "json", "--", task.prompt]
    return argv


def show(report: dict[str, Any]) -> None:
    table = Table(box=None, header_style="bold")
    for column in ("task", "pass rate", "passed", "turns", "tokens", "cost $", "seconds"):
        table.add_column(column, justify="left" if column == "task" else "right")
    for name, s in report["tasks"].items():
        style = "green" if s["pass_rate"] == 1 else ("red" if s["pass_rate"] == 0 else "yellow")
        table.add_row(Text(visible(name)), f"{s['pass_rate']:.0%}", f"{s['passed']}/{s['runs']}", str(s["turns_mean"]),
                      str(s["tokens_mean"]), f"{s['cost']:.4f}", f"{s['seconds_mean']:.2f}", style=style)  # fmt: skip
    o = report["overall"]
    table.add_row("overall", f"{o['pass_rate']:.0%}", f"{o['passed']}/{o['runs']}", str(o["turns_mean"]),
                  str(o["tokens_mean"]), f"{o['cost']:.4f}", f"{o['seconds_mean']:.2f}", style="bold")  # fmt: skip
    Console(highlight=False).print(table)


def run_compare(rest: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arnes eval compare", description="What improved and what regressed.")
    parser.add_argument("before")
    parser.add_argument("after")
    opts = parser.parse_args(rest)
    loaded = []
    for name in (opts.before, opts.after):
        try:
            loaded.append(evals.check_report(json.loads(Path(name).read_text(encoding="utf-8")), name))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read eval report {name}: {exc}") from exc
    diff = evals.compare(loaded[0], loaded[1])
    console = Console(highlight=False)
    for name, row in diff["tasks"].items():
        before, after = row["before"], row["after"]
        mark = "improved" if name in diff["improved"] else "regressed" if name in diff["regressed"] else "same"
        text = f"{name}: {_pct(before)} -> {_pct(after)} ({mark})"
        console.print(visible(text), style={"improved": "green", "regressed": "red"}.get(mark), markup=False)
    o = diff["overall"]
    console.print(f"overall: {_pct(o['before'])} -> {_pct(o['after'])}", style="bold", markup=False)
    improved, regressed = ", ".join(diff["improved"]) or "none", ", ".join(diff["regressed"]) or "none"
    console.print(visible(f"improved: {improved}; regressed: {regressed}"), markup=False)
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"
