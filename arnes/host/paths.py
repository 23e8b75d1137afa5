"""Real paths: what a path finally points at, so that a link cannot dodge a rule or the perimeter."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping, MutableMapping
from pathlib import Path


def absolute(workspace: Path, path: str | Path) -> Path:
    """The path as written, made absolute against the workspace and normalised (`..` folded)."""
    expanded = os.path.expanduser(str(path))
    joined = expanded if os.path.isabs(expanded) else os.path.join(workspace, expanded)
    return Path(os.path.normpath(joined))


def resolve_real(path: Path) -> Path:
    """Resolve symlinks; follow dangling links to their target; append missing tails.

    A write to a path that does not exist yet is judged by its deepest existing ancestor, so a
    linked folder pointing outside is still outside; a dangling link is judged by where a write
    through it would land. This is exactly where `atomic_write` puts the bytes (it writes to
    `os.path.realpath`), so the perimeter and the write cannot disagree: a link's target is taken
    relative to the link's real folder and `..` in it applies after resolving what precedes it.
    Link loops end (the loop is left unresolved, and a write through it fails).
    """
    return Path(os.path.realpath(path))


def is_inside(root: Path, path: Path) -> bool:
    """True when `path` is `root` or below it, by whole components (`/ws-other` is not in `/ws`)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def inside_str(root: str, path: str) -> bool:
    """`is_inside` on normalised strings, for the hot path of a decision."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def real_path(path: str, real_root: str | None = None) -> str:
    """`os.path.realpath` of a normalised absolute path, faster below a root known to be real.

    Below `real_root` only the components under it are checked: if none is a link, the path is
    already real; if one is missing, nothing below it can be a link. On the first link (or any
    doubt) it falls back to the full `os.path.realpath`.
    """
    if real_root and path.startswith(real_root.rstrip("/") + "/"):
        current = real_root.rstrip("/")
        for part in path[len(current) + 1 :].split("/"):
            current = f"{current}/{part}"
            try:
                mode = os.lstat(current).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return path
            except OSError:
                break
            if stat.S_ISLNK(mode):
                break
        else:
            return path
    return os.path.realpath(path)


def search_path(value: str, away_from: Path | None = None) -> str:
    """A search path (PATH, PYTHONPATH) with its relative and empty entries left out (run in the
    workspace, they would name the repository's files) and, given `away_from`, every entry inside
    that folder: a program of the user's started on the host must not find one a sandboxed
    command could have written there (an activated `.venv/bin` in the workspace)."""
    real = resolve_real(away_from) if away_from is not None else None
    kept = []
    for entry in value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        if real is not None and is_inside(real, resolve_real(Path(entry))):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


SEARCH_PATHS = ("PATH", "PYTHONPATH", "NODE_PATH")


def user_program_env(env: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """The environment of a program of the user's own (a hook from the user's settings) that runs
    in the workspace: it must not pick up the repository's files by accident. `python -m NAME`
    and `python -c` do not put the working folder on sys.path (PYTHONSAFEPATH, Python 3.11+),
    and PATH, PYTHONPATH and NODE_PATH keep only absolute entries outside the workspace (a
    sandboxed command may have written a program into an activated `.venv/bin`)."""
    fixed = {name: search_path(env[name], workspace) for name in SEARCH_PATHS if name in env}
    return {**env, **fixed, "PYTHONSAFEPATH": "1"}


# The dynamic loader's and glibc's search variables: a program arnes starts on the host (git,
# ripgrep, bubblewrap itself) loads code from every folder they name, before any sandbox exists.
LOADER_VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT", "GCONV_PATH")


def loader_outside(environ: MutableMapping[str, str], workspace: Path) -> list[str]:
    """Leave out of the loader's variables in `environ` every empty or relative entry (the folder
    a program starts in, often the workspace) and every entry inside `workspace` (writable by
    sandboxed commands: a `libz.so.1` copied into `build/lib` would run in arnes's own git);
    the entries left out that were not empty. Done once on arnes's own environment at start-up,
    so every program it starts, on the host or in the sandbox, gets the same: a command that
    needs `build/lib` sets it itself (`LD_LIBRARY_PATH=build/lib ./app`)."""
    dropped, root = [], resolve_real(workspace)
    for name in LOADER_VARIABLES:
        value = environ.get(name)
        if value is None:
            continue
        entries = value.replace(" ", ":").split(":") if name == "LD_PRELOAD" else value.split(":")
        kept = [e for e in entries if os.path.isabs(e) and not is_inside(root, resolve_real(Path(e)))]
        dropped += [f"{name}: {e}" for e in entries if e and e not in kept]
        if ":".join(kept) != value:
            if kept:
                environ[name] = ":".join(kept)
            else:
                del environ[name]
    return dropped


# Where arnes looks for the programs it runs itself on the host (git, ripgrep): PATH without the
# workspace's folders, set once at start-up (`note_host_path`). An activated `.venv/bin` in the
# workspace is on PATH, and a sandboxed command may write a `git` there; found on PATH, arnes's
# own git would run it on the host, outside every sandbox, at the next session's first command.
HOST_PATH = "ARNES_HOST_PATH"


def note_host_path(environ: MutableMapping[str, str], workspace: Path) -> None:
    """Record in `environ` the search path for arnes's own host programs: PATH away from `workspace`."""
    environ[HOST_PATH] = search_path(environ.get("PATH", os.defpath), away_from=workspace)


def host_program(name: str) -> str | None:
    """The program arnes runs on the host itself (`git`, `rg`), found away from the workspace when
    start-up recorded where that is, else on PATH without relative or empty entries."""
    found = os.environ.get(HOST_PATH)
    return shutil.which(name, path=found if found is not None else search_path(os.environ.get("PATH", os.defpath)))
