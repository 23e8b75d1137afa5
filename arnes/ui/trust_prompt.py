"""The question asked once per folder: trust what its project settings would grant?"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from arnes.permissions.grants import describe
from arnes.safe import visible


def grant_lines(workspace: Path, ignored: Mapping[Path, Mapping[str, object]]) -> list[str]:
    """`FILE: key = value` lines, values as escaped JSON so a file cannot redraw the terminal."""
    lines = []
    for path, grants in ignored.items():
        lines.append(describe(display(workspace, path))[1:-1])
        lines += [f"  {describe(name)[1:-1]} = {describe(value)}" for name, value in grants.items()]
    return lines


def display(workspace: Path, path: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def ask_trust(
    workspace: Path,
    ignored: Mapping[Path, Mapping[str, object]],
    changed: bool,
    read_line: Callable[[], str] | None = None,
    console: Console | None = None,
    models: Sequence[str] = (),
) -> bool:
    """Show what trusting would grant and read y/n from the terminal; anything but yes is no.
    `models`: the project's command and agent files that choose a model (`PATH: model VALUE`)."""
    c = console or Console(stderr=True, highlight=False, soft_wrap=True)
    c.print()
    c.print(Text.assemble(("? ", "bold yellow"), ("Trust this folder? ", "bold"), describe(str(workspace))[1:-1]))
    if changed:
        c.print(Text("  Its settings, hook scripts or command models changed since you trusted it.", style="yellow"))
    c.print(Text("  Untrusted, its project settings only restrict (deny, ask). Trusting it applies:", style="dim"))
    for line in grant_lines(workspace, ignored):
        c.print(Text(f"    {line}"))
    if models:
        c.print(Text("  and lets its commands and agents choose their model:", style="dim"))
        for line in models:
            c.print(Text(f"    {visible(line)}"))  # a value is repr already: escaped once
    choices = "  [y] yes, trust it (asked again when these files change) / [n] no, restrictions only: "
    c.print(choices, end="", markup=False)
    try:
        line = read_line() if read_line else sys.stdin.readline()
    except (EOFError, KeyboardInterrupt):
        return False
    return line.strip().lower() in ("y", "yes")
