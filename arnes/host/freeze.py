"""Hold every process arnes started still while arnes runs a program on the host that reads the
workspace after checking it (the git host route, tools/hostgit.py).

A check of the working tree (which files `git add -A` would store, what `.gitignore` leaves out,
which repositories are nested) is only as good as the tree staying as it was until git has read
it. Commands in the sandbox can write the workspace, and one started in the background can wait
for the check and change a file right after it. So before the check, every descendant of arnes
(the sandboxes' processes, background jobs, sandboxed MCP servers and hooks: a sandbox with its
own PID namespace keeps its orphans under it) gets SIGSTOP, and SIGCONT once the host program has
exited.

Stopping is not enough by itself: processes can SIGCONT each other while arnes goes through them,
and one can stop itself just before arnes looks (red team round 8). So the hold is *verified*:
two readings of every thread of every descendant, one after the other, must both find it stopped
with the same count of context switches, and the same processes. A thread that ran at any moment
between its two readings was switched out again, which counts; so every thread was stopped
through the instant between the two passes, when none could wake another, and a stopped thread
stays stopped until arnes sends SIGCONT. Anything else is tried again, a bounded number of times,
and then the host program is not run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

PASSES = 100  # tries at a verified hold; a fork bomb or a SIGCONT storm outruns them: then nothing runs
STOP_WAIT = 5.0  # seconds, all tries together, for the processes to be seen stopped (a disk wait takes longer)


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


Reading = dict[int, tuple[str, int]]  # thread id -> (state, context switches so far)


def _reading(pids: list[int]) -> Reading | None:
    """Every thread of `pids`: its state and how many times it has been switched out. None when
    one of them could not be read (it may have just ended: the caller reads again)."""
    out: Reading = {}
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return None
        for tid in threads:
            try:
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_bytes()
                status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            except OSError:
                return None
            state = stat[stat.rfind(b")") + 2 :].split()[0].decode()
            counts = (line.partition(":")[2] for line in status.splitlines() if line.startswith(_COUNTED))
            switches = sum(int(value) for value in counts)
            out[int(tid)] = (state, switches)
    return out


_STOPPED = ("T", "t", "Z", "X")
_COUNTED = ("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")


@contextlib.contextmanager
def held(root: int | None = None) -> Iterator[int]:
    """Stop every descendant of `root` (this process) until the block ends; yields how many.
    NotHeld when they cannot all be held still (all are sent SIGCONT then)."""
    root = os.getpid() if root is None else root
    sent: set[int] = set()
    deadline = time.monotonic() + STOP_WAIT
    try:
        for _ in range(PASSES):
            pids = descendants(root)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    sent.add(pid)
            first = _settled(pids, deadline)
            if first is None:
                break
            again = descendants(root)
            if sorted(again) == sorted(pids) and _reading(pids) == first:
                yield len(pids)
                return
        raise NotHeld("arnes's processes kept running or starting new ones, so they could not be held still")
    finally:
        for pid in sent:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def _settled(pids: list[int], deadline: float) -> Reading | None:
    """A reading in which every thread is stopped, waiting a little for SIGSTOP to land (a thread
    in a disk wait stops when it leaves it); None when that did not come by `deadline`."""
    while True:
        reading = _reading(pids)
        if reading is not None and all(state in _STOPPED for state, _ in reading.values()):
            return reading
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)
