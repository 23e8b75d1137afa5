"""Test-wide guards: no real model, no user settings, no API keys leak into a test."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest

from tests.fakes.arnes_forks import ArnesForks

ARNES = str(Path(sys.executable).parent / "arnes")
KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")
DEMO_SHOP = Path(str(resources.files("arnes.demo") / "shop"))


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)  # arnes's own records go under this home
    for key in (*KEY_VARS, "ANTHROPIC_MODEL", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@dataclass
class Run:
    code: int
    out: str
    err: str


@functools.cache
def _forks() -> ArnesForks:
    return ArnesForks()


def run_arnes(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60) -> Run:
    """Run the real `arnes` with no terminal (stdin is /dev/null): forked from a pre-imported arnes
    (tests/fakes/arnes_forks.py), or, with ARNES_TEST_EXEC=1, as a new console-script process."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    if os.environ.get("ARNES_TEST_EXEC") != "1":
        return Run(*_forks().run([ARNES, *args], str(cwd) if cwd else None, full_env, timeout))
    proc = subprocess.run(
        [ARNES, *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def scripted_run(tmp_path: Path, ws: Path, turns: list[dict[str, object]], *flags: str) -> tuple[Path, str]:
    """Run the scripted `turns` with `arnes -p` in `ws`: the trace's path and all it printed."""
    import json

    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     *flags, "go")  # fmt: skip
    return trace, done.out + done.err


def scripted_outputs(tmp_path: Path, ws: Path, turns: list[dict[str, object]], name: str = "script") -> list[str]:
    """Run the scripted `turns` with `arnes -p` in `ws` (acceptEdits, a trace); every tool result's
    output, in order. The run must end well: these tests look at what the calls saw."""
    import json

    from arnes.agent.trace import read_trace

    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / f"{name}.trace.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", "go")  # fmt: skip
    assert done.code == 0, done.err
    return [str(e.get("output", "")) for e in read_trace(trace) if e["event"] == "tool_result"]


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Path]:
    """A fresh copy of the demo's tiny shop."""
    ws = tmp_path / "shop"
    shutil.copytree(DEMO_SHOP, ws, ignore=shutil.ignore_patterns("__pycache__"))
    yield ws


def unittest_passes(ws: Path) -> bool:
    proc = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=ws, capture_output=True, check=False)
    return proc.returncode == 0


def gone(pid: int, seconds: float = 30.0) -> bool:
    """Whether process `pid` has ended: dead or a zombie (PID 1 here may be slow to reap orphans).

    Waits on a pidfd, which becomes readable the moment the process exits, so nothing here depends on
    how fast the machine is; `seconds` only bounds a process that really lives on.
    """
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
        return bool(readable) or _zombie(pid)
    finally:
        os.close(fd)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
