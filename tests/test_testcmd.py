"""The project's test command, found from its files, and what a finished run of it says.

Measured before host/testcmd.py: `python -m unittest -q` ran nothing in a folder of `*_test.py`
files and the self-check took "Ran 0 tests" for green; a Rust, Node or Go project with a `tests/`
folder got `python -m pytest`, and the model was sent to fix code because no test ran.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arnes.host import testcmd
from arnes.host.testcmd import detect, outcome

MATHUTIL = "def add(a, b):\n    return a + b\n"
UNITTEST = (
    "import unittest\n\nfrom mathutil import add\n\n\nclass AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), {expected})\n"
)
NPM_INIT = 'echo "Error: no test specified" && exit 1'  # what `npm init -y` writes


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


# name: (files, command with pytest installed, command without it)
PROJECTS: dict[str, tuple[dict[str, str], str | None, str | None]] = {
    "rust crate with tests/": (
        {"Cargo.toml": "[package]\nname = 'x'\n", "tests/add.rs": "", "tests/test_helper.py": ""},
        "cargo test", "cargo test",
    ),
    "node with tests/ and a pnpm lock": (
        {"package.json": json.dumps({"scripts": {"test": "vitest run"}}), "pnpm-lock.yaml": "", "tests/a.test.js": ""},
        "pnpm test", "pnpm test",
    ),
    "node with a yarn lock": (
        {"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, "yarn test", "yarn test",
    ),
    "node without a lock": ({"package.json": json.dumps({"scripts": {"test": "node --test"}})}, "npm test", "npm test"),
    "npm's placeholder script": ({"package.json": json.dumps({"scripts": {"test": NPM_INIT}}), "tests/a.js": ""},
                                 None, None),
    "go with tests/": ({"go.mod": "module x\n", "tests/a_test.go": "", "tests/test_tool.py": ""},
                       "go test ./...", "go test ./..."),
    "*_test.py at the top": (
        {"mathutil.py": MATHUTIL, "mathutil_test.py": UNITTEST.format(expected=5)},
        "python -m unittest discover -q -s . -p '*_test.py'", "python -m unittest discover -q -s . -p '*_test.py'",
    ),
    "test_*.py at the top": (
        {"mathutil.py": MATHUTIL, "test_mathutil.py": UNITTEST.format(expected=5)},
        "python -m unittest -q", "python -m unittest -q",
    ),
    "tests/ with test_*.py": (
        {"mathutil.py": MATHUTIL, "tests/test_mathutil.py": UNITTEST.format(expected=5)},
        "python -m pytest -q", "python -m unittest discover -q -s tests",
    ),
    "tests/ with *_test.py": (
        {"mathutil.py": MATHUTIL, "tests/mathutil_test.py": UNITTEST.format(expected=5)},
        "python -m pytest -q", "python -m unittest discover -q -s tests -p '*_test.py'",
    ),
    "uv project with pytest": (
        {"pyproject.toml": "[dependency-groups]\ndev = ['pytest>=8']\n", "uv.lock": "", "tests/test_a.py": ""},
        "uv run pytest -q", "uv run pytest -q",
    ),
    "uv project without pytest": (
        {"pyproject.toml": "[project]\nname = 'x'\n", "uv.lock": "", "tests/test_a.py": ""},
        "uv run python -m unittest discover -q -s tests", "uv run python -m unittest discover -q -s tests",
    ),
    "Makefile with a test target": ({"Makefile": "all:\n\ttrue\n\ntest: all\n\ttrue\n"}, "make test", "make test"),
    "Makefile with only a test variable": ({"Makefile": "test := x\n"}, None, None),
    "python extension crate": (  # a PyO3 crate: its Python tests are the project's
        {"pyproject.toml": "[build-system]\n", "Cargo.toml": "[package]\n", "tests/test_a.py": ""},
        "python -m pytest -q", "python -m unittest discover -q -s tests",
    ),
    "python project without tests beside a Makefile": (
        {"pyproject.toml": "[project]\nname = 'x'\n", "Makefile": "test:\n\ttrue\n"},
        "python -m pytest -q", "make test",
    ),
    "nothing to test": ({"README.md": "# x\n", "tests/notes.txt": ""}, None, None),
}  # fmt: skip


@pytest.mark.parametrize("name", list(PROJECTS))
@pytest.mark.parametrize("pytest_installed", [True, False])
def test_the_command_fits_the_project(
    name: str, pytest_installed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files, with_pytest, without = PROJECTS[name]
    monkeypatch.setattr(testcmd, "_has_pytest", lambda ws: pytest_installed)
    found = detect(project(tmp_path, files))
    expected = with_pytest if pytest_installed else without
    assert (found.command if found else None) == expected, name
    if found is not None:
        assert found.why.startswith("detected from "), found.why


@pytest.mark.parametrize("test_file", ["mathutil_test.py", "test_mathutil.py", "tests/mathutil_test.py"])
def test_a_detected_unittest_command_really_runs_the_tests(
    test_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run for real: the command finds the test, which imports the module from the top folder."""
    monkeypatch.setattr(testcmd, "_has_pytest", lambda ws: False)
    ws = project(tmp_path, {"mathutil.py": MATHUTIL, test_file: UNITTEST.format(expected=4)})
    found = detect(ws)
    assert found is not None
    done = run(found.command.replace("python ", f"{sys.executable} ", 1), ws)
    assert "Ran 1 test" in done.stderr and done.returncode == 1, found.command
    assert outcome(done.returncode, done.stdout + done.stderr) == "failed"


def run(command: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False, env=env)


def said(command: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = run(command, cwd, env)
    return outcome(done.returncode, done.stdout + done.stderr)


def test_unittest_and_pytest_runs_of_nothing_are_no_tests(tmp_path: Path) -> None:
    ws = project(tmp_path, {"mathutil.py": MATHUTIL, "mathutil_test.py": UNITTEST.format(expected=5)})
    python = sys.executable
    assert said(f"{python} -m unittest -q", ws) == "no_tests"  # "Ran 0 tests": the pattern misses *_test.py
    assert said(f"{python} -m unittest discover -q -s . -p '*_test.py'", ws) == "passed"
    (ws / "mathutil_test.py").write_text(UNITTEST.format(expected=6))
    assert said(f"{python} -m unittest discover -q -s . -p '*_test.py'", ws) == "failed"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert said(f"{python} -m pytest -q -p no:cacheprovider", empty) == "no_tests"  # exit 5, "no tests ran"
    assert said(f"{python} -m pytest -q -p no:cacheprovider", ws) == "failed"
    # Python 3.12's unittest exits 5 for the same run (captured with 3.12.1's `python -m unittest -q`):
    assert outcome(5, "\n----------------------------------------------------------------------\n"
                      "Ran 0 tests in 0.000s\n\nNO TESTS RAN\n") == "no_tests"  # fmt: skip


def test_a_runner_that_is_not_installed_ran_no_tests(tmp_path: Path) -> None:
    assert said("no-such-test-runner --all", tmp_path) == "no_tests"  # bash: exit 127, command not found
    assert said("exit 1", tmp_path) == "failed" and said("echo ok", tmp_path) == "passed"
    assert outcome(None, "Ran 3 tests in 0.1s") == "failed"  # cut off by its time limit


def _real_home_env() -> dict[str, str]:
    """rustup's cargo finds its toolchain under the real home (tests run with a fresh one)."""
    return {**os.environ, "HOME": pwd.getpwuid(os.getuid()).pw_dir, "CARGO_NET_OFFLINE": "true"}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_cargo_runs_with_every_binary_at_zero_are_no_tests(tmp_path: Path) -> None:
    crate = project(tmp_path / "crate", {
        "Cargo.toml": '[package]\nname = "mathutil"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "pub fn add(a: u64, b: u64) -> u64 { a + b }\n",
    })  # fmt: skip
    env = {**_real_home_env(), "CARGO_TARGET_DIR": str(tmp_path / "target")}
    assert said("cargo test", crate, env) == "no_tests"  # unittests and doc-tests: "running 0 tests" each
    project(crate, {"tests/add.rs": "#[test]\nfn adds() { assert_eq!(mathutil::add(2, 2), 5); }\n"})
    assert said("cargo test", crate, env) == "failed"  # one binary ran one test
    (crate / "tests" / "add.rs").write_text("#[test]\nfn adds() { assert_eq!(mathutil::add(2, 2), 4); }\n")
    assert said("cargo test", crate, env) == "passed"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_node_test_runs_of_nothing_are_no_tests(tmp_path: Path) -> None:
    assert said("node --test", tmp_path) == "no_tests"  # TAP: "# tests 0"
    assert said("node --test --test-reporter=spec", tmp_path) == "no_tests"  # "(i) tests 0", with the information sign
    project(tmp_path, {"add.test.mjs": "import test from 'node:test';\nimport assert from 'node:assert';\n"
                                       "test('adds', () => assert.strictEqual(2 + 2, 5));\n"})  # fmt: skip
    assert said("node --test", tmp_path) == "failed"


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_npm_test_of_a_failing_script_is_red(tmp_path: Path) -> None:
    project(tmp_path, {"package.json": json.dumps({"name": "x", "scripts": {"test": "node --test"}})})
    assert said("npm test", tmp_path) == "no_tests"
    project(tmp_path, {"a.test.js": "require('node:test')('t', () => { throw new Error('red'); });\n"})
    assert said("npm test", tmp_path) == "failed"


# go is not installed where these tests were written: its lines as `go help test` and the go
# command's source print them ("ok", "FAIL", "?   \tPKG\t[no test files]").
GO_NONE = "?   \texample.com/mathutil\t[no test files]\n?   \texample.com/mathutil/cmd\t[no test files]\n"
GO_OK = "ok  \texample.com/mathutil\t0.002s\n?   \texample.com/mathutil/cmd\t[no test files]\n"
GO_FAIL = (
    "--- FAIL: TestAdd (0.00s)\n    add_test.go:6: got 4, want 5\nFAIL\nFAIL\texample.com/mathutil\t0.002s\nFAIL\n"
)
# jest and vitest are not installed here: their messages as jestjs/jest#8187 and nrwl/nx#27722 quote them.
JEST_NONE = (
    "No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\nIn /w\n"
    "  2 files checked.\n  testMatch: **/__tests__/**/*.[jt]s?(x), **/?(*.)+(spec|test).[tj]s?(x) - 0 matches\n"
)
JEST_FAIL = "Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 passed, 3 total\nSnapshots:   0 total\n"
VITEST_NONE = (
    " RUN  v2.0.5 /w\n\ninclude: src/**/*.{test,spec}.?(c|m)[jt]s?(x)\nNo test files found, exiting with code 1\n"
)
VITEST_FAIL = " Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n"


def test_go_jest_and_vitest_outputs() -> None:
    assert outcome(0, GO_NONE) == "no_tests"
    assert outcome(0, "ok  \texample.com/mathutil\t0.002s [no tests to run]\n") == "no_tests"
    assert outcome(0, 'go: warning: "./..." matched no packages\n') == "no_tests"
    assert outcome(0, GO_OK) == "passed" and outcome(1, GO_FAIL) == "failed"
    assert outcome(1, JEST_NONE) == "no_tests" and outcome(1, JEST_FAIL) == "failed"
    assert outcome(1, VITEST_NONE) == "no_tests" and outcome(1, VITEST_FAIL) == "failed"


def test_one_suite_that_ran_outweighs_one_that_ran_nothing() -> None:
    """`make test` may run two suites: a count above zero anywhere means tests ran."""
    both = "Ran 0 tests in 0.000s\n\nOK\n" + "running 2 tests\ntest result: FAILED. 1 passed; 1 failed\n"
    assert outcome(2, both) == "failed"
    assert outcome(0, "Ran 0 tests in 0.000s\n\nOK\n3 passed in 0.02s\n") == "passed"
    assert outcome(2, "make: *** No rule to make target 'test'.  Stop.\n") == "failed"


def test_a_runners_failure_count_wins_over_its_exit_code_and_silence_is_no_test(tmp_path: Path) -> None:
    """Code under test can end its runner with exit 0: at import (nothing printed) or after the
    summary (`atexit` + `os._exit(0)`). The summary is the truth; a run that printed nothing said
    nothing of tests."""
    (tmp_path / "app.py").write_text(
        "import atexit, os\natexit.register(lambda: os._exit(0))\n\n\ndef price():\n    return 10\n"
    )
    (tmp_path / "test_app.py").write_text("from app import price\n\n\ndef test_price():\n    assert price() == 15\n")
    pytest_run = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    assert said(pytest_run, tmp_path) == "failed"
    (tmp_path / "app.py").write_text("import os, sys\nif 'pytest' in sys.modules:\n    os._exit(0)\n")
    assert said(pytest_run, tmp_path) == "no_tests"
    assert said("true", tmp_path) == "no_tests"
    for summary in ("=== 1 failed, 2 passed in 0.1s ===", "2 passed, 1 error in 0.2s", "FAILED (failures=1)",
                    "test result: FAILED. 1 passed; 1 failed", "--- FAIL: TestX (0.00s)", "Tests: 1 failed, 3 total",
                    "# fail 2"):  # fmt: skip
        assert outcome(0, f"Ran 3 tests in 0.1s\n{summary}\n") == "failed", summary
    for fine in ("3 passed in 0.1s", "\N{INFORMATION SOURCE} fail 0", "Tests: 3 passed, 3 total"):
        assert outcome(0, fine) == "passed", fine


def test_verify_passes_on_exit_0_unless_a_runners_summary_counts_a_failure(tmp_path: Path) -> None:
    from arnes.workflow.verify import run_check

    assert run_check("true", tmp_path).passed  # a check of the user's own may print nothing
    assert not run_check("echo '=== 1 failed, 1 passed in 0.1s ==='; exit 0", tmp_path).passed
    assert not run_check("exit 1", tmp_path).passed


def test_a_run_where_no_test_passed_is_not_green_and_a_hidden_count_still_fails() -> None:
    """Red team 14b: the code under test skips or xfails its own test (pytest `1 skipped`, unittest
    `OK (skipped=1)`): none passed, so none says the code works. A repository's `-qq` hides pytest's
    count line: its progress line and short summary still say a test failed."""
    assert outcome(0, "s                                   [100%]\n1 skipped in 0.10s\n") == "no_tests"
    assert outcome(0, "x                                   [100%]\n1 xfailed in 1.07s\n") == "no_tests"
    assert outcome(0, "Ran 1 test in 0.000s\n\nOK (skipped=1)\n") == "no_tests"
    assert outcome(0, "Ran 2 tests in 0.000s\n\nOK (skipped=1)\n") == "passed"
    assert outcome(0, ".s                                  [100%]\n1 passed, 1 skipped in 0.1s\n") == "passed"
    assert outcome(0, "F                                   [100%]\n") == "failed"
    assert outcome(0, "FAILED tests/test_app.py::test_price - assert 10 == 15\n") == "failed"


def test_verify_of_a_test_run_that_ran_or_passed_nothing_is_not_verified(tmp_path: Path) -> None:
    from arnes.workflow.verify import run_check

    def pytest(prints: str) -> str:  # a stand-in runner, by its name
        return f"pytest() {{ {prints} :; }}; pytest -q"

    assert not run_check(pytest(""), tmp_path).passed  # a test run that printed nothing
    assert not run_check(pytest("echo 'no tests ran in 1.66s';"), tmp_path).passed
    assert run_check(pytest("echo '3 passed in 0.1s';"), tmp_path).passed
    assert run_check("touch /tmp/pytest-of-me/ran || true", tmp_path).passed  # a path, not a runner
    assert run_check("test -d .", tmp_path).passed  # the shell's test, not a runner: exit 0 is the answer


def test_a_runner_is_named_by_the_commands_words() -> None:
    from arnes.host.testcmd import names_a_runner

    for command in ("python -m pytest -q", "pytest", "npm test", "npm run test", "cargo test", "go test ./...",
                    "make test", "/usr/bin/python3 -m unittest discover -s tests", "uv run pytest"):  # fmt: skip
        assert names_a_runner(command), command
    for command in ("test -f out.txt", "touch /tmp/pytest-of-root/ran", "ruff check .", "npm run build"):
        assert not names_a_runner(command), command
