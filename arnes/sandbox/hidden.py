"""The files a Read deny or ask rule covers, found fast (ripgrep), so the sandbox can hide them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import anchor, parse_rule
from arnes.tools.ripgrep import ripgrep

_WILD = set("*?[")


def hidden_paths(engine: RuleEngine) -> list[Path]:
    """Files a Read deny or ask rule covers: the sandbox makes them unreadable."""
    return _covered(engine, ("Read",), lambda p: engine.hidden("Read", p))


def unwritable_paths(engine: RuleEngine) -> list[Path]:
    """Files an Edit/Write deny or ask rule covers: the sandbox keeps them read-only."""
    return _covered(engine, ("Edit", "Write"), lambda p: engine.write_covered(p))


def _covered(engine: RuleEngine, tools: tuple[str, ...], judge: Callable[[Path], bool]) -> list[Path]:
    found: list[Path] = []
    ws, home = str(engine.workspace), str(engine.home)
    # Globs under the same folder share one ripgrep walk: this runs before every sandboxed command,
    # and the built-in secret rules alone are thirteen globs under the workspace.
    globs: dict[str, list[str]] = {}
    for sourced in engine.listing():
        rule = parse_rule(sourced.rule)
        if sourced.kind == "allow" or rule.tool not in tools or rule.specifier is None:
            continue
        glob = anchor(rule.specifier, ws, home)
        parts = glob.split("/")
        fixed = next((i for i, part in enumerate(parts) if _WILD & set(part)), len(parts))
        root = "/".join(parts[:fixed]) or "/"
        if fixed == len(parts):
            if os.path.lexists(root):
                found.append(Path(root))
            continue
        rest = "/".join(parts[fixed:])
        if rest in ("**", "**/*"):
            if os.path.isdir(root):
                found.append(Path(root))
            continue
        if os.path.isdir(root):
            globs.setdefault(root, []).append(rest)
    for root, rests in globs.items():
        found += _matching(root, rests, case_insensitive=True)
    # The rules are the judge: keep only what they really cover, in a stable order.
    unique = sorted({p for p in found if judge(p)})
    return collapse(unique)


def collapse(paths: list[Path], most: int = 500) -> list[Path]:
    """Too many paths for one bwrap command line: cover their folders instead (hides more, never less)."""
    while len(paths) > most:
        parents = sorted({p.parent for p in paths})
        if parents == paths:
            break
        paths = parents
    return paths


def _matching(root: str, rests: list[str], *, case_insensitive: bool) -> list[Path]:
    """Files under `root` matching any of the globs (or inside a folder one matches)."""
    flag = "--iglob" if case_insensitive else "--glob"
    patterns = [arg for rest in rests for arg in (flag, rest, flag, f"{rest}/**")]
    argv = [ripgrep(), "--files", "--hidden", "--no-ignore", "--no-messages", *patterns, root]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return [Path(root)]  # could not look: hide the whole folder ("when in doubt, no")
    # However many there are: collapse() folds them into their folders for the command line.
    return [Path(line) for line in done.stdout.splitlines() if line]
