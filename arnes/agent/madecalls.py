"""What a call arnes makes for the model may never change (DESIGN §15): test files, and files the
user's message says to leave alone. The tests are the judge; a judge the agent rewrote for the
model is no judge, and a user who said "don't change X" meant it whoever sends the call.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path

from arnes.host.paths import is_inside, resolve_real

TEST_NAMES = ("test_*", "*_test.*", "*_tests.*", "*.test.*", "*.spec.*", "conftest.py", "tests.py")
TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "testdata"})
_DONT = re.compile(
    r"\b(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't|may not|cannot|can't)\s+"
    r"(?:\w+\s+){0,2}(?:change|modify|edit|touch|alter|rewrite|update|delete)\b"
    r"|\bleave\b[^;\n]{0,80}?\b(?:alone|as (?:it is|they are)|unchanged|untouched)\b"
    r"|\b(?:read-only|must stay|stays? unchanged|are correct|is correct)\b",
    re.IGNORECASE,
)
_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,10})(?![\w/-])")
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
    for sentence in _SENTENCE.split(task):
        if _DONT.search(sentence):
            names.update(_FILE.findall(sentence))
    return names


def off_limits(task: str, paths: list[Path], workspace: Path) -> str | None:
    """Why a call made for the model may not write these paths, or None when it may."""
    root = resolve_real(workspace)
    alone = left_alone(task)
    for path in paths:
        real = resolve_real(path)
        shown = str(real.relative_to(root)) if is_inside(root, real) else str(path)
        if is_test_file(real, root):
            return f"{shown} is a test file, and arnes never changes tests for the model."
        if shown in alone or real.name in alone:
            return f"the user's message says to leave {shown} alone."
    return None
