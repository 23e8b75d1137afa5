"""The session's bubblewrap sandbox, kept for every foreground command (the zygote), tested as an
attacker would use it: a command must not reach the next command, the server or the host.

Each test fails if the protection it names is removed: commands that leave processes behind,
environment that carries over, a server a command can kill or trace, a namespace not rebuilt when
a Read rule starts to cover a file, a sandbox not torn down with the session.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from pathlib import Path

import pytest

from arnes.permissions.rules import SourcedRule
from arnes.sandbox import zygote as zygote_module
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.session import Session
from arnes.tools.base import ToolError
from arnes.tools.bash import Bash, BashArgs
from tests.conftest import gone
from tests.test_e2e_bash import bash_turns, results, run_script
from tests.test_sandbox import require, run, session


@pytest.fixture(autouse=True)
def _bubblewrap() -> None:
    require(Bubblewrap.unavailable())


def box(s: Session) -> Bubblewrap:
    assert isinstance(s.sandbox, Bubblewrap)
    return s.sandbox


def host_pids(marker: str) -> list[int]:
    """Host processes whose command line holds `marker` (a sleep of an odd length: no one else's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def test_commands_share_one_sandbox_and_nothing_else(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    first = run(s, "export LEAK=1; echo x > /tmp/left; mkdir -p ~/.cache/left; echo $$")
    zygote = box(s)._zygote
    assert "exit code: 0" in first and zygote is not None and zygote.alive()
    second = run(s, "echo [$LEAK]; ls /tmp/left ~/.cache/left 2>&1; echo $PPID")
    assert box(s)._zygote is zygote  # the same sandbox ...
    assert "[]" in second and "No such file" in second  # ... and a fresh /tmp and home for each command
    assert second.strip().endswith("\n1")  # forked by the server, process 1 of the namespace
    s.close()


def test_a_command_gets_exactly_its_own_environment(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    bw = box(s)
    saved = dict(bw._env)
    bw._env = {**saved, "ONLY_FIRST": "one"}  # the server starts with this one
    assert "[one]" in run(s, "echo [$ONLY_FIRST]")
    bw._env = saved
    assert "[]" in run(s, "echo [$ONLY_FIRST]; cat /proc/1/environ 2>&1 | tr '\\0' ' '")
    s.close()


def test_a_command_cannot_signal_trace_or_reach_the_server(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    run(s, "true")
    zygote = box(s)._zygote
    attack = (
        "for sig in KILL STOP TERM INT HUP SEGV; do kill -$sig 1 $PPID; done; "
        "python3 -c 'import ctypes; print(\"ptrace\", ctypes.CDLL(None).ptrace(16, 1, 0, 0))'; "
        "ls -l /proc/1/fd/ 2>&1 | grep -c socket; ls -l /proc/$$/fd/ | grep -c socket; echo survived"
    )
    out = run(s, attack)
    assert "ptrace -1" in out and "survived" in out
    assert "socket" not in out.split("ptrace")[1].replace("grep -c socket", "")
    assert "0\n0\nsurvived" in out  # neither the server's socket nor one of its own is reachable
    assert "exit code: 0" in run(s, "true") and box(s)._zygote is zygote and zygote.alive()
    s.close()


def test_nothing_a_command_starts_outlives_it_or_the_session(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    out = run(s, "setsid sleep 4242.17 & (nohup sleep 4242.17 >/dev/null 2>&1 &) ; disown -a; echo started")
    assert "started" in out
    assert host_pids("4242.17") == []  # killed and reaped before the command's answer came
    run(s, "setsid sleep 4242.19 &")
    assert "sleep" not in run(s, "ps -e -o comm=")  # the next command finds none of them
    with pytest.raises(ToolError, match="Timed out"):
        Bash().run(BashArgs(command="setsid sleep 4242.23 & sleep 4242.29", timeout=1500), s.ctx)
    assert all(gone(pid) for pid in host_pids("4242.2"))  # a time-out ends the whole sandbox
    run(s, "setsid sleep 4242.31 &")
    bwrap = box(s)._zygote
    assert bwrap is not None and bwrap._proc is not None
    s.close()
    assert gone(bwrap._proc.pid) and all(gone(pid) for pid in host_pids("4242.3"))
    assert not (tmp_path / "features.json").exists() and not (tmp_path / ".git").exists()


def test_ctrl_c_during_a_command_ends_everything_it_started(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    os.mkfifo(tmp_path / "started")

    def ctrl_c_once_started() -> None:
        with open(tmp_path / "started") as fifo:  # opens when the command does: no clock involved
            fifo.read()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c_once_started, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        Bash().run(BashArgs(command="setsid sleep 4242.53 & echo go > started; sleep 4242.59"), s.ctx)
    assert all(gone(pid) for pid in host_pids("4242.5"))
    assert "exit code: 0" in run(s, "true")  # the next command gets a new sandbox
    s.close()


def test_a_command_line_too_large_for_one_message_still_runs(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    big = "x" * zygote_module.MOST_REQUEST
    server = "tr '\\0' ' ' < /proc/1/cmdline | grep -c 'arnes-zygot[e]'"
    out = run(s, f"echo {big} | wc -c; {server}")
    assert f"{len(big) + 1}\n0" in out  # a bwrap of its own: process 1 is not the server
    assert run(s, server).strip().endswith("\n1")  # and the server still serves the next
    s.close()


def test_a_dead_server_breaks_only_its_command_and_is_said_once(tmp_path: Path) -> None:
    s = session(tmp_path, "bubblewrap")
    run(s, "true")
    zygote = box(s)._zygote
    assert zygote is not None and zygote._proc is not None
    zygote._proc.kill()  # as the OOM killer would; nothing inside the sandbox can
    assert gone(zygote._proc.pid)
    zygote._stopped.wait()
    out = run(s, "echo after")
    assert "after" in out and "command server had stopped" in out
    assert "stopped" not in run(s, "echo again")
    s.close()


def test_a_rule_that_starts_to_cover_a_file_rebuilds_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("T0PSECRET\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / ".env.local").write_text("ENVSECRET\n")
    rules = [SourcedRule("deny", f"Read({glob})", "t") for glob in ("**/*.pem", "**/.env.*")]  # one ripgrep walk
    s = session(tmp_path, "bubblewrap", rules=rules)
    first = run(s, "cat secret.txt conf/.env.local")
    assert "T0PSECRET" in first and "ENVSECRET" not in first
    s.engine.add_rule("deny", "Read(secret.txt)", "session")
    assert "T0PSECRET" not in run(s, "cat secret.txt")
    run(s, "echo KEYDATA > made.pem")  # a file a rule covers, made by a command: hidden from the next
    assert "KEYDATA" not in run(s, "cat made.pem") and (tmp_path / "made.pem").read_text() == "KEYDATA\n"
    s.close()


def test_a_session_of_the_real_command_reuses_one_sandbox_and_leaves_nothing(shop: Path, tmp_path: Path) -> None:
    commands = ["setsid sleep 4242.41 & echo one $PPID", "kill -9 1; kill -9 $PPID; echo two $PPID", "echo three"]
    code, _, trace = run_script(
        shop, tmp_path, bash_turns(*commands), "--permission-mode", "bypass", "--sandbox", "bubblewrap"
    )
    outputs = results(trace)
    assert code == 0 and [o.splitlines()[-1] for o in outputs] == ["one 1", "two 1", "three"]
    assert all(gone(pid) for pid in host_pids("4242.41"))
    assert not (shop / "features.json").exists()


def test_a_server_that_cannot_start_leaves_one_bwrap_per_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zygote_module, "_BOOT", "raise SystemExit('no server here')")
    s = session(tmp_path, "bubblewrap")
    first = run(s, "echo one")
    assert "one" in first and "start a sandbox each" in first and "no server here" in first
    second = run(s, "echo two")
    assert "two" in second and "sandbox each" not in second and box(s)._zygote is None
    s.close()


def test_the_in_process_walk_finds_all_that_ripgrep_finds(tmp_path: Path) -> None:
    """Before every command: a small tree is walked in-process; it must miss nothing ripgrep lists."""
    from arnes.config import SECRET_DENIES
    from arnes.sandbox import hidden

    for rel in (".env/inner", "a/.env.local", "a/b/KEY.PEM", "x.key", "id_rsa_old", "d/.aws/credentials",
                "ok.txt", "n/.NPMRC", "q/.docker/config.json", "z.pemx", "e/.Env.prod/sub/f", ".pypirc"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    (tmp_path / "link.pem").symlink_to("/etc/hostname")
    globs = [rule.removeprefix("Read(").removesuffix(")") for rule in SECRET_DENIES]
    walked = hidden._small_tree_candidates(str(tmp_path), globs)
    listed = hidden._matching(str(tmp_path), globs, case_insensitive=True)
    assert walked is not None and set(walked) == set(listed) and len(listed) == 10


def test_an_entry_replaced_under_its_own_name_is_put_back_for_the_next_command(tmp_path: Path) -> None:
    """Compared by type, inode and link target, not by name: /dev/stdout made a link to a file of
    the command's choosing, /dev/fd removed, a folder's bits changed: all as bwrap made them again."""
    s = session(tmp_path, "bubblewrap")
    run(s, "mkdir -p ~/.cache/kept; ls -d ~/.cache/kept")  # made by a command: removed after it
    plant = "ln -sfn /tmp/planted /dev/stdout && rm /dev/fd && chmod 777 /dev/pts; echo planted"
    assert "planted" in run(s, plant)
    zygote = box(s)._zygote
    out = run(s, "readlink /dev/stdout /dev/fd; stat -c %a /dev/pts")
    assert box(s)._zygote is zygote  # put back, so the same sandbox
    assert "/proc/self/fd/1\n/proc/self/fd" in out and "/tmp/planted" not in out and "777" not in out, out
    s.close()


def test_what_cannot_be_put_back_retires_the_sandbox(tmp_path: Path) -> None:
    """A regular file changed in place (or a device node replaced) cannot be restored: the server
    says so, and the next command gets a new sandbox, without a note of a dead server."""
    from arnes.sandbox import zygote_server

    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "file").write_text("as made\n")
    os.symlink("/proc/self/fd/1", root / "link")
    marks = {str(root): zygote_server._entries(str(root), set())}
    (root / "link").unlink()
    os.symlink("/elsewhere", root / "link")
    (root / "sub").chmod(0o700)
    (root / "new").write_text("x")
    assert zygote_server._restore(marks, set()) is True
    assert os.readlink(root / "link") == "/proc/self/fd/1" and not (root / "new").exists()
    assert zygote_server._restore(marks, set()) is True  # the link's new inode is the one now compared
    (root / "file").write_text("changed\n")
    assert zygote_server._restore(marks, set()) is False

    (tmp_path / "ws").mkdir()
    s = session(tmp_path / "ws", "bubblewrap")
    run(s, "true")
    zygote = box(s)._zygote
    assert zygote is not None and zygote.alive()
    ours, theirs = socket.socketpair()  # the server's answer after a command, as it sends it
    real, zygote._channel = zygote._channel, ours
    with ours, theirs:
        theirs.send(b'{"exit": 3, "stale": true}')
        zygote.busy.acquire(blocking=False)
        assert zygote.answer() == 3 and not zygote.alive()
    zygote._channel = real
    out = run(s, "echo after")
    assert "after" in out and "stopped" not in out and box(s)._zygote is not zygote
    s.close()
