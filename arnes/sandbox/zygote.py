"""One bubblewrap sandbox per session for foreground shell commands: a command server (the
zygote, sandbox/zygote_server.py) started lazily inside the very namespace a one-shot bubblewrap
would build, forking each command there. Starting bwrap costs a few milliseconds per command;
forking in a namespace already built costs a fraction of one.

What each command keeps: its own cwd and environment (sent with the request; the server's own
never reaches it), a new session and process group, stdin /dev/null, its time-out and output cap
(the caller's), and a clean slate: before the answer comes back every process it started is
killed (setsid ones too) and the sandbox's tmpfs folders are as they were (an entry replaced
under its own name is put back; when something cannot be, the sandbox is retired and the next
command gets a new one). A time-out or Ctrl-C
kills the whole sandbox, as before; the next command starts a new one. The server is the
namespace's init: commands cannot signal or trace it; if it dies anyway, the next command says so
once and starts another.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from arnes.nesting import json_loads
from arnes.sandbox.standins import remove_mount_points

_SERVER = Path(__file__).with_name("zygote_server.py")
_START_TIMEOUT = 30.0
MOST_REQUEST = 100_000  # bytes of argv + env in one message (a socket's send buffer is ~200 KiB)
# Python reads the server from a pipe: nothing of arnes need be visible inside the sandbox.
_BOOT = "import sys; exec(compile(open(int(sys.argv[1]), 'rb').read(), 'arnes-zygote', 'exec'))"


@dataclass
class ZygoteProcess:
    """A command running in the zygote, seen like a process: its output pipes, wait(), and a
    group kill (the whole sandbox, since nothing outside the namespace can reach one group in it)."""

    zygote: Zygote
    stdout: IO[bytes] | None
    stderr: IO[bytes] | None
    returncode: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self) -> int:
        with self._lock:
            if self.returncode is None:
                self.returncode = self.zygote.answer()
            return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def kill_group(self) -> None:
        if self.returncode is None:
            self.zygote.stop(expected=True)


class Zygote:
    """The server process and its socket. `key` is the namespace it was built with: a command that
    needs another (a Read rule now hides one more file, a .venv appeared) gets a new zygote."""

    def __init__(self, key: tuple[str, ...], placeholders: list[Path]):
        self.key = key
        self.placeholders = placeholders  # empty mount points bwrap made; removed when it stops
        self.busy = threading.Lock()  # one command at a time; others take a one-shot bwrap
        self.death: str | None = None  # why it stopped when nobody stopped it
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._stopped = threading.Event()
        self._expected = False
        self._last_words = ""  # bwrap's exit and the last line it wrote

    def start(
        self, bwrap: list[str], env: dict[str, str], pass_fds: tuple[int, ...], config: dict[str, list[str]]
    ) -> None:
        """Start bwrap with the server as its command, and wait for it to say it is ready.
        `bwrap` ends with `--`; raises OSError when it cannot start."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code_r, code_w = os.pipe()  # the server's text (a few KiB: it fits the pipe's buffer)
        with contextlib.suppress(OSError):
            os.write(code_w, _SERVER.read_bytes())
        os.close(code_w)
        fds = (code_r, theirs.fileno())
        argv = [*bwrap, sys.executable, "-I", "-S", "-c", _BOOT, *map(str, fds), json.dumps(config)]
        ready = threading.Event()
        failure: list[BaseException] = []

        def keep() -> None:
            """bwrap dies with the thread that started it (PR_SET_PDEATHSIG): this one waits as long."""
            try:
                self._proc = subprocess.Popen(
                    argv,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    pass_fds=(*pass_fds, *fds),
                )
            except BaseException as exc:  # reported to the starting thread
                failure.append(exc)
                return
            finally:
                ready.set()
            code = self._proc.wait()  # its end of the socket closes with it: a waiting answer() sees the end
            assert self._proc.stderr is not None
            with self._proc.stderr:
                said = self._proc.stderr.read(2000).decode(errors="replace").strip().splitlines()
            self._last_words = f"exit {code}" + (f": {said[-1]}" if said else "")
            if not self._expected:
                self.death = self._last_words
            self._stopped.set()

        threading.Thread(target=keep, name="arnes-zygote", daemon=True).start()
        ready.wait()
        theirs.close()
        os.close(code_r)
        if failure:
            ours.close()
            raise OSError(f"bwrap did not start: {failure[0]}")
        self._channel = ours
        ours.settimeout(_START_TIMEOUT)
        try:
            hello = ours.recv(64)
        except OSError as exc:
            hello = b""
            self.death = f"no answer ({exc})"
        if hello != b'{"ready": true}':
            self.stop(expected=True)
            self._stopped.wait()
            raise OSError(f"the command server did not start ({self._last_words or self.death or 'no answer'})")
        ours.settimeout(None)

    def alive(self) -> bool:
        """Running and not retired (a stop() asked for is final even before bwrap has gone)."""
        return self._channel is not None and not self._stopped.is_set() and not self._expected

    def run(self, argv: list[str], cwd: Path, env: dict[str, str]) -> ZygoteProcess:
        """Send one command; the caller holds `busy` until the process is waited for."""
        assert self._channel is not None
        request = json.dumps({"argv": argv, "cwd": str(cwd), "env": env}).encode()
        if len(request) > MOST_REQUEST:
            raise ValueError("too large for one message: take a one-shot bwrap")
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            socket.send_fds(self._channel, [request], [out_w, err_w])
        except OSError:
            for fd in (out_r, err_r):
                os.close(fd)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        return ZygoteProcess(self, open(out_r, "rb"), open(err_r, "rb"))

    def answer(self) -> int:
        """The command's exit code; a dead server reads as SIGKILL (137, as bubblewrap says it)."""
        assert self._channel is not None
        try:
            reply = self._channel.recv(4096)  # a Ctrl-C here leaves it busy: the caller kills it
        except OSError:
            reply = b""
        with contextlib.suppress(RuntimeError):  # a second answer (after a kill) finds it released
            self.busy.release()
        if not reply:
            return 128 + signal.SIGKILL
        try:
            said = json_loads(reply)
        except ValueError:
            said = {}
        if not isinstance(said, dict):
            said = {}
        if said.get("stale") is not False:
            # The server could not put back something the command changed (or said nothing we
            # understand): the next command gets a new sandbox, not this one's leftovers.
            self.stop(expected=True)
        code = said.get("exit")
        return code if isinstance(code, int) else 1

    def stop(self, *, expected: bool) -> None:
        """Kill the sandbox (bwrap, and with it the namespace: the server is its init)."""
        self._expected = self._expected or expected
        proc = self._proc
        if proc is not None and proc.returncode is None and not self._stopped.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop it and wait, then remove the empty mount points it needed."""
        self.stop(expected=True)
        if self._proc is not None:
            self._stopped.wait()
        if self._channel is not None:
            self._channel.close()
        remove_mount_points(self.placeholders)
