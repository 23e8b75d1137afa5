"""The empty, unreadable stand-ins bubblewrap binds over hidden files and folders, and the empty
read-only folder the user's own MCP servers start in (`neutral_folder`).

They live in the user's cache folder, made once and reused, so a session leaves nothing behind
in the temporary folder (a temporary copy per session outlived every crash and kill). They are
checked before each use: a stand-in swapped for a link (say by a command run with `--sandbox
off`) would bind the link's target over a secret, so anything unexpected is made anew.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arnes.errors import ConfigError


def cache_folder(environ: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "arnes" / "sandbox"


@dataclass(frozen=True)
class Placeholders:
    hidden_file: Path  # mode 000: reading it fails with "Permission denied"
    hidden_dir: Path  # mode 000
    empty_file: Path  # mode 444, empty: a read-only stand-in for a file that must not be created
    # mode 555, empty: a read-only stand-in for a folder that must not be created (.claude/commands),
    # and the working folder of the user's own servers: nothing in it for `python -m`, npx, uv
    empty_dir: Path


_SPECS = (
    ("hidden-file", False, 0o000),
    ("hidden-dir", True, 0o000),
    ("empty-file", False, 0o444),
    ("empty-dir", True, 0o555),
)


def _is_right(path: Path, is_dir: bool, mode: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    kind_ok = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode) and st.st_size == 0
    if not (kind_ok and stat.S_IMODE(st.st_mode) == mode and st.st_uid == os.getuid()):
        return False
    if not is_dir:
        return True
    try:  # a file planted in a readable one would be found there (`python -m NAME` in a server)
        return st.st_nlink == 2 and (mode == 0 or not os.listdir(path))
    except OSError:
        return False


def _writable_and_again(func: Callable[..., object], path: str, _exc: object) -> None:
    """rmtree's retry for a folder planted read-only inside a stand-in."""
    os.chmod(os.path.dirname(path), 0o700)
    func(path)


def _make(folder: Path, name: str, is_dir: bool, mode: int) -> None:
    """Create next to the final name, then rename over it: a concurrent session sees old or new."""
    tmp = folder / f".{name}.{uuid.uuid4().hex[:8]}"
    if is_dir:
        tmp.mkdir(mode=0o700)
    else:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    os.chmod(tmp, mode)
    target = folder / name
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, 0o700)  # a tampered stand-in: empty it first
            shutil.rmtree(target, onerror=_writable_and_again)
        else:
            os.unlink(target)
    os.replace(tmp, target)


def ensure(folder: Path) -> Placeholders:
    """The stand-ins in `folder`, made or repaired as needed."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise ConfigError(f"{folder} is not a folder of yours; remove it so the sandbox can make it again")
        for name, is_dir, mode in _SPECS:
            if not _is_right(folder / name, is_dir, mode):
                _make(folder, name, is_dir, mode)
    except OSError as exc:
        raise ConfigError(
            f"cannot prepare the sandbox's placeholders in {folder}: {exc.strerror or exc}; "
            "set XDG_CACHE_HOME to a writable folder or use --sandbox off"
        ) from exc
    return Placeholders(folder / "hidden-file", folder / "hidden-dir", folder / "empty-file", folder / "empty-dir")


def still_right(p: Placeholders) -> bool:
    paths = (p.hidden_file, p.hidden_dir, p.empty_file, p.empty_dir)
    return all(_is_right(path, is_dir, mode) for path, (_, is_dir, mode) in zip(paths, _SPECS, strict=True))


def neutral_folder() -> Path:
    """Where the user's own MCP servers start: an empty folder nobody but the user can write (every
    sandbox shows it at the same path), not the workspace, whose files `python -m NAME`, npx and uv
    would otherwise find first. Raises ConfigError when it cannot be made."""
    return ensure(cache_folder()).empty_dir
