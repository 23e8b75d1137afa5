"""The command server inside a session's bubblewrap sandbox: it forks each shell command in the
namespace that was built once, instead of a new bubblewrap per command.

Run as `python -I -S -c <read and run CODE_FD> CODE_FD SOCKET_FD CONFIG_JSON` by arnes.sandbox.zygote, as
process 1 of the sandbox's PID namespace (bwrap --as-pid-1), so nothing it starts can signal it:
the kernel drops every signal sent to a namespace's init from inside unless init handles it, and
this one handles none. It is not dumpable, so no command can ptrace it or open its descriptors
through /proc. Standard library only, and nothing of arnes: it runs before anything is importable.

One command at a time. A request is a JSON object (argv, cwd, env) with the command's stdout and
stderr pipes attached (SCM_RIGHTS over the socketpair arnes made before bwrap started; the seccomp
filter refuses creating a Unix socket, not using an inherited one). The answer is {"exit": CODE}
once the command has ended and every process it left behind is killed and reaped, and the
sandbox's own tmpfs folders (/tmp, the empty home, /run, /dev) hold again only what they held at
the start: each command begins as a fresh bubblewrap would give it. "What they held" is compared
by type, permission bits, device and inode and a link's target, not by name: an entry a command
replaced under the same name (/dev/stdout made a link to a file of its choosing) is put back; one
that cannot be (a file's content, a device node) makes the answer say "stale": true, and arnes
starts a new sandbox for the next command. A tmpfs folder's own permission bits are put back
first (a command that made /tmp or the empty home read-only does not keep its files there), and
what cannot be removed makes the answer "stale" too. System V IPC objects (shared memory, message
queues, semaphores) a command made are removed, as are its POSIX message queues (/dev/mqueue);
one that cannot be removed makes the answer "stale": the sandbox's IPC namespace dies with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import stat
import sys
from typing import Any

_PR_SET_DUMPABLE = 4
_CATCHABLE = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]


# What an entry was: its type and permission bits, device and inode, a link's target, and a
# regular file's change time (a write in place keeps the inode; no command can set ctime back).
# Names alone are not enough: a command could replace a pre-existing entry (/dev/stdout, a link
# bwrap made) with its own under the same name, and every later command would see it.
Mark = tuple[int, int, int, str | None, int]


def _mark(path: str, st: os.stat_result) -> Mark:
    target = None
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
    changed = st.st_ctime_ns if stat.S_ISREG(st.st_mode) else 0
    return (st.st_mode, st.st_dev, st.st_ino, target, changed)


def _entries(root: str, keep_off: set[int]) -> dict[str, Mark]:
    """`root` and every path under it on root's own file system (bind mounts inside are not
    entered, but are marked), with its mark; nothing when root is on a device in `keep_off` (the
    workspace's, the host root's): only the sandbox's own tmpfs folders are ever cleaned."""
    found: dict[str, Mark] = {}
    try:
        st = os.lstat(root)
    except OSError:
        return found
    device = st.st_dev
    if device in keep_off:
        return found
    found[root] = _mark(root, st)
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path] = _mark(entry.path, st)
            if stat.S_ISDIR(st.st_mode) and st.st_dev == device:
                stack.append(entry.path)
    return found


def _open_up(folder: str) -> None:
    """Give back write and search bits on a folder a command made and everything in it (made
    read-only or unreadable, it would keep its files)."""
    stack = [folder]
    while stack:
        here = stack.pop()
        with contextlib.suppress(OSError):
            os.chmod(here, 0o700, follow_symlinks=False)
            stack += [e.path for e in os.scandir(here) if e.is_dir(follow_symlinks=False)]


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            _open_up(path)
            shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _put_back(path: str, mark: Mark) -> Mark | None:
    """Make `path` again what the mark says, where that can be done (a link, a folder, a folder's
    permission bits); its new mark, or None when it cannot (a file's content, a device node, a
    mount point) and only a new sandbox gives the command its fresh start."""
    mode, device, inode, target, _changed = mark
    try:
        now = os.lstat(path)
    except OSError:
        now = None
    if now is not None and stat.S_ISDIR(mode) and (now.st_dev, now.st_ino) == (device, inode):
        if not stat.S_ISDIR(now.st_mode):
            return None
        os.chmod(path, stat.S_IMODE(mode), follow_symlinks=False)  # the same folder, other bits
    elif stat.S_ISLNK(mode) and target is not None:
        if now is not None:
            _remove(path)
        os.symlink(target, path)
    elif stat.S_ISDIR(mode):
        if now is not None:
            _remove(path)
        os.mkdir(path)
        os.chmod(path, stat.S_IMODE(mode))
    else:
        return None
    return _mark(path, os.lstat(path))


def _restore(roots: dict[str, dict[str, Mark]], keep_off: set[int]) -> bool:
    """Remove what commands created in the tmpfs folders since the start and put back what they
    replaced, removed or changed; False when something cannot be put back (then the caller
    retires this sandbox). A folder is back (and its permission bits) before what was in it."""
    whole = True
    for root, before in roots.items():
        if root in before:  # its own bits first: a root made read-only or unreadable keeps what is in it
            with contextlib.suppress(OSError):
                os.chmod(root, stat.S_IMODE(before[root][0]))
        now = _entries(root, keep_off)
        for path in sorted(p for p, mark in before.items() if now.get(p) != mark):  # a folder first
            try:
                back = _put_back(path, before[path])
            except OSError:
                back = None
            if back is None:
                whole = False
            else:
                before[path] = back  # the new inode of the same thing: the next command compares to it
        made = now.keys() - before.keys()
        for path in sorted(made, key=len):
            if os.path.lexists(path):  # else inside a folder removed just before
                _remove(path)
        if made and _entries(root, keep_off).keys() - before.keys():
            whole = False  # something a command made is still there
    return whole


_IPC_RMID = 0
_IPC_KINDS = ("shm", "msg", "sem")  # System V IPC, as /proc/sysvipc lists each kind for this namespace


def _ipc_ids(kind: str) -> list[int]:
    try:
        with open(f"/proc/sysvipc/{kind}") as listing:
            lines = listing.read().splitlines()[1:]
    except OSError:
        return []
    return [int(line.split()[1]) for line in lines if len(line.split()) > 1 and line.split()[1].isdigit()]


def _clear_ipc(libc: Any) -> bool:
    """Remove the System V IPC objects commands made (the sandbox's namespace began with none);
    False when one is left (it then dies with the sandbox, which arnes retires)."""
    for ident in _ipc_ids("shm"):
        libc.shmctl(ident, _IPC_RMID, None)
    for ident in _ipc_ids("msg"):
        libc.msgctl(ident, _IPC_RMID, None)
    for ident in _ipc_ids("sem"):
        libc.semctl(ident, 0, _IPC_RMID)
    return not any(_ipc_ids(kind) for kind in _IPC_KINDS)


def _end_everything() -> None:
    """Kill every process in the namespace but this one (kill(-1) spares the caller and init) and
    reap them all, orphans included (they are this process's children now)."""
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _exit_code(status: int) -> int:
    """As bubblewrap reports it: the exit status, or 128 + the signal that ended the command."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _run(request: dict[str, Any], out: int, err: int) -> int:
    argv = [str(a) for a in request["argv"]]
    env = {str(k): str(v) for k, v in request["env"].items()}
    for fd in (out, err):
        os.set_inheritable(fd, False)  # the command gets them as 1 and 2 only
    try:
        os.chdir(str(request["cwd"]))
        program = shutil.which(argv[0], path=env.get("PATH", os.defpath)) or argv[0]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, err, 2),
        ]
        pid = os.posix_spawn(program, argv, env, file_actions=actions, setsid=True, setsigdef=_CATCHABLE, setsigmask=())
    except OSError as exc:
        os.write(err, f"arnes sandbox: cannot start {argv[0]} in {request['cwd']}: {exc.strerror}\n".encode())
        return 1
    finally:
        os.close(out)
        os.close(err)
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            return _exit_code(status)


def main(fd: int, config_json: str) -> None:
    for number in _CATCHABLE:  # no handler: signals from inside the namespace never reach init
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_IGN if number == signal.SIGPIPE else signal.SIG_DFL)
    libc = ctypes.CDLL(None)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    channel = socket.socket(fileno=fd)
    channel.set_inheritable(False)
    config = json.loads(config_json)
    keep_off = {os.stat(path).st_dev for path in config["keep"]}
    roots = {root: _entries(root, keep_off) for root in config["clean"]}
    channel.send(b'{"ready": true}')
    stale = False  # something a command changed could not be put back: arnes retires this sandbox
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(channel, 1 << 20, 2)
        except OSError:
            return
        if not message:
            return  # arnes closed its end: the session is over
        for extra in fds[2:]:
            os.close(extra)
        if len(fds) < 2:
            for stray in fds:
                os.close(stray)
            channel.send(b'{"error": "a request came without its output pipes"}')
            continue
        if stale:
            for stray in fds:
                os.close(stray)
            channel.send(b'{"error": "this sandbox is retired: start a new one"}')
            continue
        code = _run(json.loads(message), fds[0], fds[1])
        _end_everything()
        stale = not _restore(roots, keep_off)
        stale = not _clear_ipc(libc) or stale
        channel.send(json.dumps({"exit": code, "stale": stale}).encode())


if __name__ == "__main__":
    main(int(sys.argv[2]), sys.argv[3])
