"""Running shell commands: process groups that die whole, output kept as head + tail, and the
background jobs a session owns (killed when it ends)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from arnes.sandbox.base import Started


@dataclass
class CappedOutput:
    """Keeps the first and the last bytes of a stream and counts what fell in between."""

    head_cap: int
    tail_cap: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode(errors="replace")
        if cut <= 0:
            return head + self.tail.decode(errors="replace")
        note = f"\n... [{cut} bytes cut from the middle; redirect to a file and Read or Grep it] ...\n"
        return head + note + self.tail.decode(errors="replace")


def _pump(stream: IO[bytes], sink: CappedOutput | list[bytes], lock: threading.Lock) -> None:
    for chunk in iter(lambda: stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536), b""):
        with lock:
            if isinstance(sink, list):
                sink.append(chunk)
            else:
                sink.add(chunk)
    stream.close()


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write a command's input and close it; a command that does not read it is no error."""
    with contextlib.suppress(OSError):
        stream.write(data)
    with contextlib.suppress(OSError):
        stream.close()


def spawn(
    argv: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    stdin: int = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start in a new session so that the whole process group can be killed at once."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C while a process group starts, and deliver it when the block ends.

    A SIGINT inside `Popen` (after the fork) or before the caller's `try` would escape with the group
    still running: a child outliving Ctrl-C, seen under load. The caller enters this inside the `try`
    that kills the group, so the held Ctrl-C arrives where it is handled. Signal handlers belong to the
    main thread; elsewhere there is nothing to hold.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, None)


@dataclass
class Finished:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


EXIT_LINE = "exit code: "  # a finished command's result starts with it; a timed-out one does not


def result_lines(done: Finished, timeout: float) -> list[str]:
    """A foreground command's result as the model reads it: the exit code (or the time-out),
    then its output and its errors."""
    if done.timed_out:
        parts = [f"Timed out after {timeout:g} s; the command and its children were killed."]
    else:
        parts = [f"{EXIT_LINE}{done.exit_code}"]
    if done.stdout:
        parts.append(done.stdout.rstrip("\n"))
    if done.stderr:
        parts.append("[stderr]\n" + done.stderr.rstrip("\n"))
    if not done.stdout and not done.stderr:
        parts.append("(no output)")
    return parts


class Group:
    """A Popen seen as a Started: its kill is the kill of its process group."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.stdout, self.stderr = proc.stdout, proc.stderr

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def wait(self) -> int:
        return self.proc.wait()

    def kill_group(self) -> None:
        kill_group(self.proc)


def run_foreground(
    argv: list[str],
    cwd: Path,
    timeout: float,
    cap: int,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    stdin: bytes | None = None,
) -> Finished:
    """Run to the end or to the time-out; on time-out or Ctrl-C the whole group dies.

    `stdin`, when given, is written to the command's standard input (a hook reads its event there)."""
    piped = () if stdin is None else (subprocess.PIPE,)
    return run_started(lambda: Group(spawn(argv, cwd, env, pass_fds, *piped)), timeout, cap, stdin)


def run_started(start: Callable[[], Started], timeout: float, cap: int, stdin: bytes | None = None) -> Finished:
    """Start (a process group, or a command in the session's sandbox) and run to the end or to the
    time-out; on time-out or Ctrl-C everything it started dies. `stdin` is fed to its input pipe."""
    started = time.monotonic()
    out, err = CappedOutput(cap * 2 // 5, cap * 3 // 5), CappedOutput(cap // 5, cap // 5)
    lock = threading.Lock()
    fired = threading.Event()
    # A timer kills the group at the deadline, so the wait below blocks without polling
    # (Popen.wait(timeout) sleeps in growing steps and makes short commands finish late).
    timer: threading.Timer | None = None
    proc: Started | None = None
    try:  # whatever happens from here (Ctrl-C included), the whole group dies
        with sigint_deferred():  # a Ctrl-C held during the start arrives inside this try
            proc = start()
        assert proc.stdout is not None and proc.stderr is not None
        started_proc = proc
        pumps = [
            threading.Thread(target=_pump, args=(s, b, lock), daemon=True)
            for s, b in ((proc.stdout, out), (proc.stderr, err))
        ]
        feed = proc.proc.stdin if isinstance(proc, Group) else None  # only a Popen started with a pipe has one
        if stdin is not None and feed is not None:
            pumps.append(threading.Thread(target=_feed, args=(feed, stdin), daemon=True))
        for pump in pumps:
            pump.start()

        def expire() -> None:
            fired.set()
            started_proc.kill_group()

        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        proc.wait()
    except BaseException:
        if proc is not None:
            proc.kill_group()
            proc.wait()
        raise
    finally:
        if timer is not None:
            timer.cancel()
    timed_out = fired.is_set()
    proc.kill_group()  # children that outlive the shell go too
    for pump in pumps:
        pump.join(timeout=2)
    with lock:
        return Finished(
            None if timed_out else proc.returncode, out.text(), err.text(), timed_out, time.monotonic() - started
        )


@dataclass
class Job:
    id: str
    command: str
    proc: subprocess.Popen[bytes]
    chunks: list[bytes] = field(default_factory=list)
    read_upto: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    lifeline: int | None = None  # arnes's end of the keeper's pipe: closed, the keeper ends the job


_KEEPER = Path(__file__).with_name("keeper.py")


def kept(argv: list[str], lifeline: int) -> list[str]:
    """`argv` under a keeper (tools/keeper.py) that ends everything it starts when it ends, or
    when `lifeline`'s other end closes (arnes ended, or stopped the job). Linux only: elsewhere
    the process group is all there is."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-I", "-S", str(_KEEPER), str(lifeline), "--", *argv]


class BackgroundJobs:
    """The session's background shells, by id; all are killed when the session closes. Each runs
    under a keeper, so nothing it started outlives it, the session or arnes itself: a process
    that left its group (`setsid`, a daemon) with `--sandbox off` outlived even a clean exit."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def start(
        self,
        argv: list[str],
        cwd: Path,
        command: str,
        env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> Job:
        keep_read, keep_write = os.pipe()
        with sigint_deferred():  # a Ctrl-C now arrives after the job is registered, so close() kills it
            try:
                proc = spawn(kept(argv, keep_read), cwd, env, (*pass_fds, keep_read))
            except BaseException:
                os.close(keep_write)
                raise
            finally:
                os.close(keep_read)
            job = Job(f"bash_{next(self._ids)}", command, proc, lifeline=keep_write)
            with self._lock:
                self._jobs[job.id] = job
        assert proc.stdout is not None and proc.stderr is not None
        for stream in (proc.stdout, proc.stderr):
            threading.Thread(target=_pump, args=(stream, job.chunks, job.lock), daemon=True).start()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._jobs)

    def running(self) -> bool:
        """Whether a background shell is still running (it may write after the turn ends)."""
        with self._lock:
            jobs = list(self._jobs.values())
        return any(job.proc.poll() is None for job in jobs)

    def new_output(self, job: Job, cap: int) -> str:
        with job.lock:
            data = b"".join(job.chunks[job.read_upto :])
            job.read_upto = len(job.chunks)
        text = data.decode(errors="replace")
        if len(text) > cap:
            text = f"... [{len(text) - cap} earlier characters cut] ...\n" + text[-cap:]
        return text

    def kill(self, job: Job) -> None:
        """The keeper ends everything the job started (its group first would kill the keeper
        before it could); the group's kill is for a keeper that does not answer."""
        self._let_go(job)
        try:
            job.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_group(job.proc)
            job.proc.wait()

    @staticmethod
    def _let_go(job: Job) -> None:
        lifeline, job.lifeline = job.lifeline, None
        if lifeline is not None:
            with contextlib.suppress(OSError):
                os.close(lifeline)

    def close(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            if job.proc.poll() is None:
                self.kill(job)
            self._let_go(job)
