"""Hold every process arnes started still while arnes runs a program on the host that reads the
workspace after checking it (the git host route, tools/hostgit.py).

A check of the working tree (which files `git add -A` would store, what `.gitignore` leaves out,
which repositories are nested) is only as good as the tree staying as it was until git has read
it. Commands in the sandbox can write the workspace, and one started in the background can wait
for the check and change a file right after it. So before the check, every descendant of arnes
(the sandboxes' processes, background jobs, sandboxed MCP servers and hooks: a sandbox with its
own PID namespace keeps its orphans under it) gets SIGSTOP, which no process can catch or block,
and SIGCONT once the host program has exited. A process forked while the first ones are being
stopped is found on the next pass; the passes end when one finds nothing new.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

PASSES = 100  # a fork bomb would outrun this: then nothing runs on the host
STOP_WAIT = 5.0  # seconds for every stopped process to be seen stopped (one in a disk wait takes longer)


class NotHeld(RuntimeError):
    """The processes could not all be held still: the host program must not run."""


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (the 4th field of stat, after the name in parentheses)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def descendants(root: int) -> list[int]:
    """The processes below `root`, nearest first."""
    tree, out, todo = _children(), [], [root]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "gone"
    return stat[stat.rfind(b")") + 2 :].split()[0].decode()


@contextlib.contextmanager
def held(root: int | None = None) -> Iterator[int]:
    """Stop every descendant of `root` (this process) until the block ends; yields how many.
    NotHeld when they cannot all be stopped (nothing is left stopped then)."""
    root = os.getpid() if root is None else root
    stopped: list[int] = []
    try:
        for _ in range(PASSES):
            fresh = [pid for pid in descendants(root) if pid not in stopped]
            if not fresh:
                break
            for pid in fresh:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
        else:
            raise NotHeld("arnes's processes kept starting new ones, so they could not be held still")
        deadline = time.monotonic() + STOP_WAIT
        waiting = [pid for pid in stopped if _state(pid) not in ("T", "t", "Z", "X", "gone")]
        while waiting:
            if time.monotonic() > deadline:
                raise NotHeld(f"process {waiting[0]} did not stop within {STOP_WAIT:g} s")
            time.sleep(0.005)
            waiting = [pid for pid in waiting if _state(pid) not in ("T", "t", "Z", "X", "gone")]
        yield len(stopped)
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
