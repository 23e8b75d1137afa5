"""`arnes eval [DIR] --repeat N --workers K --out REPORT.json` and `arnes eval compare A.json B.json`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arnes.cliargs import parse_subcommand
from arnes.errors import ConfigError
from arnes.host.atomic import atomic_write
from arnes.nesting import json_loads
from arnes.safe import visible
from arnes.workflow import evals

# Global options each run sets itself; every other global option given is passed on as given.
NOT_PASSED_ON = frozenset(
    {"help", "version", "task", "workspace", "trace", "output_format", "resume", "continue_", "print", "script"}
    | {"session_id", "input_format"}  # each run is a new session, its task on the command line
)
EXIT_ERRORS = 1  # some runs could not reach a model: the report is not a measurement of the agent


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
    parser.add_argument("--out", help="write the JSON report here (traces go beside it, in REPORT.traces/)")
    parser.add_argument("--traces", help="keep each run's trace in this folder (default: beside --out)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    backends = "local: K worker threads here; ray: one Ray task per run (pip install 'arnes[ray]')"
    parser.add_argument("--backend", choices=["local", "ray"], default="local", help=backends)
    parser.add_argument("--ray-address", metavar="ADDR", help="the Ray cluster to join (default: start a local one)")
    opts = parse_subcommand(parser, rest, args)
    if opts.ray_address and opts.backend != "ray":
        raise ConfigError("--ray-address goes with --backend ray")
    if opts.repeat < 1 or opts.workers < 1:
        raise ConfigError("--repeat and --workers must be at least 1")
    folder = Path(opts.dir) if opts.dir else Path(str(resources.files("arnes.evals")))
    tasks = evals.discover(folder)
    out = Path(opts.out) if opts.out else None
    traces = _traces_folder(opts.traces, out)
    link = out.parent.resolve() if out else None
    argv = lambda t, ws, tr: agent_argv(args, t, ws, tr)  # noqa: E731  (sent to Ray workers as it is)
    interrupted = False
    if opts.backend == "ray":
        from arnes.workflow import evals_ray

        try:
            records = evals_ray.run_all(
                tasks, opts.repeat, argv, traces.resolve(), opts.timeout, opts.ray_address, link
            )
        except evals_ray.Interrupted as stop:  # Ctrl-C: the runs that finished still make a report
            records, interrupted = stop.records, True
    else:
        records = evals.run_all(tasks, opts.repeat, opts.workers, argv, traces.resolve(), opts.timeout, link)
    meta = {
        "dir": str(folder),
        "provider": args.provider or "ollama",
        "model": args.model,
        "repeat": opts.repeat,
        "backend": opts.backend,
        "options": passed_on(args),
        "traces": evals.shown_path(traces.resolve(), link),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    report = evals.report(records, meta)
    show(report)
    print(f"traces: {traces}")
    if out:
        atomic_write(out.resolve(), (json.dumps(report, indent=2) + "\n").encode("utf-8"))
        print(f"report: {out}")
    if interrupted:
        print(f"arnes eval: interrupted; the report has the {len(records)} run(s) that finished", file=sys.stderr)
        return 130
    errors = [r for r in records if r.error]
    if errors:
        first = errors[0]
        print(
            visible(
                f"arnes eval: {len(errors)} of {len(records)} run(s) are errors, not failures: they could not reach "
                f"a model or arnes broke ({first.task}-{first.attempt}: {first.error}). Check the model settings "
                "(--provider, --base-url, --model) and the traces."
            ),
            file=sys.stderr,
        )
        return EXIT_ERRORS
    return 0


def _traces_folder(given: str | None, out: Path | None) -> Path:
    if given:
        return Path(given)
    if out is not None:
        return out.with_name(out.stem + ".traces")
    return Path(tempfile.mkdtemp(prefix="arnes-eval-traces-"))


def passed_on(args: argparse.Namespace) -> list[str]:
    """Every global option the user gave (not its default), as flags for each run's `arnes`.

    Read from the parser itself, so an option added later (a temperature, a time-out) is
    passed on without a list here to forget it in.
    """
    from arnes.cliargs import global_parser

    argv: list[str] = []
    for action in global_parser()._actions:
        if not action.option_strings or action.dest in NOT_PASSED_ON:
            continue
        value = getattr(args, action.dest, None)
        if value is None or value == action.default or value == []:
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:
            argv.append(flag)
        elif isinstance(value, list):
            for item in value:  # an `append` of `nargs="+"` holds a list per use of the flag
                argv += [flag, *map(str, item)] if isinstance(item, list) else [flag, str(item)]
        else:
            argv += [flag, str(value)]
    return argv


def agent_argv(args: argparse.Namespace, task: evals.EvalTask, workspace: Path, trace: Path) -> list[str]:
    # -P: the folder eval runs from is not put first on the import path (a repository's own
    # `arnes.py` would run instead, on the host, outside every sandbox).
    argv = [sys.executable, "-P", "-m", "arnes", "-w", str(workspace)]
    options = passed_on(args)
    if "--permission-mode" not in options and "--dangerously-skip-permissions" not in options:
        argv += ["--permission-mode", "acceptEdits"]
    argv += options
    if args.provider == "script":
        script = args.script or (str(task.script) if task.script else None)
        if script is None:
            raise ConfigError(f"eval task {task.name} has no script.json for --provider script")
        argv += ["--script", script]
    argv += ["--trace", str(trace), "--output-format", "json", "--", task.prompt]
    return argv


def show(report: dict[str, Any]) -> None:
    table = Table(box=None, header_style="bold")
    for column in ("task", "pass rate", "passed", "errors", "turns", "tokens", "cost $", "seconds"):
        table.add_column(column, justify="left" if column == "task" else "right")
    rows = [*report["tasks"].items(), ("overall", report["overall"])]
    for name, s in rows:
        style = "green" if s["pass_rate"] == 1 else ("red" if s["pass_rate"] == 0 else "yellow")
        if s["errors"]:
            style = "red"
        rate = "error" if s["errors"] == s["runs"] else f"{s['pass_rate']:.0%}"
        table.add_row(Text(visible(name)), rate, f"{s['passed']}/{s['runs']}", str(s["errors"]), str(s["turns_mean"]),
                      str(s["tokens_mean"]), f"{s['cost']:.4f}", f"{s['seconds_mean']:.2f}",
                      style="bold " + style if name == "overall" else style)  # fmt: skip
    Console(highlight=False).print(table)


def run_compare(rest: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="arnes eval compare",
        description="What improved and what regressed; exits 1 when the second report is worse.",
    )
    parser.add_argument("before")
    parser.add_argument("after")
    opts = parser.parse_args(rest)
    loaded = []
    for name in (opts.before, opts.after):
        try:
            loaded.append(evals.check_report(json_loads(Path(name).read_text(encoding="utf-8")), name))
        except (OSError, ValueError) as exc:  # not JSON, not UTF-8, nested too deep
            raise ConfigError(f"cannot read eval report {name}: {exc}") from exc
    diff = evals.compare(loaded[0], loaded[1])
    console = Console(highlight=False)
    for name, row in diff["tasks"].items():
        before, after = row["before"], row["after"]
        if name in diff["missing_after"]:
            mark = f"missing from {opts.after}"
        elif name in diff["missing_before"]:
            mark = f"missing from {opts.before}"
        else:
            mark = "improved" if name in diff["improved"] else "regressed" if name in diff["regressed"] else "same"
        text = f"{name}: {_pct(before)} -> {_pct(after)} ({mark})"
        colour = "red" if mark == "regressed" or name in diff["missing_after"] else None
        console.print(visible(text), style="green" if mark == "improved" else colour, markup=False)
    o = diff["overall"]
    console.print(f"overall: {_pct(o['before'])} -> {_pct(o['after'])}", style="bold", markup=False)
    improved, regressed = ", ".join(diff["improved"]) or "none", ", ".join(diff["regressed"]) or "none"
    console.print(visible(f"improved: {improved}; regressed: {regressed}"), markup=False)
    if diff["worse"]:
        console.print(visible(f"worse: {opts.after} is worse than {opts.before}"), style="red", markup=False)
        return 1
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"
