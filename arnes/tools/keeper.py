"""The keeper of one background command: everything the command starts ends with it, and with arnes.

Run by tools/processes.py as `python -I -S keeper.py LIFELINE_FD -- CMD...` (standard library
only, nothing of arnes, the workspace not on sys.path). A process group is not enough: a process
that leaves it (`setsid`, a daemon's double fork) outlived KillShell and the session, and with
`--sandbox off` every background process outlived an arnes that was killed or crashed. The keeper
is the child subreaper of what it starts (PR_SET_CHILD_SUBREAPER: an orphan anywhere below it
becomes its child, whatever session it made), and it kills and reaps every descendant when

- the command's first process exits (as a bubblewrap sandbox ends with its command), or
- arnes's end of the lifeline pipe closes: arnes ended, however it ended (SIGKILL, a crash, a
  closed terminal), or it stopped this job (KillShell, the session's end).

It then exits as the command did (the same code, or the same signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36


def _descendants(root: int) -> list[int]:
    """Every process below `root` (by parent links in /proc), zombies included."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                data = stat.read()
            parent = int(data[data.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(parent, []).append(int(name))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def end_all() -> None:
    """Kill every descendant and reap them; one that appears meanwhile is found on the next round
    (its parent's death made it this process's child)."""
    me = os.getpid()
    while True:
        below = _descendants(me)
        if not below:
            return
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> None:
    lifeline = int(argv[0])
    command = argv[argv.index("--") + 1 :]
    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.set_inheritable(lifeline, False)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # only to wake the select below
    try:
        first = os.posix_spawnp(command[0], command, dict(os.environ), setsigdef=(signal.SIGCHLD,))
    except OSError as exc:
        os.write(2, f"arnes: cannot start {command[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    status: int | None = None
    while status is None:
        ready, _, _ = select.select([lifeline, wake_read], [], [])
        if lifeline in ready:  # arnes is gone, or stopped this job: killed, as a group kill would say
            end_all()
            os.kill(os.getpid(), signal.SIGKILL)
        os.read(wake_read, 512)
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == first:
                status = code
    end_all()
    assert status is not None
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
