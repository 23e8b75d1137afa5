"""One failing test at a time, asked in a conversation without the attempts that failed.

Measured on held-out Exercism exercises with Qwen2.5-Coder-1.5B decoded greedily: shown the red
run after its first attempt, the model sent the same file back, word for word, in every one of
ten sessions that ended red before their time was up (bench/README.md). Its own reply sits in
the conversation just above the failure, and a small model copies what it sees. So after such a
repeat the conversation goes back to before the turn's first attempt (what the model read
stays), and one message takes the place of the attempts: the failing test's own code, what the
runner said of it, and the files as they are now. Each repeat takes the next failing test; a
test is asked about again only once the files have changed. Decoding stays greedy: the question
is new, not the dice.

This module is the bookkeeping and the message (no Session, no loop).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from arnes.adapt.failures import Failure, code_of_test, failures
from arnes.adapt.phrasing import for_format
from arnes.agent.named import fenced

MOST = 6  # focused asks per user message

ASK = (
    "[arnes] The tests still fail. Take one failing test at a time; this is {which}.\n\n"
    "{test}The runner said:\n```\n{report}\n```\n\n"
    "{files_now}\n\n{files}\n\n"
    "Find what this test expects that the code does not do yet, then fix the code (not the tests) with Edit. "
    "Keep what already works."
)


@dataclass
class Focusing:
    """Per user message: how many focused asks were made, and which test was asked about on which files."""

    most: int = MOST
    made: int = 0
    tried: set[tuple[str, str]] = field(default_factory=set)

    def new_turn(self) -> None:
        self.made = 0
        self.tried.clear()

    def ask(
        self, output: str, files: dict[str, str], read: Callable[[str], str | None], edit_format: str, workspace: str
    ) -> tuple[str, str] | None:
        """The next focused message, and a line for the user, for a red run's `output` and the
        changed `files` (shown path -> text); None when none is left, or every failing test was
        asked about on these very files. `read` gives a test file's text by the path the
        traceback names (None: not to be shown)."""
        if self.made >= self.most or not files:
            return None
        found = failures(output.replace(workspace.rstrip("/") + "/", ""))
        state = _digest(files)
        at = next((i for i, f in enumerate(found) if (f.name, state) not in self.tried), None)
        if at is None:
            return None
        failure = found[at]
        self.tried.add((failure.name, state))
        self.made += 1
        which = f"test {at + 1} of the {len(found)} that fail" if failure.name else "the run's output"
        names = ", ".join(files)
        text = ASK.format(
            which=which,
            test=_test(failure, read),
            report=failure.report,
            files_now=f"{names} now hold{'s' if len(files) == 1 else ''}:",
            files="\n\n".join(fenced(path, text) for path, text in files.items()),
        )
        said = f"one failing test at a time: {failure.name} ({which})" if failure.name else "the failure alone"
        return for_format(text, edit_format), said + "; the conversation goes back to before the first attempt"


def _test(failure: Failure, read: Callable[[str], str | None]) -> str:
    """The failing test's code, under its file's name, or nothing when it cannot be shown."""
    if not failure.name or failure.file is None:
        return ""
    text = read(failure.file)
    code = code_of_test(text, failure.name, failure.line) if text is not None else None
    if code is None:
        return ""
    return f"The test, from {PurePosixPath(failure.file).name}:\n{fenced(failure.file, code, path=False)}\n\n"


def _digest(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + files[path].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()
