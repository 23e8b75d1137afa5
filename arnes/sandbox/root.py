"""What of the root file system outside home a sandboxed command may read: the system, not the
user's other projects.

bubblewrap binds `/` read-only, which would leave every folder outside home readable: `/srv`,
`/work`, `/mnt`, a second disk, other users' homes, `/var/tmp`. Every top-level folder that is not
a system folder therefore gets an empty folder in its place, like the home folder, and what
commands need is bound back read-only: the interpreter arnes runs on, the virtual environment and
toolchains on PATH, the installation a workspace venv points at, the user's `read_paths` (the
workspace itself is bound by the caller). Deny generously: a folder nobody listed is hidden.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from arnes.sandbox.home import TOOLCHAIN_VARIABLES, installation, toolchain_folders, venv_prefix

# Top-level folders of the system: kept (read-only, as bound from `/`). /opt holds installed
# software (conda, vendors' toolchains), not projects; /tmp is private anyway.
SYSTEM = frozenset("bin boot dev etc lib lib32 lib64 libx32 sbin usr proc sys run tmp var opt snap nix".split())
# Folders of /var where people keep files of their own, hidden too.
VAR_HIDDEN = ("tmp", "www", "mail", "backups")


def hidden_roots(root: Path = Path("/")) -> list[Path]:
    """The folders to replace with an empty one: top-level folders but the system's, and
    /var/tmp & co. Links are left (a link's target is hidden or kept on its own)."""
    found = []
    candidates = []
    try:
        with os.scandir(root) as entries:
            candidates = [Path(e.path) for e in entries if e.name not in SYSTEM]
    except OSError:
        pass
    candidates += [root / "var" / name for name in VAR_HIDDEN]
    for path in candidates:
        if path.is_dir() and not path.is_symlink():
            found.append(path)
    return sorted(found)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def kept_under(
    roots: Iterable[Path], environ: Mapping[str, str], venvs: Iterable[Path], read_paths: Iterable[Path]
) -> list[Path]:
    """The folders under `roots` (hidden ones and the private /tmp) to bind back read-only: what
    commands run (PATH entries with their toolchain roots, the interpreter, virtual environments
    and the installation they point at) and what the user's settings list. Never a root itself."""
    roots = list(roots)
    venv = environ.get("VIRTUAL_ENV")
    wanted = [Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent.parent]
    wanted += [Path(venv)] if venv else []
    wanted += [Path(environ[v]) for v in TOOLCHAIN_VARIABLES if environ.get(v) and os.path.isabs(environ[v])]
    for raw in environ.get("PATH", "").split(os.pathsep):
        entry = Path(os.path.realpath(raw)) if raw and os.path.isabs(raw) else None
        if entry is None:
            continue
        wanted.append(entry)
        if (entry.parent / "pyvenv.cfg").is_file():  # a virtual environment's bin/: the whole venv
            wanted += venv_prefix(entry.parent)
        elif (prefix := installation(entry)) is not None:  # an interpreter's bin/: its installation
            wanted.append(prefix)
    for folder in [*venvs, *([Path(venv)] if venv else [])]:
        wanted += venv_prefix(Path(os.path.realpath(folder)))
    wanted += list(read_paths)
    kept: set[Path] = set()
    for path in wanted:
        real = Path(os.path.realpath(path))
        root = next((r for r in roots if _inside(real, r)), None)
        if root is not None and real != root:
            # a shim folder needs its versions: ~/.pyenv/shims binds ~/.pyenv (home.py's table)
            kept.update(p for p in toolchain_folders(real, root) if p != root)
    existing = sorted(p for p in kept if p.exists())
    return [p for p in existing if not any(other != p and _inside(p, other) for other in existing)]
