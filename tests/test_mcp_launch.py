"""MCP servers start as their READMEs configure them (issue 24.4): `${VAR}` expansion as Claude
Code does it, a server that dies says why (the end of its stderr), and package launchers (npx,
uvx, pipx, installed tools) of the user's own servers work inside bubblewrap.

Real parts: the fake server on the official SDK (tests/fakes/mcp_server.py), the real `arnes`
command, real bubblewrap, and real `uvx`/`npx` fetching real packages where the index answers.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arnes.mcp.expand import ExpansionError, VariableCheck, expand_server, expand_text
from arnes.mcp.launchers import launcher_needs
from arnes.mcp.settings import McpServer, ServerEntry
from arnes.mcp.start import launcher_caches, launcher_spec
from arnes.sandbox.base import SandboxSpec
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.test_e2e_mcp import results, run_calls, stdio, workspace

needs_bwrap = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")
USER = VariableCheck(user=True)
PROJECT = VariableCheck(user=False)


def test_expansion_takes_claude_codes_two_forms_and_nothing_else() -> None:
    env = {"WORD": "w", "EMPTY": ""}
    table = {
        "${WORD}": "w",
        "a-${WORD}-b": "a-w-b",
        "${WORD:-d}": "w",
        "${NOPE:-d}": "d",
        "${NOPE:-}": "",
        "${EMPTY:-d}": "",  # set (if empty) wins, as Claude Code's `:-`  reads it
        "$WORD": "$WORD",  # a bare $VAR is left as written
        "${NOPE:-http://x:1/y}": "http://x:1/y",
        "$${WORD}": "$w",
        "${WORD%/}": "${WORD%/}",  # shell parameter expansion is not Claude Code's: left as written
    }
    for text, want in table.items():
        assert expand_text(text, env, USER) == want, text
    with pytest.raises(ExpansionError, match=r"\$\{NOPE\} is not set and has no default: export NOPE"):
        expand_text("--key=${NOPE}", env, USER)


def test_all_five_fields_expand() -> None:
    server = McpServer(
        command="${BIN}", args=["${A}"], env={"K": "${A}"}, url="http://${HOST:-h}/mcp", headers={"X": "Bearer ${A}"}
    )
    got = expand_server(server, {"BIN": "/bin/srv", "A": "1"}, USER)
    assert (got.command, got.args, got.env, got.url, got.headers) == (
        "/bin/srv", ["1"], {"K": "1"}, "http://h/mcp", {"X": "Bearer 1"},
    )  # fmt: skip


def test_a_projects_file_reads_only_where_and_who_unless_the_user_lets_commands_see_more() -> None:
    """Secret names no pattern knows went out to a project's URL when a pattern decided (red team)."""
    env = {"GITHUB_TOKEN": "ghp_x", "DB": "postgres://u:pw@h/db", "HOME": "/home/u", "USER": "u", "LC_ALL": "C",
           "BW_SESSION": "bw", "SLACK_WEBHOOK_URL": "https://hooks/x", "CI_JOB_JWT": "eyJ", "TOKEN_GITHUB": "t",
           "GH_TOKEN2": "g", "OP_SESSION_my": "op", "WORD": "w", "HOME2": "x"}  # fmt: skip
    assert expand_text("${HOME}/x ${USER} ${LC_ALL}", env, PROJECT) == "/home/u/x u C"
    for name in ("GITHUB_TOKEN", "DB", "BW_SESSION", "SLACK_WEBHOOK_URL", "CI_JOB_JWT", "TOKEN_GITHUB", "GH_TOKEN2",
                 "OP_SESSION_my", "WORD", "HOME2"):  # fmt: skip
        with pytest.raises(ExpansionError, match=f"{name}}} is not a variable a project's file may read"):
            expand_text(f"Bearer ${{{name}}}", env, PROJECT)
        assert expand_text(f"${{{name}}}", env, USER) == env[name]  # the user's own file reads anything
    assert expand_text("${GITHUB_TOKEN}", env, VariableCheck(user=False, passthrough=["GITHUB_*"])) == "ghp_x"
    assert expand_text("${GITHUB_TOKEN:-none}", {}, PROJECT) == "none"  # unset: nothing to leak


def user_home(tmp_path: Path, servers: dict[str, Any]) -> tuple[Path, Path]:
    """A home folder whose ~/.config/arnes/settings.json lists `servers` (the user's own)."""
    home = tmp_path / "home"
    (home / ".config" / "arnes").mkdir(parents=True)
    settings = home / ".config" / "arnes" / "settings.json"
    settings.write_text(json.dumps({"mcpServers": servers}))
    return home, settings


def home_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def test_a_users_server_is_expanded_and_an_unset_variable_is_one_line(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {})
    script = str(ws / "mcp_server.py")
    home, settings = user_home(tmp_path, {
        "fake": {"command": "${ARNES_T_PYTHON}", "args": [script, "stdio", "--x=${ARNES_T_WORD:-fallback}", "$HOME"],
                 "env": {"ARNES_TEST_VALUE": "v-${ARNES_T_VALUE}"}},
        "broken": {"command": sys.executable, "args": [script, "stdio", "${ARNES_T_MISSING}"]},
    })  # fmt: skip
    env = {**home_env(home), "ARNES_T_PYTHON": sys.executable, "ARNES_T_VALUE": "hello"}
    calls = [{"name": "mcp__fake__args", "input": {}}, {"name": "mcp__fake__where", "input": {}}]
    run, events = run_calls(tmp_path, ws, calls, "--allow", "mcp__fake", env=env)
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__fake__args"] == (False, "--x=fallback $HOME")
    assert "value=v-hello" in got["mcp__fake__where"][1]
    said = [line for line in (run.out + run.err).splitlines() if "ARNES_T_MISSING" in line]
    assert len(said) == 1 and said[0].endswith(
        f"warning: MCP server broken failed: not started: {settings}: mcpServers.broken: ${{ARNES_T_MISSING}} "
        "is not set and has no default: export ARNES_T_MISSING before starting arnes, or write "
        "${ARNES_T_MISSING:-DEFAULT}; its tools are not offered"
    ), run.out + run.err
    assert "Traceback" not in run.err


def test_a_trusted_projects_file_expands_but_never_sends_a_secret(tmp_path: Path) -> None:
    """A cloned repository's `.mcp.json` puts the user's token in an argument (it could as well be
    a URL or a header): the server does not start and the token is nowhere."""
    ws = workspace(tmp_path, {})
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "fake": {"command": sys.executable, "args": [str(ws / "mcp_server.py"), "stdio",
                                                     "${USER}-${ARNES_NO:-d}@${CLAUDE_PROJECT_DIR}"]},
        "leak": {"command": sys.executable, "args": [str(ws / "mcp_server.py"), "stdio", "${ARNES_T_API_TOKEN}"]},
    }}))  # fmt: skip
    env = {"USER": "plain", "ARNES_T_API_TOKEN": "sekrit-4242"}
    calls = [{"name": "mcp__fake__args", "input": {}}, {"name": "mcp__leak__args", "input": {}}]
    untrusted, _ = run_calls(tmp_path, ws, calls, "--allow", "mcp__fake", "--allow", "mcp__leak", env=env)
    assert "is not a variable" not in untrusted.out + untrusted.err  # untrusted: not even read
    run, events = run_calls(tmp_path, ws, calls, "--trust", "--allow", "mcp__fake", "--allow", "mcp__leak", env=env)
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__fake__args"] == (False, f"plain-d@{ws.resolve()}")  # the project's folder: arnes's own name
    assert got["mcp__leak__args"][0] is True
    assert "${ARNES_T_API_TOKEN} is not a variable a project's file may read" in run.out + run.err
    trace = (tmp_path / "t.jsonl").read_text()
    assert "sekrit-4242" not in run.out + run.err + trace


def test_a_server_that_dies_at_start_shows_the_end_of_its_stderr(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"loud": stdio("complain"), "fake": stdio()})
    run, _ = run_calls(tmp_path, ws, [{"name": "mcp__fake__add", "input": {"a": 1, "b": 2}}], "--trust",
                       "--allow", "mcp__fake")  # fmt: skip
    assert run.code == 0, run.err
    lines = (run.out + run.err).splitlines()
    first = next(i for i, line in enumerate(lines) if "MCP server loud failed" in line)
    assert "Connection closed" in lines[first] and "the end of its stderr follows" in lines[first]
    tail = [line.strip() for line in lines[first + 1 : first + 21]]
    assert tail[-1] == "stderr| Error: FAKE_SERVICE_URL is required (set it in the server's env)"
    assert tail[0] == "stderr| starting step 11" and len(tail) == 20  # bounded: the last 20 lines
    assert "starting step 10" not in run.out + run.err
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws))
    assert "stderr| Error: FAKE_SERVICE_URL is required" in listed.out


def test_launchers_and_installed_tools_are_recognised(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tool = home / ".local/share/uv/tools/srv/bin/srv"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/srv").symlink_to(tool)
    env = {"PATH": f"{home / '.local/bin'}:/usr/bin"}
    npx = launcher_needs(["npx", "-y", "pkg"], home, env)
    assert npx is not None and npx.writable == (home / ".npm",) and npx.network
    uvx = launcher_needs(["/usr/local/bin/uvx", "pkg"], home, env)
    assert uvx is not None and uvx.writable == (home / ".cache/uv",) and uvx.network
    assert uvx.readable == ()  # no Python installed by uv here: nothing of ~/.local/share/uv
    (home / ".local/share/uv/python").mkdir()
    uvx = launcher_needs(["uvx", "pkg"], home, env)
    assert uvx is not None and uvx.readable == (home / ".local/share/uv/python",)  # read-only, never its tools
    assert launcher_needs(["uv", "tool", "run", "pkg"], home, env) is not None
    assert launcher_needs(["uv", "run", "server.py"], home, env) is None  # a project's run: not a launcher
    pipx = launcher_needs(["pipx", "run", "pkg"], home, env)
    assert pipx is not None and pipx.writable == (
        home / ".cache/pipx", home / ".local/share/pipx/shared", home / ".local/state/pipx/log",
    )  # fmt: skip
    assert launcher_needs(["pipx", "install", "pkg"], home, env) is None
    installed = launcher_needs(["srv"], home, env)
    assert installed is not None and installed.readable == (home / ".local/share/uv",) and not installed.network
    assert launcher_needs(["python3", "-m", "srv"], home, env) is None
    moved = launcher_needs(["uvx", "pkg"], home, {"XDG_CACHE_HOME": str(home / "c"), "XDG_DATA_HOME": "/elsewhere"})
    assert moved is not None and moved.writable == (home / "c/uv",)


@needs_bwrap
def test_bubblewrap_binds_only_the_named_caches_read_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".npm").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE")
    (home / "notes").write_text("mine")
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    own = tmp_path / "arnes-cache" / "npm"
    own.mkdir(parents=True)
    script = "echo cached > ~/.npm/entry; echo lost > ~/other; cat ~/.ssh/id_ed25519 ~/notes 2>&1; true"
    for writable in ((), ((own, home / ".npm"),)):
        box = Bubblewrap(SandboxSpec(ws, writable=writable))
        with box.wrap(["sh", "-c", script], ws) as confined:
            done = subprocess.run(confined.argv, env=confined.env, pass_fds=confined.pass_fds, capture_output=True,
                                  text=True, check=False)  # fmt: skip
        box.close()
        assert "PRIVATE" not in done.stdout and "mine" not in done.stdout
        assert (own / "entry").exists() == bool(writable), done.stdout + done.stderr
        assert not (home / ".npm" / "entry").exists()  # the user's own cache is never written
        assert not (home / "other").exists()


def test_a_launcher_gets_the_network_but_not_unix_sockets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    base = SandboxSpec(tmp_path)

    def entry_for(server: dict[str, Any]) -> ServerEntry:
        return ServerEntry("s", McpServer.model_validate(server), "settings.json", True, True)

    def spec_for(server: dict[str, Any], network: bool = False) -> SandboxSpec:
        """As start.py's sandbox_for: the user's "network" first, then the launcher's exception."""
        return launcher_spec(dataclasses.replace(base, network=network), entry_for(server), {})

    npx = spec_for({"command": "npx", "args": ["-y", "pkg"]})
    [(source, inside)] = npx.writable
    assert npx.network and not npx.sockets and inside == tmp_path / "home" / ".npm"
    own = launcher_caches(tmp_path, {}, entry_for({"command": "npx", "args": ["-y", "pkg"]}))
    assert source.is_dir() and source.parent == own and source.name == ".npm"
    assert not inside.exists()  # the user's own cache is not made, nor bound
    assert not spec_for({"command": "npx", "network": False}).network  # the user said no
    assert spec_for({"command": "npx", "network": True}, network=True).sockets  # the user's own "network": true
    assert spec_for({"command": "python3", "args": ["-m", "srv"]}) == base


@needs_bwrap
def test_bubblewrap_with_the_network_and_no_unix_sockets(tmp_path: Path) -> None:
    probe = "import socket\ntry:\n socket.socket(socket.AF_UNIX).close(); print('unix')\nexcept OSError: print('no')"
    for spec, want in ((SandboxSpec(tmp_path, network=True), "unix"),
                       (SandboxSpec(tmp_path, network=True, unix_sockets=False), "no")):  # fmt: skip
        box = Bubblewrap(spec)
        with box.wrap([sys.executable, "-c", probe], tmp_path) as confined:
            done = subprocess.run(confined.argv, env=confined.env, pass_fds=confined.pass_fds, capture_output=True,
                                  text=True, check=False)  # fmt: skip
        box.close()
        assert done.stdout.strip() == want, done.stderr


def reachable(host: str) -> bool:
    try:
        socket.create_connection((host, 443), timeout=10).close()
        return True
    except OSError:
        return False


def launcher_run(tmp_path: Path, command: list[str], *, project: bool = False) -> str:
    """`arnes mcp list` for a server run by a package launcher, in the user's settings (or a
    trusted project's .mcp.json), with a fresh home folder: the launcher fetches the package."""
    server = {"command": command[0], "args": command[1:], "timeout": 240}
    home, _ = user_home(tmp_path, {} if project else {"pkg": server})
    ws = workspace(tmp_path, {"pkg": server} if project else {})
    env = home_env(home)
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws), env=env, timeout=300)
    assert listed.code == 0, listed.err
    return listed.out


@needs_bwrap
@pytest.mark.skipif(shutil.which("uvx") is None, reason="no uvx here (pip install uv)")
@pytest.mark.skipif(not reachable("pypi.org"), reason="the package index does not answer")
def test_uvx_runs_a_users_server_in_the_sandbox_and_not_a_projects(tmp_path: Path) -> None:
    out = launcher_run(tmp_path / "user", ["uvx", "mcp-server-time"])
    assert "pkg  started  (stdio, sandbox bubblewrap: uvx mcp-server-time" in out, out
    assert "mcp__pkg__get_current_time" in out
    # The packages stay for the next run, in arnes's folder for this workspace, not in the user's cache.
    assert [p.name for p in (tmp_path / "user" / "home" / ".cache" / "arnes" / "launchers").glob("*/*/.cache/uv")]
    assert not (tmp_path / "user" / "home" / ".cache" / "uv").exists()
    project = launcher_run(tmp_path / "project", ["uvx", "mcp-server-time"], project=True)
    assert "pkg  failed" in project and "stderr| " in project, project  # no network, no cache: it says why


@needs_bwrap
@pytest.mark.skipif(shutil.which("npx") is None, reason="no npx here")
@pytest.mark.skipif(not reachable("registry.npmjs.org"), reason="npm's registry does not answer")
def test_npx_runs_a_users_server_in_the_sandbox(tmp_path: Path) -> None:
    out = launcher_run(tmp_path, ["npx", "-y", "@modelcontextprotocol/server-memory"])
    assert "pkg  started" in out and "mcp__pkg__read_graph" in out, out
    [cache] = (tmp_path / "home" / ".cache" / "arnes" / "launchers").glob("*/*/.npm")
    assert any(cache.iterdir()) and not (tmp_path / "home" / ".npm").exists()


@needs_bwrap
@pytest.mark.skipif(shutil.which("pipx") is None, reason="no pipx here (pip install pipx)")
@pytest.mark.skipif(not reachable("pypi.org"), reason="the package index does not answer")
def test_pipx_run_runs_a_users_server_in_the_sandbox(tmp_path: Path) -> None:
    out = launcher_run(tmp_path, ["pipx", "run", "mcp-server-time"])
    assert "pkg  started" in out and "mcp__pkg__get_current_time" in out, out
    assert not (tmp_path / "home" / ".local/share/pipx/venvs").exists()  # nothing installed for good


@needs_bwrap
@pytest.mark.skipif(shutil.which("uv") is None, reason="no uv here (pip install uv)")
@pytest.mark.skipif(not reachable("pypi.org"), reason="the package index does not answer")
def test_a_tool_uv_installed_runs_from_its_link_in_local_bin(tmp_path: Path) -> None:
    """`uv tool install mcp-server-time` and `"command": "mcp-server-time"`, as its README says:
    ~/.local/bin/mcp-server-time is a link into ~/.local/share/uv/tools, which the sandbox shows."""
    home, _ = user_home(tmp_path, {"pkg": {"command": "mcp-server-time", "timeout": 120}})
    path = f"{home / '.local/bin'}:{os.environ['PATH']}"
    env = {**home_env(home), "PATH": path, "UV_TOOL_BIN_DIR": str(home / ".local/bin")}
    installed = subprocess.run(["uv", "tool", "install", "mcp-server-time"], env={**os.environ, **env},
                               capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (home / ".local/bin/mcp-server-time").is_symlink()
    ws = workspace(tmp_path, {})
    listed = run_arnes("mcp", "list", "-w", str(ws), env=env, timeout=300)
    assert "pkg  started  (stdio, sandbox bubblewrap: mcp-server-time" in listed.out, listed.out + listed.err


def test_each_workspace_and_server_has_its_own_launcher_caches(tmp_path: Path) -> None:
    """A server one repository can steer writes only where that server reads: not another
    workspace's, nor another server's of the same workspace (red team 4, #10)."""

    def entry(name: str, *args: str) -> ServerEntry:
        return ServerEntry(name, McpServer(command="npx", args=list(args)), "settings.json", True, True)

    lint, gh = entry("lint", "-y", "lint-mcp"), entry("github", "-y", "gh-mcp")
    a, b = launcher_caches(tmp_path / "a", {}, lint), launcher_caches(tmp_path / "b", {}, lint)
    assert a != b and a.parent.parent == b.parent.parent
    assert launcher_caches(tmp_path / "a", {}, gh) != a and launcher_caches(tmp_path / "a", {}, gh).parent == a.parent
    assert launcher_caches(tmp_path / "a", {}, entry("lint", "-y", "other")) != a  # another package under the name
    assert launcher_caches(tmp_path / "a", {}, entry("lint", "-y", "lint-mcp")) == a  # the same server, next time
    assert (
        launcher_caches(tmp_path / "a", {"XDG_CACHE_HOME": str(tmp_path / "c")}, lint).parent.parent
        == tmp_path / "c/arnes/launchers"
    )
    assert launcher_caches(tmp_path / "a", {"XDG_CACHE_HOME": "relative"}, lint) == a  # only an absolute one counts


def test_a_projects_package_launcher_is_not_started_and_says_why(tmp_path: Path) -> None:
    """A README's `npx -y PKG` in a project's .mcp.json: with no network it could fetch nothing and
    would only time out; the line says why at once and what to do."""
    ws = workspace(tmp_path, {})
    server = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"filesystem": server}}))
    run, _ = run_calls(tmp_path, ws, [], "--trust")
    said = run.out + run.err
    assert run.code == 0, said
    assert "mcpServers.filesystem: npx fetches packages, and a project's servers run with no network" in said
    assert "no answer within" not in said
