"""The project's test command, found from its files, and what a finished run of it says.

Below agent/ and workflow/ because both need it: the self-check (agent/selfcheck.py) runs the
command before a model's answer stands, `--verify auto`, `arnes check`, teams and `arnes doctor`
name it. Finding it happens on the host in a folder that may not be trusted, so it only reads
files (through no link out, host/files.py) and never runs anything of the workspace (`_has_pytest`).

A run that ran no test is its own outcome: `python -m unittest -q` finds nothing in a folder of
`*_test.py` files and says "Ran 0 tests" (exit 0; exit 5 since Python 3.12), and a crate with no
tests is "ok". Green would let a wrong answer stand as checked; red would send the model to fix
code that nothing faulted.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arnes.host.files import HostFiles
from arnes.nesting import json_loads

Outcome = Literal["passed", "failed", "no_tests"]
TEST_TIMEOUT = 300.0  # seconds the self-check's run may take unless verify.timeout says otherwise
NPM_PLACEHOLDER = "no test specified"  # `npm init`'s script: `echo "Error: no test specified" && exit 1`
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "uv.lock")


@dataclass(frozen=True)
class TestCommand:
    """A command that runs the project's tests, and where it came from (for `arnes doctor`)."""

    __test__ = False  # a name pytest would otherwise collect
    command: str
    why: str  # "detected from Cargo.toml", "verify.command in ~/.config/arnes/settings.json"


def detect(workspace: Path) -> TestCommand | None:
    """The usual test command for this kind of project, when the settings name none.

    Order, first match wins:
    1. a declared Python project (pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini, uv.lock):
       `uv run ...` with a uv.lock, else pytest where pytest is installed, else unittest with the
       file pattern its tests use; a PyO3 crate's pyproject.toml beside Cargo.toml means Python tests;
    2. Cargo.toml -> `cargo test`; 3. go.mod -> `go test ./...`;
    4. package.json with a real `test` script (not npm's placeholder) -> pnpm, yarn or npm by lock file;
    5. a Makefile `test:` target -> `make test`;
    6. Python test files without a project file: a `tests/` folder with `test*.py` or `*_test.py`
       (pytest where installed), or such files at the top (unittest, the standard library).
    So a Rust, Go or Node project's `tests/` folder never makes it a Python one.
    """
    files = HostFiles(workspace)  # through no link out of the workspace, like every host-side read
    marker = next((name for name in PYTHON_MARKERS if (workspace / name).is_file()), None)
    if marker is not None and (found := _python(workspace, files, marker)) is not None:
        return found
    for name, command in (("Cargo.toml", "cargo test"), ("go.mod", "go test ./...")):
        if (workspace / name).is_file():
            return TestCommand(command, f"detected from {name}")
    if (found := _node(workspace, files)) is not None:
        return found
    makefile = _text(files, "Makefile")
    if makefile is not None and re.search(r"^test\s*:(?!=)", makefile, re.MULTILINE):
        return TestCommand("make test", "detected from the Makefile's test target")
    return _python(workspace, files, None)


def _python(workspace: Path, files: HostFiles, marker: str | None) -> TestCommand | None:
    """`marker`: the Python project file found, None for test files alone."""
    tests = workspace / "tests"
    pattern = _pattern(tests) if tests.is_dir() else None
    folder = "tests" if pattern else "."
    pattern = pattern or _pattern(workspace)
    where = None if pattern is None else f"{folder}/{pattern}".removeprefix("./")
    why = "detected from " + " and ".join(name for name in (marker, where) if name)
    if (workspace / "uv.lock").is_file():
        if re.search(r"\bpytest\b", _text(files, "pyproject.toml") or ""):
            return TestCommand("uv run pytest -q", f"{why}, pytest in pyproject.toml")
        return TestCommand(f"uv run {_unittest(folder, pattern)}", why)
    if (marker or folder == "tests") and _has_pytest(workspace):
        return TestCommand("python -m pytest -q", f"{why}, pytest installed")
    return None if pattern is None else TestCommand(_unittest(folder, pattern), why)


def _pattern(folder: Path) -> str | None:
    """unittest's file pattern for the tests in `folder`: its default `test*.py`, else `*_test.py`."""
    if any(folder.glob("test*.py")):
        return "test*.py"
    if any(folder.glob("*_test.py")):
        return "*_test.py"
    return None


def _unittest(folder: str, pattern: str | None) -> str:
    """Plain `python -m unittest` discovers `test*.py` from here; any other place or pattern needs
    `discover` (the bare form refuses `-p`). `-s .` keeps the top folder on sys.path, so a root
    `x_test.py` imports `x`."""
    if folder == "." and pattern in (None, "test*.py"):
        return "python -m unittest -q"
    command = f"python -m unittest discover -q -s {folder}"
    return command if pattern in (None, "test*.py") else f"{command} -p '{pattern}'"


def _node(workspace: Path, files: HostFiles) -> TestCommand | None:
    package = _text(files, "package.json")
    if package is None:
        return None
    try:
        scripts = json_loads(package).get("scripts", {})
    except (ValueError, AttributeError):  # not JSON, nested too deep, not an object
        return None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or NPM_PLACEHOLDER in script:
        return None
    for lock, tool in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn")):
        if (workspace / lock).is_file():
            return TestCommand(f"{tool} test", f"detected from package.json's test script and {lock}")
    return TestCommand("npm test", "detected from package.json's test script")


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


PROJECT_FILE_CAP = 1 << 20  # bytes: no real package.json, Makefile or pyproject.toml is larger


def _text(files: HostFiles, name: str) -> str | None:
    """The project file's text; None when absent, refused, or past the cap (a sparse file the
    model made by `truncate -s 6G Makefile` must not take the host's memory)."""
    try:
        text = files.read_text(name, PROJECT_FILE_CAP + 1)
    except OSError:
        return None
    return None if text is None or len(text) > PROJECT_FILE_CAP else text


# What each runner prints when it ran nothing, and the counts it prints when it ran something.
_NONE = re.compile(
    r"^no tests ran\b"  # pytest (exit 5)
    r"|^No tests found\b|^No test files found\b"  # jest, vitest
    r"|\[no test files\]$|\[no tests to run\]$"  # go, per package
    r"|^go: warning: .* matched no packages",
    re.MULTILINE,
)
_COUNTS = re.compile(
    r"^Ran (\d+) tests? in "  # unittest
    r"|^running (\d+) tests?$"  # cargo, per test binary
    r"|^(?:#|\N{INFORMATION SOURCE}) tests (\d+)$"  # node --test (TAP and spec reporters)
    r"|^Tests?:.*?(\d+) total$",  # jest's summary
    re.MULTILINE,
)
_RAN = re.compile(
    r"^=*\s*\d+ (?:passed|failed)\b"  # pytest's last line
    r"|^ok\s+\S+\s+(?!.*\[no tests to run\])|^FAIL\s|^--- (?:FAIL|PASS)"  # go, per package or test
    r"|^\s*Tests\s+\d+ (?:passed|failed)",  # vitest
    re.MULTILINE,
)


# What each runner prints when tests failed, whatever its exit code says: code under test can end
# the runner with exit 0 after the summary (`atexit` + `os._exit(0)`), and the summary is the truth.
_FAILED = re.compile(
    r"^=*\s*(?:\d+ \w+, )*[1-9]\d* (?:failed|errors?)\b"  # pytest's last line ("1 failed, 2 passed in 0.1s")
    r"|^FAILED \((?:failures|errors)=\d+"  # unittest
    r"|^test result: FAILED\."  # cargo
    r"|^FAIL\s|^--- FAIL: "  # go
    r"|^Tests?:.*?\b[1-9]\d* failed"  # jest
    r"|^\s*Tests\s+[1-9]\d* failed"  # vitest
    r"|^(?:#|\N{INFORMATION SOURCE}) fail [1-9]"  # node --test
    r"|^(?:FAILED|ERROR) \S+::"  # pytest's short summary, there when a config hides the count
    r"|^[.sxX]*[FE][.sxXFE]*\s+\[\s*\d+%\]$",  # pytest's progress line with a failure
    re.MULTILINE,
)


_TEST_WORD = re.compile(r"\b(?:test|tests|pytest|unittest|tox|nox)\b|test_\w*|\w*_test\b")


def runs_tests(command: str) -> bool:
    """Whether a shell command looks like a test run (`python -m pytest`, `npm test`, `go test`)."""
    return _TEST_WORD.search(command) is not None


_RUNNERS = frozenset({"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha"})
_TOOLS_WITH_TEST = frozenset({"npm", "pnpm", "yarn", "bun", "cargo", "go", "make", "deno", "mvn", "gradle"})


def names_a_runner(command: str) -> bool:
    """Whether a command runs a test runner that prints a summary (`python -m pytest`, `npm test`),
    by its words; `test -f out.txt` is the shell's test, and `/tmp/pytest-of-me/x` a path."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    names = [word.rsplit("/", 1)[-1] for word in words]
    for i, name in enumerate(names):
        after = names[i + 1 : i + 3]
        if name in _RUNNERS or (name == "-m" and after[:1] in (["pytest"], ["unittest"])):
            return True
        if name in _TOOLS_WITH_TEST and (after[:1] == ["test"] or after == ["run", "test"]):
            return True
    return False


def says_failed(output: str) -> bool:
    """Whether a test runner's own summary in `output` counts a failed or erred test."""
    return _FAILED.search(output) is not None


def outcome(exit_code: int | None, output: str) -> Outcome:
    """What a finished test run says: passed, failed, or no_tests (no test ran, whatever the exit).

    No test ran when a runner says so (pytest "no tests ran", unittest "Ran 0 tests", cargo's
    "running 0 tests" for every binary, go's "[no test files]" for every package, jest/vitest
    "No tests found", node --test "tests 0") and no count anywhere says a test ran (`make test`
    may run two suites), or when the shell found no such command (exit 127): the runner is not
    installed, and the code is not at fault. A run cut off by its time limit (no exit) failed, as
    did one whose runner counts a failure, whatever its exit code. A run that printed nothing at all
    and exited 0 said nothing of tests (every runner prints a summary; code that ends the runner
    at import does not): no test ran that anyone saw.
    """
    if exit_code is None or says_failed(output):
        return "failed"
    counts = [int(next(n for n in m.groups() if n is not None)) for m in _COUNTS.finditer(output)]
    if exit_code == 0 and passed(output) == 0:
        return "no_tests"  # every test skipped or expected to fail: none passed, so none says the code works
    if any(counts) or _RAN.search(output):
        return "passed" if exit_code == 0 else "failed"
    if counts or _NONE.search(output) or exit_code == 127 or (exit_code == 0 and not output.strip()):
        return "no_tests"
    return "passed" if exit_code == 0 else "failed"


# How many tests a run passed, per runner: unittest says how many ran and how many failed or
# erred; pytest, cargo, jest and vitest count the passed ones; go names each.
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_UNITTEST_BAD = re.compile(r"^FAILED \((.*)\)$", re.MULTILINE)
_UNITTEST_OK = re.compile(r"^OK \((.*)\)$", re.MULTILINE)
# what did not pass: failed, erred, or (after OK) skipped or expected to fail
_BAD_KIND = re.compile(r"\b(failures|errors|unexpected successes|skipped|expected failures)=(\d+)")
_PYTEST_END = re.compile(r"^=*\s*(\d+ [\w ]+?(?:, \d+ [\w ]+?)*) in [\d.]+s\b", re.MULTILINE)
_PASSED = re.compile(
    r"^=*\s*(?:\d+ \w+, )*(\d+) passed\b"  # pytest's last line ("2 failed, 3 passed in 0.1s")
    r"|^test result: \w+\. (\d+) passed;"  # cargo, per test binary
    r"|^Tests:.*?(\d+) passed"  # jest
    r"|^\s*Tests\s+(?:\d+ failed \| )?(\d+) passed",  # vitest
    re.MULTILINE,
)
_GO_PASS = re.compile(r"^\s*--- PASS: ", re.MULTILINE)


def passed(output: str) -> int | None:
    """How many tests a run's output says passed; None when no runner's count is in it.

    A run that fails sooner (a syntax error before any test) passed none: unittest says so
    with `Ran 1 test` and one error, pytest with an error count and no passes."""
    found: list[int] = []  # per runner whose count is in the output (`make test` may run two)
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        total = sum(int(n) for n in ran)
        ended = _UNITTEST_BAD.findall(output) + _UNITTEST_OK.findall(output)
        bad = sum(int(n) for m in ended for _, n in _BAD_KIND.findall(m))
        found.append(max(0, total - bad))
    counts = [int(next(n for n in m.groups() if n is not None)) for m in _PASSED.finditer(output)]
    if counts:
        found.append(sum(counts))
    go = len(_GO_PASS.findall(output))
    if go:
        found.append(go)
    if found:
        return sum(found)
    if re.search(r"^=*\s*(?:\d+ \w+, )*\d+ (?:failed|errors?)\b", output, re.MULTILINE):
        return 0  # pytest: only failures and errors
    if _PYTEST_END.search(output):
        return 0  # pytest's last line with no pass in it: skipped, xfailed, deselected
    return None
