"""The trust fingerprint sees every script a trusted folder runs (red-team finding 5).

First found by the red team: a hook script under `.claude/hooks/` changed after `arnes trust` and ran with no new ask.

docs/hooks.md promises: "What you trust is the settings files and the scripts under `.arnes/hooks/`
and `.claude/hooks/`: when one of them changes (a pull), arnes asks again." The fingerprint
(permissions/trust.py) skips two kinds of scripts there:
- a script that is a link (`.claude/hooks/check.sh -> ../../tools/check.sh`, git stores links):
  the hook runs the link's target, whose changes the fingerprint never sees;
- any file past the first 200 that `rglob` yields (taken before sorting): a hooks folder with 200
  small files at its top and the real script in a subfolder.
Each test trusts the folder with `arnes trust`, changes the script as a pull would, runs arnes
and checks that the changed script did not run. The rest checks the fingerprint itself: a
linked hooks folder, and the scripts that hooks and MCP servers name elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arnes.permissions.trust import TrustStore
from tests.conftest import run_arnes


def _workspace(tmp_path: Path, command: str) -> Path:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return ws


def _run(tmp_path: Path, ws: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "go")
    assert done.code == 0, done.err


def _check(tmp_path: Path, ws: Path, script: Path) -> None:
    script.write_text("echo v1 > ran.txt\n")
    assert run_arnes("trust", str(ws)).code == 0
    _run(tmp_path, ws)
    assert (ws / "ran.txt").read_text().strip() == "v1"  # trusted: the hook the user saw runs
    script.write_text("echo CHANGED-AFTER-TRUST > ran.txt\n")  # what a later pull brings
    (ws / "ran.txt").unlink()
    _run(tmp_path, ws)
    ran = (ws / "ran.txt").read_text().strip() if (ws / "ran.txt").exists() else ""
    assert ran != "CHANGED-AFTER-TRUST", "a changed hook script under .claude/hooks ran without asking again"


def test_a_linked_hook_script_that_changes_asks_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/check.sh")
    (ws / "tools").mkdir()
    (ws / ".claude" / "hooks").mkdir()
    os.symlink("../../tools/check.sh", ws / ".claude" / "hooks" / "check.sh")
    _check(tmp_path, ws, ws / "tools" / "check.sh")


def test_a_hook_script_past_200_files_that_changes_asks_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/zz/check.sh")
    folder = ws / ".claude" / "hooks"
    (folder / "zz").mkdir(parents=True)
    for i in range(200):
        (folder / f"pad{i:03}.txt").write_text("")
    _check(tmp_path, ws, folder / "zz" / "check.sh")


def test_an_mcp_server_script_that_changes_after_trust_asks_again(tmp_path: Path) -> None:
    """`.mcp.json` names `sh tools/server.sh`: the script is part of what the user trusted (the
    server runs in the sandbox, so this is about what the user agreed to, not an escape)."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    script = ws / "tools" / "server.sh"
    server = {"command": "sh", "args": ["tools/server.sh"], "timeout": 3}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}))
    script.write_text("echo v1 > ran.txt\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (ws / "README.md").write_text("not named by any server\n")
    assert store.status(ws) == "trusted"
    script.write_text("echo CHANGED-AFTER-TRUST > ran.txt\n")
    assert store.status(ws) == "changed"


@pytest.mark.parametrize("arg", ["${PWD}/tools/server.sh", "${HERE:-.}/tools/server.sh"])
def test_an_mcp_server_script_named_through_a_variable_counts(tmp_path: Path, arg: str) -> None:
    """A server's `${VAR}` is expanded when it starts (issue 24.4): `${PWD}/tools/server.sh` runs
    the workspace's script when arnes runs there, so a change to it asks again too."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": {"command": "sh", "args": [arg]}}}))
    (ws / "tools" / "server.sh").write_text("v1\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (ws / "tools" / "server.sh").write_text("v2\n")
    assert store.status(ws) == "changed"


def test_a_script_a_hook_command_names_outside_the_hooks_folders_counts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, '"$CLAUDE_PROJECT_DIR"/tools/check.sh --fast')
    (ws / "tools").mkdir()
    (ws / "tools" / "check.sh").write_text("v1\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (ws / "tools" / "check.sh").write_text("v2\n")
    assert store.status(ws) == "changed"


def test_a_linked_hooks_folder_is_walked_and_its_link_counts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/check.sh")
    (ws / "tools" / "a").mkdir(parents=True)
    (ws / "tools" / "b").mkdir(parents=True)
    (ws / "tools" / "a" / "check.sh").write_text("v1\n")
    (ws / "tools" / "b" / "check.sh").write_text("v1\n")
    os.symlink("../tools/a", ws / ".claude" / "hooks")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (ws / "tools" / "a" / "check.sh").write_text("v2\n")
    assert store.status(ws) == "changed"
    store.record(ws, True)
    os.unlink(ws / ".claude" / "hooks")
    os.symlink("../tools/b", ws / ".claude" / "hooks")  # same bytes, another folder: the link text counts
    assert store.status(ws) == "changed"


@pytest.mark.parametrize(
    ("entry", "how"),
    [("__main__.py", "mcp"), ("helpers.py", "mcp"), ("index.js", "hook")],
)
def test_a_folder_run_as_a_program_counts_whole_but_not_its_bytecode(tmp_path: Path, entry: str, how: str) -> None:
    """`python3 srvdir` runs srvdir/__main__.py, which imports its siblings; `node hookpkg` runs its
    index.js (red team: a change to either ran after trust with no new question)."""
    ws = tmp_path / "ws"
    pkg = ws / "pkg"
    pkg.mkdir(parents=True)
    (pkg / ("index.js" if entry == "index.js" else "__main__.py")).write_text("v1\n")
    (pkg / "helpers.py").write_text("v1\n")
    if how == "mcp":
        (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": {"command": "python3", "args": ["pkg"]}}}))
    else:
        (ws / ".claude").mkdir()
        hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": "node pkg"}]}]}
        (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("not run by any hook or server\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "helpers.cpython-311.pyc").write_bytes(b"written as it ran")
    (ws / "src" / "app.py").write_text("the user's own work\n")
    assert store.status(ws) == "trusted"  # bytecode and code no program runs do not ask again
    (pkg / entry).write_text("v2\n")
    assert store.status(ws) == "changed"
