"""The sandbox holds the perimeter for reads, sockets, secrets and setuid bits, and every change a
shell command makes is reported: attacked end to end, with the real `arnes` command, a hostile
workspace and a fake home folder full of secrets (issue 10, points 5 and 8)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.test_sandbox import require

UNIX_PROBE = "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); print('REACHED')\""


def bash(*commands: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands]


@pytest.fixture
def home() -> Iterator[Path]:
    """A home folder like a developer's: keys, cloud credentials, a pyenv-style toolchain on PATH.
    Outside /tmp, which the sandbox replaces anyway: only hiding the home folder may hide it."""
    home = Path(tempfile.mkdtemp(prefix="arnes-home-", dir="/var/tmp"))
    yield _fill(home)
    shutil.rmtree(home, ignore_errors=True)


def _fill(home: Path) -> Path:
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-BODY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = AWS-SECRET-BODY\n")
    (home / "notes.txt").write_text("HOME-NOTES-BODY\n")
    (home / ".gitconfig").write_text("[user]\n\tname = Test Person\n")
    tool = home / ".pyenv" / "bin" / "mytool"
    tool.parent.mkdir(parents=True)
    (home / ".pyenv" / "versions").mkdir()
    (home / ".pyenv" / "versions" / "lib.txt").write_text("TOOLCHAIN-LIB\n")
    tool.write_text(f"#!/bin/sh\necho tool-ran; cat {home}/.pyenv/versions/lib.txt\n")
    tool.chmod(0o755)
    (home / ".config" / "gcloud").mkdir(parents=True)
    (home / ".config" / "gcloud" / "credentials.db").write_text("GCLOUD-BODY\n")
    (home / ".config" / "tool.conf").write_text("TOOL-CONF-BODY\n")
    (home / ".config" / "arnes").mkdir()
    user = {"sandbox": {"read_paths": ["~/.config"], "env_passthrough": ["MY_PASSTHRU_TOKEN"]}}
    (home / ".config" / "arnes" / "settings.json").write_text(json.dumps(user))
    return home


@pytest.fixture
def unix_sockets(home: Path) -> Iterator[list[Path]]:
    """Real listening Unix sockets where host daemons put theirs: /var/tmp and the home folder."""
    paths = [Path(f"/var/tmp/arnes-test-{os.getpid()}.sock"), home / ".docker-run" / "docker.sock"]
    paths[1].parent.mkdir()
    servers = []
    for path in paths:
        path.unlink(missing_ok=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(8)  # the kernel completes connections without accept()
        servers.append(server)
    yield paths
    for server, path in zip(servers, paths, strict=True):
        server.close()
        path.unlink(missing_ok=True)


def run(ws: Path, tmp_path: Path, home: Path, turns: list[dict[str, Any]], *flags: str) -> tuple[Any, list[Any]]:
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    temp = tmp_path / "tmpdir"
    temp.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(temp),
        "PATH": f"{home / '.pyenv' / 'bin'}:{os.environ['PATH']}",
        "ANTHROPIC_API_KEY": "sk-ant-ENV-SECRET",
        "DEPLOY_PASSWORD": "PASSWORD-ENV-SECRET",
        "MY_PASSTHRU_TOKEN": "PASSTHRU-VISIBLE",
        "DATABASE_URL": "postgres://app:URL-PASSWORD@db/app",
    }
    done = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), *flags, "task",
        env=env,
    )  # fmt: skip
    return done, [e["output"] for e in read_trace(trace) if e["event"] == "tool_result"]


def test_a_command_reaches_no_secret_no_socket_and_leaves_no_setuid_file(
    tmp_path: Path, home: Path, unix_sockets: list[Path]
) -> None:
    require(Bubblewrap.unavailable())
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    # The repository asks for the user's keys: only the user's own settings may widen the sandbox.
    hostile = {"sandbox": {"read_paths": ["~/.ssh"], "env_passthrough": ["ANTHROPIC_API_KEY"]}}
    (ws / ".arnes" / "settings.json").write_text(json.dumps(hostile))
    # The built-in denies of home credentials would stop these reads before they run: lifted here
    # (an allow of the same text in the user's settings), so that only the sandbox is left to hold.
    lifted = {"permissions": {"allow": ["Read(~/.ssh/**)", "Read(~/.aws/**)", "Read(~/.config/gcloud/**)"]}}
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(lifted))
    done, (reads, tool, config, env, var_tmp, in_home, setuid) = run(
        ws, tmp_path, home,
        bash(
            "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/notes.txt; ls -a ~",
            "mytool",
            "cat ~/.config/tool.conf ~/.config/gcloud/credentials.db; git config --global user.name",
            "env",
            UNIX_PROBE.format(path=unix_sockets[0]),
            UNIX_PROBE.format(path=unix_sockets[1]),
            "touch s1 s2; chmod u+s s1; chmod g+s s2; "
            "python3 -c \"import os; os.close(os.open('s3', os.O_CREAT | os.O_WRONLY, 0o6755))\"; ls -l s1 s2 s3",
        ),
        "--permission-mode", "bypass", "--sandbox", "bubblewrap",  # every rule says yes: only the sandbox holds
    )  # fmt: skip
    assert done.code == 0, done.err
    warned = done.out + done.err  # untrusted: trust names them as ignored grants (trusted: only user settings count)
    assert "ignored" in warned and "sandbox.read_paths" in warned and "sandbox.env_passthrough" in warned, warned
    for body in ("PRIVATE-KEY-BODY", "AWS-SECRET-BODY", "HOME-NOTES-BODY"):
        assert body not in reads
    assert {".pyenv", ".gitconfig", ".config"} <= set(reads.splitlines())  # the listing ran
    assert {"notes.txt", ".aws", ".ssh"}.isdisjoint(reads.splitlines())
    assert "tool-ran" in tool and "TOOLCHAIN-LIB" in tool
    assert "TOOL-CONF-BODY" in config and "Test Person" in config and "GCLOUD-BODY" not in config
    assert "PASSTHRU-VISIBLE" in env and "HOME=" in env
    for secret in ("sk-ant-ENV-SECRET", "PASSWORD-ENV-SECRET", "URL-PASSWORD"):
        assert secret not in env
    assert "REACHED" not in var_tmp and "Operation not permitted" in var_tmp
    assert "REACHED" not in in_home
    assert "Operation not permitted" in setuid
    for name in ("s1", "s2"):
        assert not (ws / name).stat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert not (ws / "s3").exists() or not (ws / "s3").stat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert [p.name for p in (tmp_path / "tmpdir").iterdir() if p.name.startswith("arnes-sandbox-")] == []


def test_the_probes_reach_everything_without_a_sandbox(tmp_path: Path, home: Path, unix_sockets: list[Path]) -> None:
    """The control: the same probes do reach the socket and the home folder when nothing confines
    them, so the test above fails if the protection goes; the environment is scrubbed even here."""
    ws = tmp_path / "ws"
    ws.mkdir()
    done, (reads, probe, env) = run(
        ws, tmp_path, home, bash("cat ~/notes.txt", UNIX_PROBE.format(path=unix_sockets[0]), "env"),
        "--permission-mode", "bypass", "--sandbox", "off",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "HOME-NOTES-BODY" in reads and "REACHED" in probe
    assert "sk-ant-ENV-SECRET" not in env and "PASSTHRU-VISIBLE" in env
    assert "their environment is still the allow list" in done.out


def test_the_summary_names_what_shell_commands_wrote(tmp_path: Path, home: Path) -> None:
    require(Bubblewrap.unavailable())
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "kept.txt").write_text("unchanged\n")
    pth = ".venv/lib/python3.11/site-packages/evil.pth"
    done, _ = run(
        ws, tmp_path, home,
        bash(
            f"mkdir -p {Path(pth).parent} node_modules/pkg build && echo 'import os' > {pth} && "
            "echo 'export X=1' > .envrc && echo hello > notes.txt && echo x > debug.log && "
            "for i in $(seq 30); do echo $i > node_modules/pkg/f$i.js; echo $i > build/o$i; done"
        ),
        "--permission-mode", "bypass", "--sandbox", "bubblewrap", "--output-format", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert {"notes.txt", ".envrc", pth, "debug.log"} <= set(report["files_changed"])  # a few gitignored: named
    assert "kept.txt" not in report["files_changed"]
    assert not any(name.startswith(("node_modules/", "build/")) for name in report["files_changed"])
    assert set(report["shell_changes"]["runs_code"]) == {".envrc", pth}
    assert report["shell_changes"]["ignored"] == {"build": 30, "node_modules": 30}


def test_the_text_summary_shows_shell_writes_and_strips_setuid_without_bubblewrap(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done, _ = run(
        ws, tmp_path, home, bash("echo 'import os' > sitecustomize.py && echo x > tool && chmod 4755 tool"),
        "--permission-mode", "bypass", "--sandbox", "off",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "files changed: sitecustomize.py, tool" in done.out
    assert "files that run code later, written by shell commands: sitecustomize.py" in done.out
    assert "+import os" in done.out  # a new file's diff is shown in full
    assert "setuid/setgid bits removed from: tool" in done.out
    assert not (ws / "tool").stat().st_mode & stat.S_ISUID


def test_seccomp_numbers_match_libseccomp() -> None:
    """The syscall numbers in the filter, against libseccomp's own tables where the library exists."""
    import ctypes
    import ctypes.util

    from arnes.sandbox import seccomp

    name = ctypes.util.find_library("seccomp")
    if name is None or sys.platform != "linux":
        pytest.skip("libseccomp is not installed")
    lib = ctypes.CDLL(name)
    lib.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    for arch in {id(a): a for a in seccomp.ARCHES.values()}.values():
        for call, number in arch.syscalls.items():
            resolved = lib.seccomp_syscall_resolve_name_arch(arch.audit, call.encode())
            if resolved < 0 and call in ("fchmodat2",):
                continue  # newer than this libseccomp
            assert resolved == number, (hex(arch.audit), call)


def test_commands_get_the_allow_list_and_the_users_passthrough() -> None:
    """Not the user's environment minus a pattern (red team 4, #08): names no pattern knows stay out."""
    from arnes.sandbox.env import command_env

    environ = {
        "ANTHROPIC_API_KEY": "a", "OPENAI_BASE_URL": "b", "AWS_PROFILE": "c", "GITHUB_TOKEN": "d", "TOKEN": "e",
        "DB_PASSWORD": "f", "MY_SECRET_THING": "g", "DATABASE_URL": "postgres://u:pw@h/db", "PATH": "/bin",
        "HOME": "/h", "SSH_AUTH_SOCK": "/s", "GIT_TERMINAL_PROMPT": "1", "KEYTIMEOUT": "1", "PAGER": "less",
        "PUBLIC_URL": "https://example.org/x", "NPM_CONFIG_AUTH": "z", "BW_SESSION": "s", "VIRTUAL_ENV": "/v",
    }  # fmt: skip
    env = command_env(environ, passthrough=("GITHUB_*",))
    assert set(env) == {"PATH", "HOME", "SSH_AUTH_SOCK", "GIT_TERMINAL_PROMPT", "PAGER", "VIRTUAL_ENV",
                        "GITHUB_TOKEN", "GIT_PAGER"}  # fmt: skip
    assert env["PAGER"] == "cat" and env["GIT_TERMINAL_PROMPT"] == "0"


def test_which_parts_of_home_stay_readable(tmp_path: Path) -> None:
    from arnes.sandbox.home import home_view

    home = tmp_path / "h"
    for folder in (".cargo/bin", ".rustup", ".nvm/versions/node/v20/bin", ".local/bin", ".local/lib", "bin",
                   ".ssh", "py/versions/3.12/bin", "proj/.venv", ".config/git", ".config/gh"):  # fmt: skip
        (home / folder).mkdir(parents=True)
    (home / ".gitconfig").write_text("")
    (home / ".config" / "git" / "config").write_text("")
    (home / "py" / "versions" / "3.12" / "bin" / "python3").write_text("#!/bin/sh\n")
    (home / "py" / "versions" / "3.12" / "bin" / "python3").chmod(0o755)
    (home / "proj" / ".venv" / "pyvenv.cfg").write_text(f"home = {home}/py/versions/3.12/bin\n")
    (home / "py" / "versions" / "3.12" / "lib" / "python3.12").mkdir(parents=True)
    (home / "py" / "versions" / "3.12" / "lib" / "python3.12" / "os.py").write_text("")
    # A repository's own venv naming another folder of the user's as its interpreter's home.
    (home / "other" / "bin").mkdir(parents=True)
    (home / "hostile" / ".venv").mkdir(parents=True)
    (home / "hostile" / ".venv" / "pyvenv.cfg").write_text(f"home = {home}/other/bin\n")
    path = f"{home}/.cargo/bin:{home}/.nvm/versions/node/v20/bin:{home}/.local/bin:{home}:/usr/bin"
    venvs = [home / "proj" / ".venv", home / "hostile" / ".venv"]
    view = home_view(home, {"PATH": path}, venvs, [home / ".config"])
    readable = {p.relative_to(home).as_posix() for p in view.readable}
    assert readable == {
        ".cargo",
        ".rustup",
        ".nvm",
        ".local/bin",
        ".local/lib",
        "proj/.venv",
        "py/versions/3.12",
        "hostile/.venv",
        ".config",
    }  # fmt: skip (not "other"; nor ~/.gitconfig: commands see a copy of its inert keys, sandbox/gitconfig.py)
    secrets = {p.relative_to(home).as_posix() for p in view.secrets}
    assert secrets == {".config/gh", ".config/git/config"}  # inside ~/.config


def test_a_planted_pyvenv_cfg_binds_an_installation_never_a_folder_of_home(tmp_path: Path) -> None:
    """pyvenv.cfg is the workspace's: `home = ~/.local/bin` must not open ~/.local (red-team finding 3)."""
    from arnes.sandbox.home import home_view

    home = tmp_path / "h"
    real = home / ".local" / "share" / "uv" / "python" / "cpython-3.12"  # uv's own installation
    (real / "bin").mkdir(parents=True)
    (real / "lib" / "python3.12").mkdir(parents=True)
    (real / "lib" / "python3.12" / "os.py").write_text("")
    (real / "bin" / "python3.12").write_text("#!/bin/sh\n")
    (real / "bin" / "python3.12").chmod(0o755)
    (real / "bin" / "python3").symlink_to("python3.12")
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "python3").symlink_to(real / "bin" / "python3.12")
    (home / ".local" / "lib" / "python3.12" / "site-packages").mkdir(parents=True)  # pip's user scheme
    (home / ".local" / "lib" / "python3.12" / "os.py").write_text("")  # even so: never ~/.local itself
    (home / ".local" / "bin" / "python").write_text("#!/bin/sh\n")
    (home / ".local" / "bin" / "python").chmod(0o755)
    views = {}
    for name, cfg_home in (("uv", f"{home}/.local/bin"), ("direct", f"{real}/bin"), ("rel", ".local/bin")):
        venv = tmp_path / name / ".venv"
        venv.mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text(f"home = {cfg_home}\n")
        view = home_view(home, {"PATH": "/usr/bin"}, [venv], [])
        views[name] = {p.relative_to(home).as_posix() for p in view.readable if p.is_relative_to(home)}
    uv = ".local/share/uv/python/cpython-3.12"
    assert views == {"uv": {uv}, "direct": {uv}, "rel": set()}


def test_what_the_verify_command_writes_is_reported_too(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done, _ = run(ws, tmp_path, home, [{"text": "nothing to do"}], "--sandbox", "off", "--output-format", "json",
                  "--verify", "echo 'import os' > usercustomize.py")  # fmt: skip
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["files_changed"] == ["usercustomize.py"]
    assert report["shell_changes"]["runs_code"] == ["usercustomize.py"]


def test_a_planted_ignore_file_cannot_hide_a_change_and_git_hooks_count(tmp_path: Path) -> None:
    from arnes.tools.treewatch import TreeWatch

    (tmp_path / ".gitignore").write_text("*\n")  # the repository ignores everything
    (tmp_path / ".ignore").write_text("*\n")
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "objects").mkdir()
    (tmp_path / "app.py").write_text("old\n")
    watch = TreeWatch(tmp_path, early=False)
    watch.before_command()
    (tmp_path / "app.py").write_text("new and longer\n")
    (tmp_path / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    (tmp_path / ".git" / "objects" / "ab").write_text("internals are skipped\n")
    report = watch.report()
    assert report.named == [".git/hooks/pre-commit", "app.py"] and report.runs_code == [".git/hooks/pre-commit"]


def test_a_protected_folder_that_links_out_of_the_workspace_does_not_stop_every_command(tmp_path: Path) -> None:
    """A cloned repository ships `.claude/skills` and `.claude/commands` as links out of the
    workspace: bound read-only, their targets were not there inside and bwrap refused to start, so
    no command could run (helper red team). Writes through them stay in the sandbox's own /tmp."""
    require(Bubblewrap.unavailable())
    outside = Path(tempfile.mkdtemp(prefix="arnes-out-", dir="/var/tmp"))
    try:
        ws = tmp_path / "ws"
        (ws / ".claude").mkdir(parents=True)
        os.symlink(outside, ws / ".claude" / "skills")
        os.symlink("/tmp/arnes-nowhere-skills", ws / ".claude" / "commands")
        script = tmp_path / "s.json"
        writes = "echo hi; mkdir -p .claude/skills/evil && echo x > .claude/skills/evil/SKILL.md; echo made=$?"
        script.write_text(json.dumps({"turns": [*bash(writes), {"text": "done"}]}))
        done = run_arnes(
            "-w", str(ws), "--provider", "script", "--script", str(script), "--permission-mode", "bypassPermissions",
            "--trace", str(tmp_path / "t.jsonl"), "go",
        )  # fmt: skip
        assert done.code == 0, done.err
        [result] = [e for e in read_trace(tmp_path / "t.jsonl") if e["event"] == "tool_result"]
        assert "hi" in result["output"] and "Can't bind mount" not in result["output"], result["output"]
        assert not (outside / "evil").exists()  # the host's target is not reached
    finally:
        shutil.rmtree(outside, ignore_errors=True)
