"""Issue 24: the servers `claude mcp add` wrote into Claude Code's `~/.claude.json` work unchanged.

The real `arnes` command, the real stdio server of tests/fakes/mcp_server.py, and a home folder
whose `~/.claude.json` looks like Claude Code's own: account data, tips, a projects map with this
workspace and another. Each server's `args` tool answers with the words it was started with, so
a call shows which file's entry won.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from arnes.mcp.claude_json import ClaudeJsonServers, read_claude_json
from arnes.sandbox.home import home_view
from tests.conftest import run_arnes
from tests.test_e2e_mcp import results, run_calls, workspace

SECRET = "sk-ant-oat01-NEVER-SHOWN-0123456789"


def server(ws: Path, word: str, **extra: Any) -> dict[str, Any]:
    """Claude Code's shape, as `claude mcp add NAME -- python mcp_server.py stdio WORD` writes it."""
    return {"type": "stdio", "command": sys.executable, "args": [str(ws / "mcp_server.py"), "stdio", word],
            "env": {}, **extra}  # fmt: skip


def claude_json(home: Path, ws: Path, **changes: Any) -> Path:
    """A realistic ~/.claude.json: what Claude Code keeps there besides the servers, too."""
    raw: dict[str, Any] = {
        "numStartups": 42,
        "installMethod": "native",
        "autoUpdates": True,
        "tipsHistory": {"new-user-warmup": 7, "memory-command": 3},
        "userID": "0f" * 16,
        "oauthAccount": {"accountUuid": "a-b-c", "emailAddress": "me@example.com", "accessToken": SECRET},
        "mcpServers": {
            "shared": server(ws, "user"),
            "both": server(ws, "user"),
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        },
        "projects": {
            str(ws.resolve()): {
                "allowedTools": [],
                "history": [{"display": f"paste {SECRET}", "pastedContents": {}}],
                "hasTrustDialogAccepted": True,
                "lastCost": 0.25,
                "mcpServers": {"both": server(ws, "local"), "mine": server(ws, "mine", alwaysAllow=["x"])},
            },
            "/elsewhere/other-project": {"mcpServers": {"other": server(ws, "other")}, "history": []},
        },
        **changes,
    }
    path = home / ".claude.json"
    path.write_text(json.dumps(raw, indent=2))
    return path


def setup(tmp_path: Path, project: dict[str, Any] | None = None) -> tuple[Path, Path, dict[str, str]]:
    ws = workspace(tmp_path, project or {})
    home = tmp_path / "home"
    home.mkdir()
    path = claude_json(home, ws)
    return ws, path, {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def args_calls(*names: str) -> list[dict[str, Any]]:
    return [{"name": f"mcp__{name}__args", "input": {}} for name in names]


def test_user_and_local_scope_servers_start_without_trust(tmp_path: Path) -> None:
    ws, path, env = setup(tmp_path)
    before = path.read_bytes()
    calls = args_calls("shared", "both", "mine", "other")
    run, events = run_calls(tmp_path, ws, calls, "--allow", "mcp__shared", "--allow", "mcp__both",
                            "--allow", "mcp__mine", "--allow", "mcp__other", env=env)  # fmt: skip
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__shared__args"] == (False, "user")
    assert got["mcp__both__args"] == (False, "local")  # local scope beats user scope
    assert got["mcp__mine__args"] == (False, "mine")  # a key arnes does not know (alwaysAllow) is dropped
    assert "Unknown tool 'mcp__other__args'" in got["mcp__other__args"][1]  # another project's server
    said = run.out + run.err
    legacy = [line for line in said.splitlines() if "legacy" in line]
    assert len(legacy) == 1 and "MCP server legacy failed" in legacy[0]  # an SSE server is tried (none listens)
    assert SECRET not in said and "me@example.com" not in said and "Traceback" not in said
    assert SECRET not in (tmp_path / "t.jsonl").read_text()
    assert path.read_bytes() == before  # read, never written


def test_precedence_local_beats_project_beats_user(tmp_path: Path) -> None:
    ws, _, env = setup(tmp_path)
    project = {"shared": server(ws, "project"), "both": server(ws, "project")}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": project}))
    run, events = run_calls(tmp_path, ws, args_calls("shared", "both"), "--trust",
                            "--allow", "mcp__shared", "--allow", "mcp__both", env=env)  # fmt: skip
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__shared__args"] == (False, "project")  # the project's .mcp.json beats user scope
    assert got["mcp__both__args"] == (False, "local")  # local scope beats the project's .mcp.json


def test_mcp_list_and_doctor_name_the_file_and_scope(tmp_path: Path) -> None:
    ws, _, env = setup(tmp_path)
    listed = run_arnes("mcp", "list", "-w", str(ws), env=env)
    assert listed.code == 0, listed.err
    assert "shared  started" in listed.out and "from ~/.claude.json)" in listed.out
    assert "mine  started" in listed.out and "from ~/.claude.json (this project))" in listed.out
    assert "other" not in listed.out and SECRET not in listed.out + listed.err
    doctor = run_arnes("doctor", "-w", str(ws), env=env)
    assert "(~/.claude.json): starts, sandboxed" in doctor.out, doctor.out
    assert "mine `" in doctor.out and "(~/.claude.json (this project)): starts, sandboxed" in doctor.out


def test_a_folder_inside_a_repository_takes_the_repositorys_local_scope(tmp_path: Path) -> None:
    """Claude Code records a project under its git root: arnes run in a folder below finds it."""
    ws, _, env = setup(tmp_path)
    inner = ws / "pkg"
    inner.mkdir()
    assert "mine `" not in run_arnes("doctor", "-w", str(inner), env=env).out  # no repository: not this project
    (ws / ".git").mkdir()
    doctor = run_arnes("doctor", "-w", str(inner), env=env)
    assert "mine `" in doctor.out and "(~/.claude.json (this project)): starts, sandboxed" in doctor.out, doctor.out


def test_claude_config_dir_moves_the_file(tmp_path: Path) -> None:
    ws, _, env = setup(tmp_path)
    moved = tmp_path / "cc"
    moved.mkdir()
    (moved / ".claude.json").write_text(json.dumps({"mcpServers": {"moved": server(ws, "moved")}}))
    listed = run_arnes("mcp", "list", "-w", str(ws), env={**env, "CLAUDE_CONFIG_DIR": str(moved)})
    assert "moved  started" in listed.out and f"from {moved / '.claude.json'})" in listed.out, listed.out
    assert "shared" not in listed.out  # ~/.claude.json is not Claude Code's file then
    check = run_arnes("permissions", "check", "Read", str(moved / ".credentials.json"), "-w", str(ws),
                      env={**env, "CLAUDE_CONFIG_DIR": str(moved)})  # fmt: skip
    assert f"deny: rule Read({moved / '.credentials.json'}) (from built in: secrets)" in check.out, check.out


def test_a_broken_file_is_one_line_and_arnes_runs_on(tmp_path: Path) -> None:
    ws, path, env = setup(tmp_path, {"fake": {"command": sys.executable, "args": ["mcp_server.py", "stdio"]}})
    path.write_text(json.dumps({"oauthAccount": {"accessToken": SECRET}, "mcpServers": {}})[:-3])
    listed = run_arnes("--trust", "mcp", "list", "-w", str(ws), env=env)
    assert listed.code == 0, listed.err
    said = [line for line in (listed.out + listed.err).splitlines() if ".claude.json" in line]
    assert len(said) == 1 and "~/.claude.json: its MCP servers are not read: not JSON" in said[0], said
    assert "fix the file" in said[0]
    assert "fake  started" in listed.out  # the project's servers still start
    assert SECRET not in listed.out + listed.err and "Traceback" not in listed.err


def test_the_model_may_not_read_the_file_in_any_mode(tmp_path: Path) -> None:
    ws, path, env = setup(tmp_path)
    for mode in ("default", "bypass"):
        check = run_arnes("--permission-mode", mode, "permissions", "check", "Read", str(path), "-w", str(ws),
                          env=env)  # fmt: skip
        assert "deny: rule Read(~/.claude.json) (from built in: secrets)" in check.out.splitlines(), (mode, check.out)
    # Its servers start without trust: the file tools never write it, whatever the mode.
    write = run_arnes("--permission-mode", "bypass", "permissions", "check", "Write", str(path), "-w", str(ws), env=env)
    assert write.out.startswith("deny: ") and "is protected: the file tools never write it" in write.out, write.out
    credentials = Path(env["HOME"]) / ".claude" / ".credentials.json"
    check = run_arnes("permissions", "check", "Read", str(credentials), "-w", str(ws), env=env)
    assert "deny: rule Read(~/.claude/.credentials.json)" in "\n".join(check.out.splitlines()), check.out


def test_sandboxed_commands_never_see_claude_codes_credentials(tmp_path: Path) -> None:
    """The user lets commands read ~/.claude (their skills, say): its credentials stay hidden, and so
    does ~/.claude.json wherever CLAUDE_CONFIG_DIR=~/.claude put it."""
    home = tmp_path / "h"
    (home / ".claude" / "skills").mkdir(parents=True)
    for name in (".claude.json", ".claude/.claude.json", ".claude/.credentials.json", ".claude/settings.json"):
        (home / name).write_text("{}")
    view = home_view(home, {"PATH": "/usr/bin"}, [], [home / ".claude"])
    assert {p.relative_to(home).as_posix() for p in view.secrets} == {
        ".claude/.claude.json",
        ".claude/.credentials.json",
        ".claude/settings.json",  # its `env` may hold tokens that are arnes's, not the commands'
    }


def test_the_read_is_bounded_and_odd_shapes_are_quiet(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    path = claude_json(tmp_path, ws)
    big = read_claude_json(path, ws, "~/.claude.json", max_bytes=100)
    assert (big.user, big.local) == ({}, {}) and len(big.warnings) == 1
    assert big.warnings[0].startswith("~/.claude.json: its MCP servers are not read: the file is over 100 bytes")
    path.write_text(json.dumps({"projects": [1], "mcpServers": None, "theme": "dark"}))
    assert read_claude_json(path, ws, "~/.claude.json") == ClaudeJsonServers()  # nothing to say
    path.write_text("[]")
    assert "is not a JSON object" in read_claude_json(path, ws, "~/.claude.json").warnings[0]


def test_codex_config_toml_servers_start_as_the_users_own(tmp_path: Path) -> None:
    """Codex's `[mcp_servers.NAME]` in ~/.codex/config.toml (they were not read): a user's server,
    under ~/.claude.json's of the same name; `enabled = false` and a broken entry are left out."""
    ws, _, env = setup(tmp_path)
    codex = Path(env["HOME"]) / ".codex"
    codex.mkdir()
    started = (
        f'command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(ws / "mcp_server.py"))}, "stdio", "codex"]'
    )
    (codex / "config.toml").write_text(
        f'model = "o3"\n\n[mcp_servers.codexsrv]\n{started}\nstartup_timeout_sec = 20\ncwd = "/tmp"\n\n'
        f"[mcp_servers.shared]\n{started}\n\n"
        '[mcp_servers.off]\ncommand = "no-such-server"\nenabled = false\n\n'
        "[mcp_servers.broken]\nargs = [1]\n"
    )
    run, events = run_calls(tmp_path, ws, args_calls("codexsrv", "shared"), "--allow", "mcp__codexsrv",
                            "--allow", "mcp__shared", env=env)  # fmt: skip
    assert run.code == 0, run.err
    got = results(events)
    assert got["mcp__codexsrv__args"] == (False, "codex")
    assert got["mcp__shared__args"] == (False, "user")  # ~/.claude.json's comes first
    said = run.out + run.err
    assert "mcp_servers.codexsrv: keys arnes does not use, ignored: cwd" in said
    assert "mcpServers.broken.args.0: Input should be a valid string; that server is left out" in said
    assert "no-such-server" not in said


def test_codex_keys_arnes_does_not_use_are_named_and_its_doc_limit_is_the_cut(tmp_path: Path) -> None:
    """Codex's model, approval and profile keys are named in one warning (a user who set
    `approval_policy` learns arnes does not follow it); `project_doc_max_bytes` moves the 32 KiB cut."""
    from tests.fakes.llm_server import FakeLLMServer

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text(
        "# Rules\n" + "- keep the build green and the functions short\n" * 1000 + "END-MARK\n"
    )
    codex = Path(os.environ["HOME"]) / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        'model = "o4-mini"\napproval_policy = "on-request"\nprofile = "fast"\nproject_doc_max_bytes = 65536\n'
        '[profiles.fast]\nmodel = "o3"\n'
    )
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes("-p", "--provider", "openai", "--base-url", server.url + "/v1", "--model", "m",
                        "--context-window", "200000", "-w", str(ws), "hi", env={"OPENAI_API_KEY": "t"})  # fmt: skip
        [(_, body)] = server.requests
    assert run.code == 0, run.err
    warned = [line for line in run.out.splitlines() if "Codex keys" in line]  # with the banner
    assert warned == [f"warning: {codex}/config.toml: Codex keys arnes does not use, ignored: "
                      "approval_policy, model, profile, profiles"]  # fmt: skip
    assert "END-MARK" in json.dumps(body["messages"]) and "instructions stop" not in run.out + run.err


def test_codex_doc_limit_is_held_to_a_sane_range(tmp_path: Path) -> None:
    from arnes.extensions.codex_config import DOC_BYTES, codex_config

    (tmp_path / "config.toml").write_text("project_doc_max_bytes = 1073741824\n")
    big = codex_config(tmp_path)
    assert big.doc_max_bytes == DOC_BYTES[1] == 1024 * 1024 and "1048576 is used" in big.notes[0]
    (tmp_path / "config.toml").write_text('project_doc_max_bytes = "64k"\n')
    assert codex_config(tmp_path).doc_max_bytes is None and "is a number of bytes" in codex_config(tmp_path).notes[0]
    (tmp_path / "config.toml").write_text("project_doc_max_bytes = 8192\n[mcp_servers]\n")
    assert (codex_config(tmp_path).doc_max_bytes, codex_config(tmp_path).settings_notes) == (8192, [])
