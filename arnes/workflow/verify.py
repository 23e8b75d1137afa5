"""The verify command: the tests are the truth, not the model's word.

Which command fits a project, and what a finished run says, is host/testcmd.py's job (below the
agent, which runs the tests too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arnes.agent.run_context import Verdict as Said
from arnes.host.testcmd import names_a_runner, outcome, says_failed
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
    # exit 0 passes, unless a test runner's own summary in the output counts a failure (the code
    # under test can end its runner with exit 0 after that summary), or, for a command that runs
    # a test runner, the output says none ran or none passed (it printed nothing, or every test skipped)
    passed = done.exit_code == 0 and not says_failed(text)
    if passed and names_a_runner(command):
        passed = outcome(done.exit_code, text) == "passed"
    return Verdict(command, passed, done.exit_code, text[-OUTPUT_CAP:], done.seconds)


@dataclass
class Verifier:
    """Run after the model ends its turn; a red result goes back to the model, a few rounds at most."""

    command: str
    workspace: Path
    sandbox: Sandbox | None = None
    rounds: int = 3

    def check(self) -> Verdict:
        return run_check(self.command, self.workspace, self.sandbox)

    def feedback(self, verdict: Said, round_no: int) -> str:
        """What the model is told of a red round (the loop knows the verifier only through the session)."""
        return (
            f"The verification command `{verdict.command}` failed (exit {verdict.exit_code}; round {round_no} of "
            f"{self.rounds}). Your work is not done until it passes. Fix the cause, not the test. Its output:\n"
            f"{verdict.output}"
        )
