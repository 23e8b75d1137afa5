"""The OS sandbox, tested adversarially: what the rules let through, the kernel still stops.

These call the Bash tool directly (past the permission gate) so that only the sandbox stands
between the command and the file, the folder or the socket. CI sets ARNES_REQUIRE_SANDBOX=1 so a
missing backend fails instead of skipping.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arnes.llm.script import ScriptProvider
from arnes.permissions.rules import SourcedRule
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.sandbox.landlock import LandlockSandbox
from arnes.session import Session
from arnes.tools.base import ToolError
from arnes.tools.bash import Bash, BashArgs


def require(problem: str | None) -> None:
    if problem is None:
        return
    if os.environ.get("ARNES_REQUIRE_SANDBOX"):
        pytest.fail(f"sandbox required but unavailable: {problem}")
    pytest.skip(problem)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (which the sandbox replaces or allows)."""
    path = Path(tempfile.mkdtemp(prefix="arnes-outside-", dir="/var/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def session(ws: Path, backend: str, network: bool = False, rules: list[SourcedRule] | None = None) -> Session:
    return Session(
        workspace=ws, provider=ScriptProvider.from_turns([]), sandbox_mode=backend, network=network, rules=rules or []
    )  # type: ignore[arg-type]


def run(s: Session, command: str) -> str:
    try:
        return Bash().run(BashArgs(command=command), s.ctx)
    except ToolError as exc:
        return str(exc)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"hello\n")
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


CONNECT = "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {port}), timeout=2); print(s.recv(6))\""


class TestBubblewrap:
    @pytest.fixture(autouse=True)
    def _available(self) -> None:
        require(Bubblewrap.unavailable())

    def test_workspace_is_writable_and_the_rest_is_not(self, tmp_path: Path, outside: Path) -> None:
        s = session(tmp_path, "bubblewrap")
        assert s.sandbox.name == "bubblewrap"
        out = run(s, f"echo in > inside.txt; echo out > {outside}/escape.txt; echo $?")
        assert (tmp_path / "inside.txt").read_text() == "in\n"
        assert not (outside / "escape.txt").exists()
        assert "Read-only file system" in out or "No such file or directory" in out  # /var/tmp: hidden

    def test_tmp_is_private(self, tmp_path: Path) -> None:
        marker = Path(tempfile.gettempdir()) / f"arnes-private-{os.getpid()}"
        out = run(session(tmp_path, "bubblewrap"), f"echo x > {marker} && cat {marker}")
        assert "exit code: 0" in out and not marker.exists()

    def test_git_and_arnes_stay_read_only(self, tmp_path: Path) -> None:
        (tmp_path / ".git" / "hooks").mkdir(parents=True)
        (tmp_path / ".git" / "config").write_text("[core]\n")
        (tmp_path / ".arnes").mkdir()
        (tmp_path / ".arnes" / "settings.json").write_text("{}")
        s = session(tmp_path, "bubblewrap")
        run(s, "cp /bin/true .git/hooks/pre-commit; echo evil >> .git/config; echo '{\"x\":1}' > .arnes/settings.json")
        assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()
        assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
        assert (tmp_path / ".arnes" / "settings.json").read_text() == "{}"
        out = run(s, "mv .git .g; echo x > .git/commondir; mv .arnes .a")  # no rename, no redirection
        assert (tmp_path / ".git" / "hooks").is_dir() and not (tmp_path / ".g").exists()
        assert not (tmp_path / ".git" / "commondir").exists() and (tmp_path / ".arnes").is_dir()
        assert "Device or resource busy" in out or "Read-only file system" in out

    def test_a_workspace_without_git_cannot_grow_one(self, tmp_path: Path) -> None:
        s = session(tmp_path, "bubblewrap")
        out = run(s, "git init -q . && git config core.fsmonitor 'touch /tmp/x'; echo done")
        assert "done" in out
        assert not any((tmp_path / ".git").iterdir())  # the empty mount point of the session's sandbox
        assert "done" in run(s, "git init -q . ; echo done") and not any((tmp_path / ".git").iterdir())
        # a test runner walking the project (node --test, pytest's collection) reads the stand-in as empty
        walked = run(s, "python3 -c 'import os; print([(d, f) for _, d, f in os.walk(\".git\")])'; ls -la .git")
        assert "[([], [])]" in walked and "Permission denied" not in walked
        s.close()
        assert not (tmp_path / ".git").exists()  # gone with the session's sandbox

    def test_a_missing_feature_list_cannot_be_made_by_a_command(self, tmp_path: Path) -> None:
        s = session(tmp_path, "bubblewrap")
        for _ in range(2):  # the first command starts the session's sandbox, the second reuses it
            out = run(s, "echo '{\"features\": []}' > features.json; echo rc=$?")
            assert "rc=0" not in out and (tmp_path / "features.json").read_bytes() == b""
        assert "features.json" not in s.ctx.changes.shell_report().named  # the stand-in is no change
        s.close()
        assert not (tmp_path / "features.json").exists()

    def test_moving_a_folder_does_not_unhide_its_secret(self, tmp_path: Path) -> None:
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "secret.txt").write_text("T0PSECRET\n")
        s = session(tmp_path, "bubblewrap", rules=[SourcedRule("deny", "Read(config/secret.txt)", "t")])
        out = run(s, "mv config c2; cat c2/secret.txt config/secret.txt")
        assert "T0PSECRET" not in out and (tmp_path / "config" / "secret.txt").exists()
        assert "T0PSECRET" not in run(s, "cat c2/secret.txt")

    def test_many_hidden_files_stay_hidden(self, tmp_path: Path) -> None:
        for folder in range(60):
            (tmp_path / f"d{folder}").mkdir()
            for i in range(100):
                (tmp_path / f"d{folder}" / f"{i}.secret").write_text("SECRET\n")
        s = session(tmp_path, "bubblewrap", rules=[SourcedRule("deny", "Read(**/*.secret)", "t")])
        assert "SECRET" not in run(s, "cat d0/1.secret d59/99.secret; grep -rh SECRET . | head -3")

    def test_files_an_edit_rule_denies_stay_read_only(self, tmp_path: Path) -> None:
        (tmp_path / "secrets").mkdir()
        (tmp_path / "secrets" / "key").write_text("original\n")
        (tmp_path / "notes.txt").write_text("free\n")
        s = session(tmp_path, "bubblewrap", rules=[SourcedRule("deny", "Edit(secrets/**)", "t")])
        run(s, "sed -i s/original/changed/ secrets/key; echo more >> notes.txt")
        assert (tmp_path / "secrets" / "key").read_text() == "original\n"
        assert (tmp_path / "notes.txt").read_text() == "free\nmore\n"

    def test_unix_sockets_under_run_are_out_of_reach(self, tmp_path: Path) -> None:
        path = Path(f"/run/arnes-test-{os.getpid()}.sock")
        try:
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
        except OSError as exc:
            pytest.skip(f"cannot make a socket under /run here: {exc}")
        server.listen(1)
        try:
            probe = (
                f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); print('reached')\""
            )
            assert "reached" not in run(session(tmp_path, "bubblewrap"), probe)
        finally:
            server.close()
            path.unlink()

    def test_run_as_root_what_only_root_may_read_in_etc_stays_hidden(self, tmp_path: Path) -> None:
        """Red team round 9, 14: bubblewrap keeps uid 0, and root reads /etc/shadow."""
        if os.geteuid() != 0 or not os.path.exists("/etc/shadow"):
            pytest.skip("only root reads /etc/shadow; arnes is not root here")
        assert "root:" in Path("/etc/shadow").read_text()
        out = run(session(tmp_path, "bubblewrap"), "cat /etc/shadow; cat /etc/hostname >/dev/null && echo READABLE")
        assert "root:" not in out and "Permission denied" in out and "READABLE" in out  # the rest of /etc reads

    @pytest.mark.parametrize("network", [False, True])
    def test_no_vsock_socket_even_with_the_network(self, tmp_path: Path, network: bool) -> None:
        """vsock reaches the hypervisor and no network namespace holds it (red team round 9, 15)."""
        probe = (
            "python3 -c \"import socket\ntry:\n socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('MADE')\n"
            "except OSError as e: print('REFUSED', e.errno)\""
        )
        out = run(session(tmp_path, "bubblewrap", network=network), probe)
        assert "REFUSED 1" in out and "MADE" not in out  # EPERM, from the filter

    def test_network_is_off_unless_asked_for(self, tmp_path: Path, listener: int) -> None:
        assert "hello" not in run(session(tmp_path, "bubblewrap"), CONNECT.format(port=listener))
        assert "hello" in run(session(tmp_path, "bubblewrap", network=True), CONNECT.format(port=listener))

    def test_files_a_read_rule_denies_are_unreadable(self, tmp_path: Path) -> None:
        (tmp_path / ".env").write_text("TOKEN=s3cr3t-value\n")
        (tmp_path / "app").mkdir()
        (tmp_path / "app" / ".env.prod").write_text("TOKEN=pr0d-value\n")
        (tmp_path / "secrets").mkdir()
        (tmp_path / "secrets" / "key.pem").write_text("PEM-BODY-123\n")
        (tmp_path / "ok.txt").write_text("fine\n")
        rules = [SourcedRule("deny", "Read(**/.env*)", "t"), SourcedRule("deny", "Read(secrets/**)", "t")]
        s = session(tmp_path, "bubblewrap", rules=rules)
        out = run(s, "cat .env app/.env.prod secrets/key.pem ok.txt; python3 -c \"print(open('.env').read())\"")
        assert "s3cr3t-value" not in out and "pr0d-value" not in out and "PEM-BODY-123" not in out
        assert "fine" in out and "Permission denied" in out
        assert (tmp_path / ".env").read_text() == "TOKEN=s3cr3t-value\n"


class TestLandlock:
    @pytest.fixture(autouse=True)
    def _available(self) -> None:
        require(LandlockSandbox.unavailable())

    def test_writes_outside_the_workspace_are_refused(self, tmp_path: Path, outside: Path) -> None:
        s = session(tmp_path, "landlock")
        assert s.sandbox.name == "landlock"
        out = run(s, f"echo in > inside.txt; echo out > {outside}/escape.txt")
        assert (tmp_path / "inside.txt").read_text() == "in\n"
        assert not (outside / "escape.txt").exists() and "Permission denied" in out

    def test_no_setuid_bits_and_no_unix_sockets_and_the_banner_says_what_is_missing(
        self, tmp_path: Path, outside: Path
    ) -> None:
        path = outside / "host.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(1)
        try:
            s = session(tmp_path, "landlock")
            probe = (
                f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); print('REACHED')\""
            )
            assert "REACHED" not in run(s, probe)
            run(s, "touch f; chmod u+s f")
            assert not (tmp_path / "f").stat().st_mode & 0o4000
            assert "NOT given" in s.sandbox.describe() and "home folder" in s.sandbox.describe()
        finally:
            server.close()
            path.unlink()


def test_too_many_hidden_files_collapse_into_their_folders() -> None:
    from arnes.sandbox.hidden import collapse

    many = [Path(f"/ws/certs/{i // 100}/k{i}.pem") for i in range(2000)]
    folded = collapse(many, most=50)
    assert folded == sorted({Path(f"/ws/certs/{i}") for i in range(20)})
    assert collapse(many[:10], most=50) == many[:10]


def test_only_bubblewrap_lets_accept_edits_run_commands_unasked(tmp_path: Path) -> None:
    assert session(tmp_path, "off").engine.sandboxed is False
    if LandlockSandbox.unavailable() is None:
        assert session(tmp_path, "landlock").engine.sandboxed is False  # it keeps nothing read-only inside
    if Bubblewrap.unavailable() is None:
        assert session(tmp_path, "bubblewrap").engine.sandboxed is True


def test_auto_picks_a_working_backend_and_off_is_off(tmp_path: Path) -> None:
    assert session(tmp_path, "off").sandbox.name == "off"
    picked = session(tmp_path, "auto").sandbox.name
    expected = (
        "bubblewrap"
        if Bubblewrap.unavailable() is None
        else ("landlock" if LandlockSandbox.unavailable() is None else "off")
    )
    assert picked == expected


def test_a_command_allowed_as_read_only_runs_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: even if the classifier misjudged a writing command, it cannot write."""
    require(Bubblewrap.unavailable())
    from arnes.agent.loop import Agent
    from arnes.messages import ToolResultBlock
    from arnes.permissions import commands

    monkeypatch.setattr(commands, "is_read_only", lambda part: True)  # a classifier that is wrong
    (tmp_path / "a.txt").write_text("content\n")
    turns = [
        {
            "tool_calls": [
                {"name": "Bash", "input": {"command": "touch made.txt; sed -i s/content/changed/ a.txt; cat a.txt"}}
            ]
        },
    ]
    s = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), sandbox_mode="bubblewrap")
    agent = Agent(s)
    agent.run("go")
    (result,) = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert "content" in result.content and "Read-only file system" in result.content
    assert not (tmp_path / "made.txt").exists() and (tmp_path / "a.txt").read_text() == "content\n"


def test_commands_a_person_or_a_mode_allowed_can_still_write(tmp_path: Path) -> None:
    require(Bubblewrap.unavailable())
    from arnes.agent.loop import Agent

    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}]
    s = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), sandbox_mode="bubblewrap",
                mode="acceptEdits")  # fmt: skip
    Agent(s).run("go")
    assert (tmp_path / "made.txt").exists()


def test_a_virtual_environment_under_tmp_stays_usable_in_the_private_tmp(tmp_path: Path) -> None:
    """/tmp is private in the sandbox; the active venv (a CI clone may live in /tmp) is bound back read-only."""
    import json

    from arnes.agent.trace import read_trace
    from tests.conftest import run_arnes

    require(Bubblewrap.unavailable())
    venv, other = tmp_path / "venv", tmp_path / "other"
    (venv / "bin").mkdir(parents=True)
    other.mkdir()
    (venv / "bin" / "tool").write_text("#!/bin/sh\necho tool-ran\n")
    (venv / "bin" / "tool").chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    command = f"tool; test -e {other} && echo other-seen; touch {venv}/x || echo read-only"
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}]}))
    trace = tmp_path / "t.jsonl"
    env = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
              "--permission-mode", "bypass", "--sandbox", "bubblewrap", "x", env=env)  # fmt: skip
    [output] = [e["output"] for e in read_trace(trace) if e["event"] == "tool_result"]
    assert "tool-ran" in output and "read-only" in output and "other-seen" not in output


def test_a_stale_errno_does_not_make_landlock_look_missing() -> None:
    """The landlock library reads ctypes' errno, not the result: ENOENT left by an earlier call
    (found in a full CI run, after a refused openat2) made a working kernel look like none."""
    import ctypes

    import landlock

    from arnes.sandbox.landlock import LandlockSandbox

    require(LandlockSandbox.unavailable.__wrapped__())  # type: ignore[attr-defined]  # functools.cache
    landlock.landlock_abi_version.cache_clear()
    ctypes.set_errno(2)
    assert LandlockSandbox.unavailable.__wrapped__() is None  # type: ignore[attr-defined]


def test_root_only_config_is_what_only_root_may_read_and_only_for_root(tmp_path: Path) -> None:
    from arnes.sandbox.bubblewrap import root_only_config

    (tmp_path / "ssl" / "private").mkdir(parents=True)
    (tmp_path / "ssl" / "private").chmod(0o700)
    (tmp_path / "ssl" / "certs.pem").write_text("public\n")
    (tmp_path / "shadow").write_text("root:x\n")
    (tmp_path / "shadow").chmod(0o640)
    (tmp_path / "hostname").write_text("box\n")
    (tmp_path / "link").symlink_to(tmp_path / "shadow")
    assert sorted(root_only_config(tmp_path, euid=0)) == [tmp_path / "shadow", tmp_path / "ssl" / "private"]
    assert root_only_config(tmp_path, euid=1000) == []
