"""A test run's output, split into its failing tests: which test, what the runner said of it, and
the test's own code.

unittest prints a block per failure (`FAIL: test_x (mod.Class.test_x)` between rules, then the
traceback); pytest prints one under `____ Class.test_x ____` that already shows the test's code.
Any other runner's output is one failure: all of it, cut to size.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

MOST_REPORT = 2_500  # characters of what the runner said of one failure
MOST_SOURCE = 60  # lines of a test's own code

_UNITTEST = re.compile(r"^={20,}\n(?:FAIL|ERROR): (\w+)[^\n]*\n-{20,}\n", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(?:={20,}|-{20,})$", re.MULTILINE)
_PYTEST = re.compile(r"^_{3,} (\S(?:.*\S)?) _{3,}$", re.MULTILINE)
_PYTEST_END = re.compile(r"^(?:={3,} .* ={3,}|_{3,} .* _{3,})$", re.MULTILINE)
_FRAME = re.compile(r'^\s*File "([^"\n]+)", line (\d+), in (\w+)$', re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    name: str  # the test's name as the runner printed it ("": the output is not split by test)
    report: str  # what the runner said of this test
    file: str | None = None  # the test's file as the traceback names it, when it does
    line: int | None = None  # a line inside the test


def failures(output: str) -> list[Failure]:
    """The failing tests of a run's output, in the runner's order; one `Failure` of the whole
    output when no runner's blocks are found in it."""
    found = _unittest(output) or _pytest(output)
    if found:
        return found
    text = output.strip()
    return [Failure("", _cut(text))] if text else []


def _unittest(output: str) -> list[Failure]:
    out: list[Failure] = []
    for match in _UNITTEST.finditer(output):
        end = _UNITTEST_END.search(output, match.end())
        body = output[match.end() : end.start() if end else len(output)].strip("\n")
        name = match.group(1)
        frames = [f for f in _FRAME.finditer(body) if f.group(3) == name]
        file, line = (frames[-1].group(1), int(frames[-1].group(2))) if frames else (None, None)
        out.append(Failure(name, _cut(match.group(0).split("\n")[1] + "\n" + body), file, line))
    return out


def _pytest(output: str) -> list[Failure]:
    out: list[Failure] = []
    for match in _PYTEST.finditer(output):
        end = _PYTEST_END.search(output, match.end())
        body = output[match.end() : end.start() if end else len(output)].strip("\n")
        name = re.split(r"[.:]+", match.group(1))[-1].strip()
        if name and not name.startswith(("summary", "warnings")):
            out.append(Failure(name, _cut(f"{match.group(1)}\n{body}")))
    return out


def code_of_test(text: str, name: str, line: int | None = None) -> str | None:
    """The code of the function `name` in a test file's text (the one holding `line`, when given),
    dedented; None when the file does not parse or holds no such function."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.split("\n")
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name != name:
            continue
        end = node.end_lineno or node.lineno
        if line is not None and not node.lineno <= line <= end:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        body = lines[first - 1 : end]
        more = len(body) - MOST_SOURCE
        code = textwrap.dedent("\n".join(body[:MOST_SOURCE]))
        return code + (f"\n# ... ({more} more lines)" if more > 0 else "")
    return None


def _cut(text: str) -> str:
    if len(text) <= MOST_REPORT:
        return text
    return text[:MOST_REPORT].rstrip() + "\n... (cut)"
