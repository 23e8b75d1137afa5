"""Before the model says done after a change: the project's tests, and what they say back.

Measured with Qwen2.5-Coder-1.5B on the built-in evals: it "fixed" paging.py to
`start = number * size + 1`, wrote a function that never returns its third case, and said it was
done each time. Every one of those workspaces has tests the model never ran. Asked to run them,
with the call spelled out, it printed the command in a code block or said "I ran the tests and
they passed". A careful developer runs the tests before saying done. So when a turn would end
with files changed since the tests last ran, arnes runs the project's test command itself, as a
Bash call through the same permission gate, hooks and sandbox as the model's. Green: the answer
stands and no model call is spent. Red: the failure goes back to the model, a few times per user
message at most; a turn that then ends with nothing changed gets one more word.

The command is the settings' `verify.command` (the user's own, or a trusted folder's: a project's
command waits for trust, config.py), else the one the project's files suggest (host/testcmd.py
`detect`), and it runs only in bubblewrap or a trusted folder (runner.py): the tests are the
repository's code, run without the model asking. Its run may take `verify.timeout` seconds (300).
A run where no test ran ("Ran 0 tests", `[no test files]`) is neither green nor red: the answer
stands, unchecked, and the user is told so; the model is not sent to fix code nothing faulted.
A change to documentation alone runs nothing.
A verify command (`--verify`) or a caller that runs the tests itself (a checker, a team node's
verify) turns this off, and so does `--no-self-check`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arnes.host.nofollow import read_regular
from arnes.host.testcmd import Outcome, outcome, runs_tests
from arnes.messages import ToolCall, ToolResultBlock
from arnes.tools.bash import exit_code_of
from arnes.tools.processes import EXIT_LINE

MOST_RUNS = 3  # per user message: the first check and two fixes
HASHED = 16 << 20  # bytes of a changed file hashed; past that its size and time stand for the rest
DOCS = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc"})

FAILED = (
    "[arnes] You changed {files}, and the project's tests fail now (arnes ran `{command}`):\n{output}\n"
    "Fix the code (not the tests). arnes runs the tests again when you are done."
)
NONE_RAN = "the tests: none ran (`{command}`); the answer stands unchecked"
STILL_RED = (
    "[arnes] The tests failed when they last ran, and no file has changed since, so the task is not "
    "done. Read the failure above and fix the code (not the tests) with Edit. If they cannot pass, say why."
)


def result_outcome(result: ToolResultBlock) -> Outcome:
    """What a Bash call's result says of the tests it ran (host/testcmd.py `outcome`): one that is no
    error exited 0; an error names its exit code, or has none (cut off by its time limit, refused)."""
    code = exit_code_of(result.content) if result.is_error else 0
    lines = result.content.split("\n")
    if lines and lines[0].startswith(EXIT_LINE):
        lines = lines[1:]
    return outcome(code, "" if lines == ["(no output)"] else "\n".join(lines))


@dataclass
class SelfCheck:
    """What the session's tests last saw, and how often this user message ran them."""

    workspace: Path
    detect: Callable[[Path], str | None]
    changed: Callable[[], list[Path]]  # the files the session changed, by their real paths
    display: Callable[[Path], str]
    runs: int = 0
    most_runs: int = MOST_RUNS  # per user message
    _command: str | None = field(default=None, init=False)
    _detected: bool = field(default=False, init=False)
    _start: str = field(default="", init=False)  # the files when this agent started: not its changes
    _tested: str | None = field(default=None, init=False)  # ...when the tests last ran
    _red: bool = field(default=False, init=False)  # whether the last test run failed

    def __post_init__(self) -> None:
        self._start = self._fingerprint(self.changed())

    def reset(self) -> None:
        """A new message from the user: checking again is fair."""
        self.runs = 0

    def command(self) -> str | None:
        if not self._detected:  # probing is not free (it may start a Python): once a session
            self._command, self._detected = self.detect(self.workspace), True
        return self._command

    def after_tools(self, calls: list[ToolCall], results: list[ToolResultBlock]) -> None:
        """Note a test run of the model's own: what it saw, and whether it passed."""
        for call, result in zip(calls, results, strict=False):
            command = call.input.get("command") if call.name == "Bash" else None
            if not isinstance(command, str) or not runs_tests(command) or call.input.get("run_in_background"):
                continue
            seen = result_outcome(result)
            if seen != "no_tests":  # a run of nothing tested nothing: arnes's own check is still due
                self._tested, self._red = self._fingerprint(self.changed()), seen == "failed"

    def due(self) -> str | None:
        """The test command to run before this turn ends, or None: nothing this agent changed is
        untested (a sub-agent is not asked about its parent's changes), only documentation
        changed (a typo fixed in the README does not start a ten-minute suite), or no command fits."""
        if self.runs >= self.most_runs:
            return None
        changed = self.changed()
        if all(p.suffix.lower() in DOCS for p in changed):
            return None
        now = self._fingerprint(changed)
        if now in (self._start, self._tested) or self.command() is None:
            return None
        return self.command()

    def ran(self, seen: Outcome, output: str) -> str | None:
        """After arnes ran the tests: what to tell the model, or None when they passed or none
        ran (then the answer stands unchecked, and these files are not tried again)."""
        changed = self.changed()
        self.runs += 1
        self._tested, self._red = self._fingerprint(changed), seen == "failed"
        if seen != "failed":
            return None
        files = ", ".join(self.display(p) for p in changed[:4])
        return FAILED.format(files=files, command=self.command(), output=output.strip())

    def still_red(self) -> str | None:
        """For a turn ending with the tests red since they last ran (by the model or by arnes),
        and a change of this agent's own: one more word, then the answer stands."""
        if not self._red or self.runs >= self.most_runs:
            return None
        now = self._fingerprint(self.changed())
        if now != self._tested or now == self._start:
            return None
        self.runs, self._red = self.runs + 1, False  # said once: then the answer stands
        return STILL_RED

    @staticmethod
    def _fingerprint(changed: list[Path]) -> str:
        if not changed:
            return ""
        digest = hashlib.sha256()
        for path in sorted(changed):
            digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
            try:  # no link, no FIFO, and never more than HASHED bytes (a test may grow a file to GiBs)
                data, st = read_regular(path, limit=HASHED)
                rest = f"{st.st_size}:{st.st_mtime_ns}" if st.st_size > HASHED else ""
                digest.update(hashlib.sha256(data).digest() + rest.encode())
            except OSError:
                digest.update(b"gone")
        return digest.hexdigest()
