"""The verify command: the tests are the truth, not the model's word."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from arnes.sandbox.base import NoSandbox, Sandbox
from arnes.tools.bash import shell_env
from arnes.tools.processes import run_foreground

OUTPUT_CAP = 4000
TIMEOUT = 600.0


@dataclass(frozen=True)
class Verdict:
    command: str
    passed: bool
    exit_code: int | None
    output: str
    seconds: float


def detect(workspace: Path) -> str | None:
    """The usual test command for this kind of project, when none is configured."""
    if (
        (workspace / "pyproject.toml").is_file()
        or (workspace / "pytest.ini").is_file()
        or (workspace / "tests").is_dir()
    ):
        return "python -m pytest -q"
    package = workspace / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts", {})
        except (json.JSONDecodeError, OSError):
            scripts = {}
        if "test" in scripts:
            return "npm test"
    if (workspace / "Cargo.toml").is_file():
        return "cargo test"
    if (workspace / "go.mod").is_file():
        return "go test ./..."
    makefile = workspace / "Makefile"
    if makefile.is_file() and any(
        line.startswith("test:") for line in makefile.read_text(errors="replace").splitlines()
    ):
        return "make test"
    if any(workspace.glob("test_*.py")) or any(workspace.glob("*_test.py")):
        return "python -m unittest -q"
    return None


def run_check(command: str, workspace: Path, sandbox: Sandbox | None = None, timeout: float = TIMEOUT) -> Verdict:
    """Run `command` with bash in the workspace (inside the sandbox when there is one)."""
    box = sandbox or NoSandbox()
    try:
        done = run_foreground(box.wrap(["bash", "-c", command], workspace), workspace, timeout, OUTPUT_CAP, shell_env())
    finally:
        box.settle()  # the empty stand-ins the sandbox mounted (.git, features.json) go again
    text = "\n".join(part for part in (done.stdout.rstrip(), done.stderr.rstrip()) if part)
    if done.timed_out:
        text = f"timed out after {timeout:g} s\n{text}"
    return Verdict(command, done.exit_code == 0, done.exit_code, text[-OUTPUT_CAP:], done.seconds)


@dataclass
class Verifier:
    """Run after the model ends its turn; a red result goes back to the model, a few rounds at most."""

    command: str
    workspace: Path
    sandbox: Sandbox | None = None
    rounds: int = 3

    def check(self) -> Verdict:
        return run_check(self.command, self.workspace, self.sandbox)


def feedback(verdict: Verdict, round_no: int, rounds: int) -> str:
    return (
        f"The verification command `{verdict.command}` failed (exit {verdict.exit_code}; round {round_no} of "
        f"{rounds}). Your work is not done until it passes. Fix the cause, not the test. Its output:\n"
        f"{verdict.output}"
    )
