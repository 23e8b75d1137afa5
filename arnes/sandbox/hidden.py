"""The files a Read deny or ask rule covers, found fast (ripgrep), so the sandbox can hide them."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from arnes.host.ripgrep import null_separated, ripgrep
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import anchor, parse_rule

_WILD = set("*?[")


def hidden_paths(engine: RuleEngine) -> list[Path]:
    """Files a Read deny or ask rule covers: the sandbox makes them unreadable."""
    return _covered(engine, ("Read",), lambda p: engine.hidden("Read", p))


def unwritable_paths(engine: RuleEngine) -> list[Path]:
    """Files an Edit/Write deny or ask rule covers: the sandbox keeps them read-only. A covered
    name that is a link: the folder holding it too (a bind follows the link, so the link itself
    could be swapped for one to another file; a trusted hook script reached that way is replaced)."""
    covered = _covered(engine, ("Edit", "Write"), lambda p: engine.write_covered(p))
    workspace = str(engine.workspace)
    holders = [p.parent for p in covered if p.is_symlink() and str(p.parent).startswith(workspace + "/")]
    return collapse(sorted({*covered, *holders}))


def _covered(engine: RuleEngine, tools: tuple[str, ...], judge: Callable[[Path], bool]) -> list[Path]:
    found: list[Path] = []
    ws, home = str(engine.workspace), str(engine.home)
    # Globs under the same folder share one ripgrep walk: this runs before every sandboxed command,
    # and the built-in secret rules alone are fifteen globs under the workspace.
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
        small = _small_tree_candidates(root, rests)
        found += small if small is not None else _matching(root, rests, case_insensitive=True)
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


SMALL_TREE = 2000  # entries walked in-process before ripgrep takes over


def _small_tree_candidates(root: str, rests: list[str]) -> list[Path] | None:
    """For a small tree and globs of the form `**/A[/B...]` (no `**` after the first): every file
    whose path ends in parts matching A/B... (case-insensitive), or that lies in a folder that
    does. A superset of what ripgrep would list, for the rules to judge, without starting a
    process before every command; None for other globs or a larger tree: then ripgrep walks it."""
    tails = []
    for rest in rests:
        tail = rest.removeprefix("**/")
        if tail == rest or "**" in tail:
            return None
        tails.append([part.lower() for part in tail.split("/")])
    found: list[Path] = []
    stack: list[tuple[str, tuple[str, ...], bool]] = [(root, (), False)]
    seen = 0
    while stack:
        folder, parts, inside = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        seen += len(listed)
        if seen > SMALL_TREE:
            return None
        for entry in listed:
            path = (*parts, entry.name.lower())
            hit = inside or any(_ends_with(path, tail) for tail in tails)
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, path, hit))
            elif hit and not entry.is_symlink():  # as ripgrep, which does not list links
                found.append(Path(entry.path))
    return found


def _ends_with(path: tuple[str, ...], tail: list[str]) -> bool:
    return len(path) >= len(tail) and all(
        fnmatch.fnmatchcase(part, glob) for part, glob in zip(path[-len(tail) :], tail, strict=True)
    )


def _matching(root: str, rests: list[str], *, case_insensitive: bool) -> list[Path]:
    """Files under `root` matching any of the globs (or inside a folder one matches)."""
    flag = "--iglob" if case_insensitive else "--glob"
    patterns = [arg for rest in rests for arg in (flag, rest, flag, f"{rest}/**")]
    argv = [ripgrep(), "--files", "--null", "--hidden", "--no-ignore", "--no-messages", *patterns, root]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return [Path(root)]  # could not look: hide the whole folder ("when in doubt, no")
    # Cut at NUL and kept as the bytes were (os.fsdecode): a folder named "backend\u2028" or
    # "legacy\xff" must name its own .env, not a piece of it (or crash the decoder).
    # However many there are: collapse() folds them into their folders for the command line.
    return [Path(name) for name in null_separated(done.stdout)]


# Programs a sandboxed command needs to start at all: never hidden, whatever a rule says.
NEEDED_PROGRAMS = frozenset({"bash", "sh", "env"})
_PROGRAM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def denied_programs(engine: RuleEngine, path: str) -> list[Path]:
    """The program files a deny rule names whole (`Bash(rm)`, `Bash(rm:*)`, `Bash(rm *)`): the
    sandbox hides them too, so a wrapper, a script or an interpreter the rules cannot read through
    (`prlimit rm`, `python3 -c "subprocess.run(['rm', ...])"`, a Makefile) finds no program to
    run. Only a file named as the rule names it: a multi-call binary (`rm -> coreutils`) would take
    every program with it, so it stays (the rules still judge the command)."""
    names = {name for sourced in engine.listing() if sourced.kind == "deny" and (name := _whole_command(sourced.rule))}
    found: set[Path] = set()
    folders = [f for f in (*path.split(os.pathsep), *_PROGRAM_FOLDERS) if os.path.isabs(f)]
    for name in sorted(names - NEEDED_PROGRAMS):
        for folder in folders:
            real = os.path.realpath(os.path.join(folder, name))
            if os.path.basename(real) == name and os.path.isfile(real):
                found.add(Path(real))
    return sorted(found)


def _whole_command(rule: str) -> str | None:
    """`rm` for a Bash rule that denies the command whatever its arguments, else None."""
    parsed = parse_rule(rule)
    spec = (parsed.specifier or "").strip()
    if parsed.tool != "Bash" or not spec:
        return None
    for tail in (":*", " *"):
        spec = spec.removesuffix(tail)
    name = spec.rsplit("/", 1)[-1]
    return name if name and not (_WILD & set(name)) and not any(ch.isspace() for ch in name) else None
