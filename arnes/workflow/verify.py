"""The verify command: the tests are the truth, not the model's word."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from arnes.host.files import HostFiles
from arnes.sandbox.base import NoSandbox, Sandbox
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
    """The usual test command for this kind of project, when none is configured.

    A Python project gets pytest only when pytest is there to run it (a `tests/` folder alone does
    not make a pytest project); otherwise the standard library's unittest finds the tests.
    """
    python_project = any((workspace / name).is_file() for name in ("pyproject.toml", "setup.py", "pytest.ini"))
    tests = workspace / "tests"
    if python_project or tests.is_dir():
        if _has_pytest(workspace):
            return "python -m pytest -q"
        if tests.is_dir() and any(tests.glob("test*.py")):
            return "python -m unittest discover -q -s tests"
        if any(workspace.glob("test*.py")):
            return "python -m unittest -q"
    files = HostFiles(workspace)  # through no link out of the workspace, like every host-side read
    package = _text(files, "package.json")
    if package is not None:
        try:
            scripts = json.loads(package).get("scripts", {})
        except (json.JSONDecodeError, AttributeError):
            scripts = {}
        if isinstance(scripts, dict) and "test" in scripts:
            return "npm test"
    if (workspace / "Cargo.toml").is_file():
        return "cargo test"
    if (workspace / "go.mod").is_file():
        return "go test ./..."
    makefile = _text(files, "Makefile")
    if makefile is not None and any(line.startswith("test:") for line in makefile.splitlines()):
        return "make test"
    if any(workspace.glob("test_*.py")) or any(workspace.glob("*_test.py")):
        return "python -m unittest -q"
    return None


def _has_pytest(workspace: Path) -> bool:
    """Whether the `python` that commands here would run can import pytest, without running the repo.

    The probe runs on the host, in a folder that may not be trusted, so nothing of the workspace may
    take part: an interpreter inside it (a `.venv/bin/python` can be any script) is judged by its
    files, never run; any other runs isolated (`-I`: neither the working folder nor PYTHON* variables
    reach sys.path) from a neutral folder. `-I` also drops the user's site-packages and PYTHONPATH,
    which the real run would see, so the probe adds them back as paths to look in (looking imports
    nothing from them).
    """
    python = shutil.which("python", path=os.environ.get("PATH")) or shutil.which("python3")
    if python is None:
        return False
    found = Path(python).absolute()
    if _inside(found, workspace) or _inside(found.resolve(), workspace):
        return _venv_has_pytest(found.parent.parent)
    probe = (
        "import importlib.util, os, site, sys; "
        "sys.path += [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if os.path.isabs(p)]; "
        "sys.path.append(site.getusersitepackages()); "
        "sys.exit(importlib.util.find_spec('pytest') is None)"
    )
    try:
        done = subprocess.run(
            [str(found), "-I", "-c", probe], cwd="/", stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
            check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _inside(path: Path, workspace: Path) -> bool:
    return path.is_relative_to(workspace.absolute()) or path.is_relative_to(workspace.resolve())


def _venv_has_pytest(root: Path) -> bool:
    """A workspace virtual environment has pytest when its site-packages hold it (looked at, not run)."""
    for lib in ("lib", "lib64"):
        for site_packages in (root / lib).glob("python*/site-packages"):
            if (site_packages / "pytest" / "__init__.py").is_file() or (site_packages / "pytest.py").is_file():
                return True
    return False


def _text(files: HostFiles, name: str) -> str | None:
    try:
        return files.read_text(name)
    except OSError:
        return None


def run_check(command: str, workspace: Path, sandbox: Sandbox | None = None, timeout: float = TIMEOUT) -> Verdict:
    """Run `command` with bash in the workspace (inside the sandbox when there is one)."""
    box = sandbox or NoSandbox()
    try:
        with box.wrap(["bash", "-c", command], workspace) as cmd:
            done = run_foreground(cmd.argv, workspace, timeout, OUTPUT_CAP, cmd.env, cmd.pass_fds)
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
