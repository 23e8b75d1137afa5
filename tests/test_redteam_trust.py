"""Red team: a hook script under `.claude/hooks/` changes after `arnes trust` and runs with no new ask.

docs/hooks.md promises: "What you trust is the settings files and the scripts under `.arnes/hooks/`
and `.claude/hooks/`: when one of them changes (a pull), arnes asks again." The fingerprint
(permissions/trust.py) skips two kinds of scripts there:
- a script that is a link (`.claude/hooks/check.sh -> ../../tools/check.sh`, git stores links):
  the hook runs the link's target, whose changes the fingerprint never sees;
- any file past the first 200 that `rglob` yields (taken before sorting): a hooks folder with 200
  small files at its top and the real script in a subfolder.
Each test trusts the folder with `arnes trust`, changes the script as a pull would, runs arnes
and checks that the changed script did not run. Fails while the hole exists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    """Low: `.mcp.json` names `sh tools/server.sh`; the fingerprint covers `.mcp.json` but not the
    script it runs, and docs/mcp.md (unlike docs/hooks.md) says nothing about it. The server runs in
    the sandbox, so this is about what the user agreed to, not an escape."""
    import time

    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    script = ws / "tools" / "server.sh"
    server = {"command": "sh", "args": ["tools/server.sh"], "timeout": 3}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}))
    script.write_text("echo v1 > ran.txt\n")
    assert run_arnes("trust", str(ws)).code == 0
    script.write_text("echo CHANGED-AFTER-TRUST > ran.txt\n")
    _run(tmp_path, ws)
    for _ in range(30):
        if (ws / "ran.txt").exists():
            break
        time.sleep(0.1)
    ran = (ws / "ran.txt").read_text().strip() if (ws / "ran.txt").exists() else ""
    assert ran != "CHANGED-AFTER-TRUST", "a changed MCP server script ran without asking again"
