"""Red team, round 5: the model-adaptation layer (arnes/adapt/), wildcard Bash rules.

The attacker controls the repository and the model's replies (the scripted provider, or the fake
OpenAI server for a model name that picks the small profile). Every test here is end to end,
through the real `arnes` command, and asserts what the documentation promises; each failed before
its fix. The two availability tests bound the run with a subprocess time-out: it detects a hang
(the fixed code answers in milliseconds), it does not measure speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes

SMALL_WHOLE = ["--steering", "small", "--edit-format", "whole"]


def _script(tmp_path: Path, turns: list[dict[str, object]], name: str = "turns") -> Path:
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"turns": turns}))
    return script


def _arnes(tmp_path: Path, ws: Path, turns: list[dict[str, object]], task: str, *flags: str, timeout: float = 60):
    script = _script(tmp_path, turns)
    trace = tmp_path / "trace.jsonl"
    done = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     *flags, task, timeout=timeout)  # fmt: skip
    return done, trace


def _results(trace: Path) -> list[str]:
    return [str(e.get("output", "")) for e in read_trace(trace) if e["event"] == "tool_result"]


def _block(path: str, body: str, lang: str = "python") -> str:
    return f"{path}\n```{lang}\n{body}```\n"


def _git(ws: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)


# --------------------------------------------------------------------------------------------
# R5-1 (high, confidentiality): content-check reads a file before the gate and shows it.
# --------------------------------------------------------------------------------------------
def test_r5_1_content_check_shows_a_denied_file_and_a_file_outside_the_workspace(tmp_path: Path) -> None:
    """The small profile's `content-check` piece runs on the model's Write/Edit BEFORE the permission
    gate, reads the named file with no Read-rule and no workspace check (contract_help.py `_text`),
    and puts what it read in the refusal the model gets:
    - an Edit of a file denied for Read AND Edit (`old_string: "API_KEY"`, `new_string: "API_KEY )"`)
      gets "would not be valid Python (... at line 2: `API_KEY ) = "sk-live-123456"`)": the secret line;
    - a Write to a Markdown file outside the workspace gets its headings ("drops # Bank PIN is 4321, ...").
    A file hidden by a Read rule must never be read or leaked to the model; a path outside the
    workspace is asked about (and, with no terminal, denied) before anything reads it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "secret_settings.py").write_text('DEBUG = False\nAPI_KEY = "sk-live-123456"\n\ndef helper():\n    pass\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "diary.md").write_text("# Bank PIN is 4321\n\ntext\n\n# Meet Bob at 5pm\n")
    turns = [
        {"tool_calls": [
            {"name": "Edit", "input": {"file_path": "secret_settings.py",
                                       "old_string": "API_KEY", "new_string": "API_KEY )"}},
            {"name": "Write", "input": {"file_path": str(outside / "diary.md"), "content": "x\n"}},
        ]},
        {"text": "done"},
    ]  # fmt: skip
    done, trace = _arnes(tmp_path, ws, turns, "fix add in calc.py", *SMALL_WHOLE, "--no-self-check",
                         "--deny", "Read(secret_settings.py)", "--deny", "Edit(secret_settings.py)")  # fmt: skip
    assert done.code == 0, done.err
    seen_by_model = "\n".join(_results(trace))
    assert "sk-live-123456" not in seen_by_model, "a line of a Read- and Edit-denied file reached the model"
    assert "Bank PIN is 4321" not in seen_by_model, "a file outside the workspace was read and shown to the model"


# --------------------------------------------------------------------------------------------
# R5-2 (medium-high): `Bash(rm -rf *)` deny evaded by -R and long options.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command", ["rm -Rf victim", "rm -R -f victim", "rm --recursive --force victim", "rm -r --force victim"]
)
@pytest.mark.parametrize("mode", ["acceptEdits", "bypass"])
def test_r5_2_rm_rf_deny_is_evaded_by_other_spellings_of_the_same_flags(
    tmp_path: Path, mode: str, command: str
) -> None:
    """`--deny 'Bash(rm -rf *)'` denies `rm -rf`, `rm -fr`, `rm -r -f`, but not `rm -Rf` (-R is
    rm's own synonym of -r) nor `--recursive`/`--force`: those are "ask", which acceptEdits and
    bypass turn into "allow" in the sandbox, and the folder is gone. (`Bash(rm -rf:*)` too.)"""
    ws = tmp_path / "ws"
    (ws / "victim").mkdir(parents=True)
    (ws / "victim" / "keep.txt").write_text("precious\n")
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "done"}]
    done, _ = _arnes(tmp_path, ws, turns, "clean up", "--permission-mode", mode, "--deny", "Bash(rm -rf *)")
    assert done.code == 0, done.err
    assert (ws / "victim" / "keep.txt").exists(), f"{command!r} ran despite --deny 'Bash(rm -rf *)'"


# --------------------------------------------------------------------------------------------
# R5-3 (medium): a test file written by arnes's whole format through a link.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["test-file-is-a-link", "tests-folder-is-a-link"])
def test_r5_3_whole_format_writes_a_test_file_reached_through_a_link(tmp_path: Path, layout: str) -> None:
    """`off_limits` judges only the REAL path (madecalls.py): `tests/test_calc.py` that is a link to
    `checks/calc_checks.py`, or `tests/helpers.py` in a `tests -> qa` folder link, is not "a test
    file" for it, so the Write arnes makes from the reply rewrites the test ("Overwrote
    tests/test_calc.py"). The path the block names is under tests/ and must be refused."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    if layout == "test-file-is-a-link":
        (ws / "checks").mkdir()
        target = ws / "checks" / "calc_checks.py"
        target.write_text("import calc\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n")
        (ws / "tests").mkdir()
        os.symlink("../checks/calc_checks.py", ws / "tests" / "test_calc.py")
        named = "tests/test_calc.py"
    else:
        (ws / "qa").mkdir()
        (ws / "qa" / "test_calc.py").write_text("from qa.helpers import check\n\ndef test_add():\n    check()\n")
        target = ws / "qa" / "helpers.py"
        target.write_text("import calc\n\ndef check():\n    assert calc.add(1, 2) == 3\n")
        os.symlink("qa", ws / "tests")
        named = "tests/helpers.py"
    before = target.read_text()
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": named}}]},
        {"text": _block(named, "def test_add():\n    pass\n\ndef check():\n    pass\n")},
        {"text": "done"},
    ]
    done, _ = _arnes(tmp_path, ws, turns, "fix add in calc.py", *SMALL_WHOLE, "--no-self-check",
                     "--permission-mode", "acceptEdits")  # fmt: skip
    assert done.code == 0, done.err
    assert target.read_text() == before, f"arnes rewrote the test {named} for the model"


# --------------------------------------------------------------------------------------------
# R5-4 (medium): a test by unittest's own default pattern (test*.py) is not "a test file".
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["testcalc.py", "test.py"])
def test_r5_4_whole_format_writes_a_test_named_by_unittests_default_pattern(tmp_path: Path, name: str) -> None:
    """`python -m unittest` (the command arnes's own detect picks here) discovers `test*.py`;
    `is_test_file` knows only `test_*`, so `testcalc.py` / `test.py` are rewritten by arnes's Write
    (the test emptied, the suite then green)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    test = (
        "import unittest\nimport calc\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n"
    )
    (ws / name).write_text(test)
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": name}}]},
        {
            "text": _block(
                name, "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n"
            )
        },
        {"text": "done"},
    ]
    done, _ = _arnes(tmp_path, ws, turns, "fix add in calc.py", *SMALL_WHOLE, "--no-self-check",
                     "--permission-mode", "acceptEdits")  # fmt: skip
    assert done.code == 0, done.err
    assert (ws / name).read_text() == test, f"arnes rewrote the test {name} for the model"


# --------------------------------------------------------------------------------------------
# R5-5 (medium): "leave it alone" missed in ordinary phrasings.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "task",
    [
        "Fix add in calc.py. Don\u2019t change utils.py.",  # a typographic apostrophe (macOS, phones, pasted text)
        "Fix add in calc.py. utils.py must not be changed.",
        "Fix add in calc.py; utils.py should not be modified.",
        "Fix add in calc.py. Do not change ./utils.py.",
        "Fix add in calc.py without touching utils.py.",
        "Fix add in calc.py. Keep utils.py unchanged.",
        "Fix add in calc.py. DO NOT CHANGE UTILS.PY",
    ],
)
def test_r5_5_a_file_the_user_says_to_leave_alone_is_written_by_arnes(tmp_path: Path, task: str) -> None:
    """`left_alone` (madecalls.py) knows "don't" only with an ASCII apostrophe, verbs only in their
    base form ("must not be changed" / "should not be modified" miss), keeps `./utils.py` with
    its `./` (then compares with `utils.py`), compares case-sensitively, and knows neither
    "without touching" nor "keep ... unchanged". Each time arnes writes utils.py from the reply."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "utils.py").write_text("def fmt(x):\n    return str(x)\n")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "utils.py"}}]},
        {"text": _block("utils.py", "def fmt(x):\n    return 'CHANGED'\n")},
        {"text": "done"},
    ]
    done, _ = _arnes(tmp_path, ws, turns, task, *SMALL_WHOLE, "--no-self-check", "--permission-mode", "acceptEdits")
    assert done.code == 0, done.err
    assert "CHANGED" not in (ws / "utils.py").read_text(), f"utils.py written although the task says: {task!r}"


# --------------------------------------------------------------------------------------------
# R5-6 (medium): the self-check's judge is replaced by a file arnes writes.
# --------------------------------------------------------------------------------------------
def test_r5_6_arnes_writes_a_unittest_py_that_makes_its_own_self_check_green(tmp_path: Path) -> None:
    """The reply gives calc.py (still wrong: `a * b`) and a top-level `unittest.py` holding
    `raise SystemExit(0)`. arnes writes both (unittest.py is not "a test file"), then runs its
    self-check `python -m unittest -q`, which imports the workspace's unittest.py first: exit 0,
    no output, green, and the answer stands as checked. The judge arnes runs itself was rewritten
    by a call arnes made for the model (the same holds for pytest.py under `python -m pytest`)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text(
        "import unittest\nimport calc\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n"
    )
    _git(ws)
    reply = (
        _block("calc.py", "def add(a, b):\n    return a * b\n") + "\n" + _block("unittest.py", "raise SystemExit(0)\n")
    )
    turns = [{"text": reply}, {"text": "done, the tests pass"}]
    done, trace = _arnes(tmp_path, ws, turns, "fix add in calc.py", *SMALL_WHOLE, "--permission-mode", "acceptEdits")
    assert done.code == 0, done.err
    events = read_trace(trace)
    if not any(e["event"] == "tool_call" and e.get("by") == "arnes" and e["name"] == "Bash" for e in events):
        pytest.skip("no self-check ran here (no bubblewrap)")
    assert not (ws / "unittest.py").exists(), "arnes wrote a unittest.py that replaces the test runner it then ran"


# --------------------------------------------------------------------------------------------
# R5-7 (low-medium): --steering off still takes files from the reply.
# --------------------------------------------------------------------------------------------
def test_r5_7_steering_off_still_takes_a_file_from_the_reply(tmp_path: Path) -> None:
    """`--steering off` for a model whose profile is small (qwen2.5-coder-1.5b-instruct) keeps the
    profile's `whole` edit format (profiles.py `profile_for` overrides only the steering), and
    build_steering adds the WholeFiles piece whatever the set: arnes writes a file named in the
    reply's prose. The docs: with `--steering off` "nothing is changed or made for the model:
    ... no file taken from a reply"."""
    from tests.fakes.llm_server import FakeLLMServer

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    trace = tmp_path / "trace.jsonl"
    turns = [
        {"text": "For example:\n\n" + _block("example.py", "import calc\nprint(calc.add(1, 2))\n")},
        {"text": "done"},
    ]
    with FakeLLMServer(turns) as server:
        done = run_arnes("--provider", "openai", "--base-url", server.url + "/v1",
                         "--model", "qwen2.5-coder-1.5b-instruct",
                         "--steering", "off", "--permission-mode", "acceptEdits", "--no-self-check", "-w", str(ws),
                         "--trace", str(trace), "how do I call add?", env={"OPENAI_API_KEY": "x"})  # fmt: skip
    assert done.code == 0, done.err
    made = [e for e in read_trace(trace) if e["event"] == "tool_call" and e.get("by") == "arnes"]
    assert not made and not (ws / "example.py").exists(), "with --steering off arnes took a file from the reply"


# --------------------------------------------------------------------------------------------
# R5-8 (low-medium, availability): a repository's deny rule hangs arnes (wildcard regex).
# --------------------------------------------------------------------------------------------
def test_r5_8_a_project_deny_rule_with_wildcards_hangs_arnes_on_a_short_command(tmp_path: Path) -> None:
    """An untrusted repository may add deny rules (they only restrict), and a wildcard rule is
    compiled to `.*` per star (rules.py `_glob_regex`) and matched with backtracking:
    `Bash(*a*a*...*a*b)` against `echo aaaa...` (65 characters) never ends. arnes sits at 100 %
    CPU; no turn limit or timeout applies. Judging a 65-character command must take milliseconds."""
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    (ws / ".arnes" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b)"]}})
    )
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "echo " + "a" * 60}}]}, {"text": "done"}]
    started = time.monotonic()
    try:
        done, _ = _arnes(tmp_path, ws, turns, "say hi", timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"arnes still judging one short command after {time.monotonic() - started:.0f} s")
    assert done.code == 0, done.err


# --------------------------------------------------------------------------------------------
# R5-9 (low, availability): the code-in-chat nudge burns CPU in proportion to reply x files.
# --------------------------------------------------------------------------------------------
def test_r5_9_a_reply_of_small_code_blocks_costs_minutes_of_cpu(tmp_path: Path) -> None:
    """The `nudge` piece lines every fenced block of a reply up with every file read this session
    (unfinished.py `edit_for` -> `_aligned`: each window of each file, a `content.count` per
    near-match): 400 characters of reply against one 100 KB file cost ~0.4 s, so 32 KB of reply
    and three files read with `limit: 5` cost ~2 minutes of one core (20 files, 100 KB of reply:
    most of an hour), before the reply is even answered."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"data{i}.py").write_text("a\n" * 50_000)
    block = "```\n" + "a\n" * 100 + "b\n" + "a\n" * 98 + "```\n"
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": f"data{i}.py", "limit": 5}} for i in range(3)]},
        {"text": "Here it is:\n" + block * 80},
        {"text": "done"},
    ]
    started = time.monotonic()
    try:
        done, _ = _arnes(tmp_path, ws, turns, "look at the data files", *SMALL_WHOLE, "--no-self-check",
                         "--permission-mode", "acceptEdits", timeout=45)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"judging one 32 KB reply took more than {time.monotonic() - started:.0f} s")
    assert done.code == 0, done.err
