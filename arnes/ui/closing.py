"""A run's closing in the text format (the `RunClosed` event, after the `[end_turn] ...` line): what
shell commands changed beyond the files named, the files changed and their diffs, and, when no
model answered, how to configure one, on stderr. Names and diffs are the commands' and the
files' choice, so they pass `visible()`."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console

from arnes.agent.events import RunClosed, ShellChanges
from arnes.permissions.approvers import show_diff
from arnes.safe import visible


def shell_lines(shell: ShellChanges) -> list[str]:
    """What the closing says of shell commands' changes beyond the list of files."""
    lines = []
    if shell.runs_code:
        lines.append("files that run code later, written by shell commands: " + ", ".join(shell.runs_code))
    if shell.ignored:
        counts = ", ".join(f"{folder} {n}" for folder, n in sorted(shell.ignored.items()))
        lines.append(
            f"also changed by shell commands, in ignored folders: {sum(shell.ignored.values())} files ({counts})"
        )
    if shell.setid_removed:
        lines.append("setuid/setgid bits removed from: " + ", ".join(shell.setid_removed))
    if not shell.tracked:
        lines.append("changes by shell commands not tracked: the workspace has too many files to watch")
    return lines


def show_closing(console: Console, errors: TextIO, event: RunClosed) -> None:
    for line in shell_lines(event.shell_changes):
        console.print(visible(line), markup=False)
    if event.files_changed:
        console.print(f"files changed: {visible(', '.join(event.files_changed))}", markup=False)
        for diff in event.diffs or []:
            if diff:
                show_diff(console, diff)
    if event.no_model is not None:
        print(visible(event.no_model), file=errors)
