"""The files a Read deny or ask rule covers, found fast (ripgrep), so the sandbox can hide them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import anchor, parse_rule
from arnes.tools.search import ripgrep

LIMIT = 5000
_WILD = set("*?[")


def hidden_paths(engine: RuleEngine) -> list[Path]:
    found: list[Path] = []
    ws, home = str(engine.workspace), str(engine.home)
    for sourced in engine.listing():
        rule = parse_rule(sourced.rule)
        if sourced.kind == "allow" or rule.tool != "Read" or rule.specifier is None:
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
            found += _matching(root, rest, case_insensitive=True)
    # The rules are the judge: keep only what they really cover, in a stable order.
    unique = sorted({p for p in found if engine.hidden("Read", p)})
    return unique[:LIMIT]


def _matching(root: str, rest: str, *, case_insensitive: bool) -> list[Path]:
    flag = "--iglob" if case_insensitive else "--glob"
    argv = [ripgrep(), "--files", "--hidden", "--no-ignore", "--no-messages", flag, rest, flag, f"{rest}/**", root]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [Path(line) for line in done.stdout.splitlines()[:LIMIT] if line]
