"""What a call arnes makes for the model may never change (DESIGN §15): test files, and files the
user's message says to leave alone. The tests are the judge; a judge the agent rewrote for the
model is no judge, and a user who said "don't change X" meant it whoever sends the call.
"""

from __future__ import annotations

import configparser
import re
from fnmatch import fnmatchcase
from pathlib import Path

from arnes.host.paths import resolve_real
from arnes.messages import ToolCall
from arnes.nesting import toml_loads

# unittest's own default pattern is test*.py; the runners' names and files are the judge's too (a
# `unittest.py` beside the code would be the `python -m unittest` that runs, and says green).
TEST_NAMES = (
    "test*.py", "test_*", "*_test.*", "*_tests.*", "*.test.*", "*.spec.*", "conftest.py", "tests.py",
    "unittest.py", "pytest.py", "pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "noxfile.py",
)  # fmt: skip
# Files that hold pytest's settings beside other things: their pytest part is the judge's too (an
# `addopts = "--deselect ..."` there turns a failing suite green), the rest is the project's.
SHARED_SETTINGS = ("pyproject.toml", "setup.cfg")
TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "testdata", "unittest", "pytest", "_pytest"})
_VERB = r"(?:change|modify|edit|touch|alter|rewrite|update|delete|overwrite|replace)"
_DONT = re.compile(
    rf"\b(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't|may not|cannot|can't|not to)\s+"
    rf"(?:\w+\s+){{0,2}}{_VERB}\b"
    r"|\b(?:must|should|may|can|is|are)(?: not|n't|not) be (?:changed|modified|edited|touched|altered|"
    r"rewritten|updated|deleted|overwritten|replaced)\b"
    r"|\bwithout (?:touching|changing|modifying|editing|altering)\b"
    r"|\b(?:leave|keep)\b[^;\n]{0,80}?\b(?:alone|as (?:it is|they are)|unchanged|untouched|intact|as is)\b"
    r"|\b(?:read-only|read only|off-limits|off limits|hands off|no changes to|must stay|stays? unchanged|"
    r"remains? as is|remains? unchanged|are correct|is correct|frozen)\b",
    re.IGNORECASE,
)
_FILE = re.compile(r"(?<![\w.-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,10})(?![\w/-])")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def is_test_file(path: Path, workspace: Path) -> bool:
    """Whether a path is a test by the usual conventions of Python, JS/TS, Go and Rust projects."""
    try:
        parts = path.relative_to(workspace).parts
    except ValueError:
        parts = path.parts
    if any(part.lower() in TEST_FOLDERS for part in parts[:-1]):
        return True
    name = parts[-1].lower() if parts else ""
    return any(fnmatchcase(name, pattern) for pattern in TEST_NAMES)


def left_alone(task: str) -> set[str]:
    """The file names a task's sentences say not to change ("The tests in x_test.py are correct,
    don't change them")."""
    names: set[str] = set()
    task = task.replace("\u2019", "'").replace("\u2018", "'")  # a typographic apostrophe is an apostrophe
    for sentence in _SENTENCE.split(task):
        if _DONT.search(sentence):
            names.update(_FILE.findall(sentence))
    return names


def off_limits(task: str, paths: list[Path], workspace: Path, call: ToolCall | None = None) -> str | None:
    """Why a call made for the model may not write these paths, or None when it may. Each path is
    judged as written and by its real path: a link named like code that points at a test is a test.
    With the `call`, a Write or Edit of pyproject.toml or setup.cfg that changes pytest's settings
    there is refused like a test file."""
    root = resolve_real(workspace)
    alone = {_plain(name) for name in left_alone(task)}
    for path in paths:
        real = resolve_real(path)
        if call is not None and real.name.lower() in SHARED_SETTINGS and _changes_pytest_settings(call, real):
            shown = _relative(real, root)
            return f"it changes pytest's settings in {shown}, and arnes never changes the tests' judge for the model."
        for form, base in ((path, workspace.absolute()), (real, root)):
            shown = _relative(form, base)
            if is_test_file(form, base):
                return f"{shown} is a test file, and arnes never changes tests for the model."
            if _plain(shown) in alone or form.name.lower() in alone:
                return f"the user's message says to leave {shown} alone."
    return None


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def _plain(name: str) -> str:
    """A file name as a task writes it, compared loosely: `./Utils.PY` is utils.py."""
    return name.removeprefix("./").lower()


def pytest_settings(name: str, text: str) -> object:
    """pytest's own part of a pyproject.toml or setup.cfg, as data (None when there is none or the
    file cannot be read: pytest stops on such a file, so no green comes of it)."""
    try:
        if name == "pyproject.toml":
            tool = toml_loads(text).get("tool")
            return tool.get("pytest") if isinstance(tool, dict) else None
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        return dict(parser["tool:pytest"]) if parser.has_section("tool:pytest") else None
    except (ValueError, configparser.Error):  # toml_loads: a TOMLDecodeError or too deep
        return None


def _changes_pytest_settings(call: ToolCall, path: Path) -> bool:
    """Whether the Write or Edit `call` would change pytest's settings in `path`. An Edit whose
    text is not found as written is judged by what it mentions: when in doubt, no."""
    try:
        before = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        before = ""
    args = call.input
    if call.name == "Write":
        after = str(args.get("content", ""))
    else:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        if not old or old not in before:
            return "pytest" in (old + new).lower() or pytest_settings(path.name.lower(), before) is not None
        after = before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1)
    name = path.name.lower()
    return pytest_settings(name, before) != pytest_settings(name, after)
