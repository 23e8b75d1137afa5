"""`run.py exercism`: arnes beside aider on the Exercism Python set, on the running llama-server.

    python bench/realmodel/run.py exercism --agents arnes,aider [--arnes-args "--steering off"] \
        [--label L] [--sample N --seed S | --tasks a,b,c] [--repeat R] [--timeout 300]

The tasks are `arnes eval` tasks (task.md, verify, workspace/, exercise.json; default folder
../shared/evals/exercism-python). arnes runs them with `arnes eval` as `run.py bench` does; aider
runs each in a fresh copy of the workspace through bench/realmodel/aider_task.py (in
bench/.venv-aider), which repeats what aider's benchmark/benchmark.py does with a model: whole-file
edits, no git, two tries, the second after the failing test output. Then the task's own `verify`
decides, run as `arnes eval` runs it. Both get the same wall-time limit per task.

`--sample N --seed S` takes the first N names of a seeded shuffle of the sorted names, so no one
picks the tasks. Raw results (eval report, traces, aider's chat histories) go to
$ARNES_BENCH_CACHE/results/<stamp>-<label>/; only a summary goes to bench/realmodel/results.json
(key "exercism") and the block between the exercism markers in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import run as rm  # bench/realmodel/run.py: the server, the machine, the git revision

AIDER_PY = rm.BENCH / ".venv-aider" / "bin" / "python"
AIDER_TASK = rm.HERE / "aider_task.py"
# aider-chat pins every dependency exactly (litellm 1.81.10 among them); pytest runs the tests between tries.
AIDER_SPEC = ["aider-chat==0.86.2", "pytest==9.2.0"]
MARKERS = ("<!-- exercism:begin (written by bench/realmodel/run.py exercism) -->", "<!-- exercism:end -->")
DEFAULT_SET = rm.ROOT.parent / "shared" / "evals" / "exercism-python"
AGENTS = ("arnes", "aider")

# aider's benchmark/prompts.py `instructions_addendum`, appended to the exercise's instructions.
AIDER_ADDENDUM = """
####

Use the above instructions to modify the supplied files: {file_list}
Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.
Only use standard libraries, don't suggest installing any packages.
"""


def log(msg: str) -> None:
    rm.log(msg)


# --------------------------------------------------------------------------------- tasks
def pick(names: list[str], a: argparse.Namespace) -> list[str]:
    names = sorted(names)
    if a.tasks:
        wanted = [t.strip() for t in a.tasks.split(",") if t.strip()]
        unknown = [t for t in wanted if t not in names]
        if unknown:
            sys.exit(f"exercism: no such task(s) in the set: {', '.join(unknown)}")
        return wanted
    if a.sample:
        shuffled = list(names)
        random.Random(a.seed).shuffle(shuffled)
        return sorted(shuffled[: a.sample])
    return names


def writable_copy(src: Path, dst: Path) -> None:
    """The shared set is read-only; a copy the agents and verify may change (and a temp dir may remove)."""
    shutil.copytree(src, dst, symlinks=True)
    for path in [dst, *dst.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def exercise_files(task_folder: Path) -> tuple[list[str], list[str]]:
    """(solution files, test files): from exercise.json when it names them, else by the `_test.py` suffix."""
    info = read_exercise(task_folder)
    ws = task_folder / "workspace"
    py = sorted(p.name for p in ws.iterdir() if p.suffix == ".py")
    tests = as_list(info.get("test")) or [n for n in py if n.endswith("_test.py")]
    solution = as_list(info.get("solution")) or [n for n in py if n not in tests]
    return solution, tests


def read_exercise(task_folder: Path) -> dict[str, Any]:
    f = task_folder / "exercise.json"
    return dict(json.loads(f.read_text())) if f.is_file() else {}


def as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def aider_message(task: Any, solution: list[str], source: str) -> str:
    """aider's own prompt (the exercise's instructions + the benchmark's addendum), or task.md as arnes gets it."""
    instructions = read_exercise(task.folder).get("instructions")
    if source == "task" or not instructions:
        return str(task.prompt)
    return str(instructions) + AIDER_ADDENDUM.format(file_list=" ".join(solution))


# --------------------------------------------------------------------------------- arnes
def pieces_of(trace: Path) -> tuple[Counter[str], int]:
    """The steering pieces that fired in one run (`steered` events) and the calls arnes made itself."""
    fired: Counter[str] = Counter()
    calls = 0
    if not trace.is_file():
        return fired, calls
    for line in trace.read_text(encoding="utf-8", errors="replace").split("\n"):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("event") == "steered":
            fired[str(ev.get("piece"))] += 1
        elif ev.get("event") == "tool_call" and ev.get("by") == "arnes":
            calls += 1
    return fired, calls


def run_arnes(a: argparse.Namespace, info: dict[str, Any], out_dir: Path, folder: Path) -> dict[str, Any]:
    report = out_dir / "arnes-report.json"
    extra = shlex.split(a.arnes_args)
    cmd = [sys.executable, "-m", "arnes", "--provider", "openai", "--base-url", info["url"], "--model", info["model"]]
    cmd += ["--max-turns", str(a.max_turns), *extra]
    cmd += ["eval", str(folder), "--timeout", str(a.timeout), "--out", str(report)]
    if a.repeat > 1:
        cmd += ["--repeat", str(a.repeat)]
    log(f"  arnes: {' '.join(cmd[2:])}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="realmodel-home-") as home:
        r = subprocess.run(cmd, cwd=rm.ROOT, env=rm.arnes_env(Path(home)), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    (out_dir / "arnes-eval.log").write_text(r.stdout + r.stderr)
    if not report.is_file():
        sys.exit(f"exercism: arnes eval wrote no report (exit {r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    data = json.loads(report.read_text())
    runs, total, total_calls = [], Counter[str](), 0
    for x in data["runs"]:
        fired, calls = pieces_of(report.parent / x["trace"]) if x.get("trace") else (Counter[str](), 0)
        total += fired
        total_calls += calls
        runs.append(
            {
                "task": x["task"],
                "attempt": x["attempt"],
                "passed": x["passed"],
                "turns": x["turns"],
                "tokens": x["tokens"],
                "seconds": round(x["seconds"], 1),
                "stop": x["stop_reason"],
                "error": x.get("error"),
                "pieces": dict(sorted(fired.items())),
                "arnes_calls": calls,
            }
        )
    shown = " ".join(cmd[3:]).replace(f" --out {report}", "").replace(str(folder), "SET")
    return {
        "agent": "arnes",
        "command": "arnes " + shown,
        "wall": round(wall, 1),
        "runs": runs,
        "pieces": dict(sorted(total.items())),
        "arnes_calls": total_calls,
        "exit_code": r.returncode,
    }


# --------------------------------------------------------------------------------- aider
def ensure_aider() -> None:
    rm.ensure_venv(AIDER_PY, "import aider, pytest", AIDER_SPEC)


def run_aider_once(
    a: argparse.Namespace, info: dict[str, Any], out_dir: Path, task: Any, attempt: int
) -> dict[str, Any]:
    from arnes.workflow.evals import verify_sandbox
    from arnes.workflow.verify import run_check

    solution, tests = exercise_files(task.folder)
    stem = f"aider-{task.name}-{attempt}"
    result_file = out_dir / f"{stem}.json"
    result_file.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"realmodel-aider-{task.name}-") as tmp:
        copy = Path(tmp) / "workspace"
        writable_copy(task.folder / "workspace", copy)
        message = Path(tmp) / "message.md"
        message.write_text(aider_message(task, solution, a.aider_prompt))
        home = Path(tmp) / "home"
        home.mkdir()
        cmd = [str(AIDER_PY), str(AIDER_TASK), "--base-url", info["url"], "--model", f"openai/{info['model']}"]
        cmd += ["--ctx", str(info.get("ctx") or 8192), "--workspace", str(copy)]
        cmd += ["--pristine", str(task.folder / "workspace"), "--message-file", str(message)]
        cmd += ["--tries", str(a.aider_tries), "--result", str(result_file), "--history", str(out_dir / f"{stem}.md")]
        for name in solution:
            cmd += ["--solution", name]
        for name in tests:
            cmd += ["--test", name]
        env = dict(os.environ, HOME=str(home), OPENAI_API_KEY="x")  # a clean ~/.aider, no user config
        t0 = time.monotonic()
        with (out_dir / f"{stem}.log").open("w") as logf:
            proc = subprocess.Popen(
                cmd, cwd=copy, env=env, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            try:
                code = proc.wait(timeout=a.timeout)
                stop = "done" if code == 0 else f"exit {code}"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # aider and the tests it started
                proc.wait()
                stop = "timeout"
        seconds = time.monotonic() - t0
        verdict = run_check(task.verify, copy, verify_sandbox(copy), timeout=300)
    result = json.loads(result_file.read_text()) if result_file.is_file() else {}
    outcomes = result.get("tests_outcomes", [])
    return {
        "task": task.name,
        "attempt": attempt,
        "passed": verdict.passed,
        "tries": int(result.get("tries_started", 0)),
        "tests_outcomes": outcomes,
        "tokens": int(result.get("prompt_tokens", 0)) + int(result.get("completion_tokens", 0)),
        "seconds": round(seconds, 1),
        "stop": stop,
        "malformed": int(result.get("num_malformed_responses", 0)),
    }


def run_aider(a: argparse.Namespace, info: dict[str, Any], out_dir: Path, tasks: list[Any]) -> dict[str, Any]:
    ensure_aider()
    runs = []
    started = time.monotonic()
    for task in tasks:
        for attempt in range(1, a.repeat + 1):
            row = run_aider_once(a, info, out_dir, task, attempt)
            log(
                f"  aider {task.name}: {'PASS' if row['passed'] else 'fail'} ({row['stop']}, {row['tries']} "
                f"tries, {row['tokens']} tokens, {row['seconds']:.0f} s)"
            )
            runs.append(row)
    version = subprocess.run(
        [str(AIDER_PY), "-c", "import aider; print(aider.__version__)"], capture_output=True, text=True, check=False
    ).stdout.strip()
    command = f"bench/realmodel/aider_task.py --tries {a.aider_tries} (whole, no git; prompt: {a.aider_prompt})"
    return {
        "agent": "aider",
        "version": version,
        "command": command,
        "wall": round(time.monotonic() - started, 1),
        "runs": runs,
    }


# --------------------------------------------------------------------------------- the command
def server_metrics(port: int) -> dict[str, float]:
    try:
        return rm.metrics(port)
    except (OSError, ValueError):  # a server without /metrics (a fake one for a dry run)
        return {}


def cmd_exercism(a: argparse.Namespace) -> None:
    from arnes.workflow import evals

    agents = [x.strip() for x in a.agents.split(",") if x.strip()]
    if not agents or any(x not in AGENTS for x in agents):
        sys.exit(f"exercism: --agents takes a comma list of {', '.join(AGENTS)}")
    every = {t.name: t for t in evals.discover(Path(a.set))}
    names = pick(list(every), a)
    tasks = [every[n] for n in names]
    info = rm.server_info(a.port)
    if a.through:
        info["url"] = f"http://127.0.0.1:{a.through}/v1"
    stamp = rm.dt.datetime.now(rm.dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out_dir = rm.CACHE / "results" / f"{stamp}-{re.sub(r'[^A-Za-z0-9._-]+', '-', a.label)}"
    out_dir.mkdir(parents=True, exist_ok=True)
    log(f"  {len(tasks)} task(s); results, traces and chat histories: {out_dir}")
    rev = rm.git("log", "-1", "--format=%h", "--", "arnes")
    rev += " (dirty)" if rm.git("status", "--porcelain", "arnes") else ""
    chosen = f"--tasks ({len(names)})" if a.tasks else (f"--sample {a.sample} --seed {a.seed}" if a.sample else "all")
    entry: dict[str, Any] = {
        "label": a.label,
        "date": rm.now(),
        "arnes_rev": rev,
        "machine": rm.machine(),
        "model": info["model"],
        "server": " ".join(Path(x).name if i == 0 else x for i, x in enumerate(info.get("argv", []))).replace(
            str(Path.home()), "~"
        ),
        "ctx": info.get("ctx"),
        "command": "python bench/realmodel/run.py " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
        "set": Path(a.set).name,
        "tasks": names,
        "chosen": chosen,
        "repeat": a.repeat,
        "timeout": a.timeout,
        "agents": [],
        "load": [round(os.getloadavg()[0], 1)],
    }
    for agent in agents:
        m0 = server_metrics(a.port)
        if agent == "arnes":
            if len(names) == len(every):
                result = run_arnes(a, info, out_dir, Path(a.set))
            else:
                with tempfile.TemporaryDirectory(prefix="realmodel-exercism-") as tmp:
                    for t in tasks:
                        writable_copy(t.folder, Path(tmp) / t.name)
                    result = run_arnes(a, info, out_dir, Path(tmp))
        else:
            result = run_aider(a, info, out_dir, tasks)
        m1 = server_metrics(a.port)
        if m0 and m1:
            result["server_prompt_tokens"] = int(m1.get("prompt_tokens_total", 0) - m0.get("prompt_tokens_total", 0))
            result["server_generated_tokens"] = int(
                m1.get("tokens_predicted_total", 0) - m0.get("tokens_predicted_total", 0)
            )
        entry["agents"].append(result)
        entry["load"].append(round(os.getloadavg()[0], 1))
    (out_dir / "entry.json").write_text(json.dumps(entry, indent=2) + "\n")
    print(console_table(entry), file=sys.stderr)
    if not a.no_write:
        record(entry)


def console_table(e: dict[str, Any]) -> str:
    lines = [render_entry(e), "", "| task | " + " | ".join(ag["agent"] for ag in e["agents"]) + " |"]
    lines.append("|---|" + "---|" * len(e["agents"]))
    for t in e["tasks"]:
        cells = []
        for ag in e["agents"]:
            mine = [r for r in ag["runs"] if r["task"] == t]
            cells.append(
                ", ".join(f"{'pass' if r['passed'] else 'fail'} {r['seconds']:.0f} s {r['tokens']} tok" for r in mine)
                or "-"
            )
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------- results
def record(entry: dict[str, Any]) -> None:
    """Append to results.json under "exercism"; the same label again with other agents: the new rows win."""
    data = json.loads(rm.RESULTS.read_text()) if rm.RESULTS.is_file() else {}
    items = data.get("exercism", [])
    old = next((e for e in items if e.get("label") == entry["label"]), None)
    if old is not None and old.get("tasks") == entry["tasks"]:
        mine = {ag["agent"] for ag in entry["agents"]}
        entry["agents"] = [ag for ag in old["agents"] if ag["agent"] not in mine] + entry["agents"]
        items = [entry if e is old else e for e in items]
    else:
        items = [*items, entry]
    data["exercism"] = items
    tmp = rm.RESULTS.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(rm.RESULTS)
    write_readme(data)


def agent_summary(ag: dict[str, Any]) -> str:
    runs = ag["runs"]
    n = len(runs) or 1
    passed = sum(r["passed"] for r in runs)
    tokens = sum(r["tokens"] for r in runs) / n
    seconds = sum(r["seconds"] for r in runs) / n
    extra = ""
    if ag["agent"] == "arnes":
        fired = ", ".join(f"{k} {v}" for k, v in ag.get("pieces", {}).items()) or "none"
        extra = f"pieces fired: {fired}; calls by arnes: {ag.get('arnes_calls', 0)}"
    else:
        second = sum(1 for r in runs if r["passed"] and r.get("tries", 0) > 1)
        extra = f"aider {ag.get('version', '?')}; passed at the second try: {second}"
    if "server_generated_tokens" in ag:  # counts a reply cut by the time limit too, which aider's count misses
        extra += (
            f"; server: {ag['server_prompt_tokens']:,} prompt tokens evaluated, "
            f"{ag['server_generated_tokens']:,} generated"
        )
    return (
        f"| {ag['agent']} | **{passed}/{len(runs)}** ({passed / n:.0%}) | {tokens:,.0f} | {seconds:.0f} s | "
        f"{ag['wall']:.0f} s | {extra} |"
    )


def render_entry(e: dict[str, Any]) -> str:
    lines = [
        f"#### {e['label']}",
        "",
        f"Measured {e['date']} on {e['machine']}; arnes {e['arnes_rev']}; model `{e['model']}` (Q4_K_M), "
        f"context {e['ctx']}, served by `{e['server']}`. Tasks: {len(e['tasks'])} of {e['set']} ({e['chosen']}), "
        f"{e['repeat']} run(s) each, {e['timeout']:g} s a run. Load average {e['load']}.",
        "",
        f"Command: `{e['command']}`",
        "",
        "| agent | passed | tokens (mean) | wall per task (mean) | wall, all tasks | notes |",
        "|---|---|---|---|---|---|",
    ]
    lines += [agent_summary(ag) for ag in e["agents"]]
    lines += ["", "Agent commands: " + "; ".join(f"{ag['agent']}: `{ag['command']}`" for ag in e["agents"])]
    return "\n".join(lines)


def render(data: dict[str, Any]) -> str:
    lines = ["| measurement | tasks | arnes | aider |", "|---|---|---|---|"]
    for e in data.get("exercism", []):
        cells = []
        for name in AGENTS:
            ag = next((x for x in e["agents"] if x["agent"] == name), None)
            if ag is None:
                cells.append("-")
            else:
                passed = sum(r["passed"] for r in ag["runs"])
                cells.append(f"**{passed}/{len(ag['runs'])}** in {ag['wall']:.0f} s")
        lines.append(f"| {e['label']} | {len(e['tasks'])} ({e['chosen']}) | " + " | ".join(cells) + " |")
    lines.append("")
    for e in data.get("exercism", []):
        lines += [render_entry(e), ""]
    return "\n".join(lines).rstrip() + "\n"


def write_readme(data: dict[str, Any]) -> None:
    text = rm.README.read_text()
    begin, end = MARKERS
    block = f"{begin}\n{render(data)}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    tmp = rm.README.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(rm.README)


# --------------------------------------------------------------------------------- main
def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="run.py exercism", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--agents", default="arnes,aider", help="comma list of: arnes, aider")
    p.add_argument("--arnes-args", default="", help='extra global arnes options, one string: "--steering off"')
    p.add_argument("--label", default="run", help="name of this measurement in results.json and the README")
    p.add_argument("--set", default=str(DEFAULT_SET), help="the folder of tasks")
    p.add_argument("--sample", type=int, help="N tasks from a seeded shuffle of the sorted names")
    p.add_argument("--seed", type=int, default=0, help="the shuffle's seed for --sample")
    p.add_argument("--tasks", help="comma list of task names (instead of --sample)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each task, for every agent")
    p.add_argument("--timeout", type=float, default=300, help="wall seconds per task run, for every agent")
    p.add_argument("--max-turns", type=int, default=30, help="arnes --max-turns")
    p.add_argument("--aider-tries", type=int, default=2, help="aider's benchmark --tries (default 2)")
    p.add_argument(
        "--aider-prompt",
        choices=["aider", "task"],
        default="aider",
        help="aider: the exercise's instructions + aider's benchmark addendum (default); task: task.md, as arnes",
    )
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--through", type=int, help="agents talk to this port (a tap.py in front of the server)")
    p.add_argument("--no-write", action="store_true", help="do not touch results.json or bench/README.md")
    a = p.parse_args(argv)
    if a.tasks and a.sample:
        p.error("--tasks and --sample exclude each other")
    if a.repeat < 1 or (a.sample is not None and a.sample < 1):
        p.error("--repeat and --sample must be at least 1")
    cmd_exercism(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
