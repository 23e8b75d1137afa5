"""SessionStart hooks' CLAUDE_ENV_FILE (Claude Code): the `export NAME=value` lines a hook writes
there reach every later Bash command of the session; the file is read as data, outside the
workspace, and what commands' environment never gets (secrets, code-running names) is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arnes.extensions.hook_env import read_env_file
from tests.test_e2e_hooks import bash, hook, hook_runs, run

WS = Path("/work/ws")


@pytest.mark.parametrize(
    ("line", "got"),
    [
        ("export NODE_ENV=production", {"NODE_ENV": "production"}),
        ("NODE_ENV=production", {"NODE_ENV": "production"}),
        ("export GREETING='a b $HOME'", {"GREETING": "a b $HOME"}),  # single quotes: as written
        ('export STAGE="blue-$USER"', {"STAGE": "blue-me"}),
        ("export STAGE=${USER}x  # a comment", {"STAGE": "mex"}),
        ('export PATH="$PATH:/opt/x/bin:./node_modules/.bin:/work/ws/.venv/bin"', {"PATH": "/usr/bin:/opt/x/bin"}),
        ("export API_TOKEN=abc", {}),  # a secret: what commands print reaches the model
        ("export DB_URL=postgres://u:p@host/db", {}),
        ("export BASH_ENV=/tmp/x.sh", {}),  # makes bash run code
        ("export LD_PRELOAD=/tmp/x.so", {}),
        ("export GIT_SSH_COMMAND=x", {}),  # changes what a judged git runs
        ("export NODE_OPTIONS='--require ./x.js'", {}),
        ("export WHO=$(id -un)", {}),  # needs a shell: the file is not run
        ("export WHO=`id -un`", {}),
        ("export TWO=a b", {}),
        ("unset NODE_ENV", {}),
        ("# only a comment", {}),
    ],
)
def test_the_file_is_read_as_assignments(line: str, got: dict[str, str]) -> None:
    read, said = read_env_file(line + "\n", {"PATH": "/usr/bin", "USER": "me", "HOME": "/home/me"}, WS)
    assert read == got
    assert bool(said) == (not got and not line.startswith("#")), said


def test_a_session_start_hooks_env_file_reaches_later_bash_commands(tmp_path: Path) -> None:
    lines = "export NODE_ENV=production\nexport API_TOKEN=${tok}r3t-value\nexport BASH_ENV=/tmp/run-me.sh\n"
    write = (
        f'printf %s "$CLAUDE_ENV_FILE" > where.txt; tok=s3c; printf "{lines}" >> "$CLAUDE_ENV_FILE"; echo context-line'
    )
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook(write)]}]}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "echo NODE_ENV=$NODE_ENV TOKEN=$API_TOKEN BASH_ENV=$BASH_ENV"
    delegate = {"name": "Delegate", "input": {"task": "check"}}
    turns = [{"tool_calls": [bash(command)]}, {"tool_calls": [delegate]}, {"tool_calls": [bash("echo sub=$NODE_ENV")]},
             {"text": "sub done"}, {"text": "ok"}]  # fmt: skip
    done, events = run(tmp_path, ws, turns, "--permission-mode", "bypassPermissions")
    assert done.code == 0, done.err
    first, sub = (e["output"] for e in events if e["event"] == "tool_result" and e["name"] == "Bash")
    assert first.endswith("NODE_ENV=production TOKEN= BASH_ENV=") and sub.endswith("sub=production")
    said = done.out + done.err
    assert "CLAUDE_ENV_FILE: API_TOKEN not set for commands: it looks like a secret" in said
    assert "CLAUDE_ENV_FILE: BASH_ENV not set for commands" in said
    where = (ws / "where.txt").read_text()
    assert where and not where.startswith(str(ws)) and not Path(where).exists()  # its own temporary file, gone
    (start,) = hook_runs(events, "SessionStart")
    assert start["output"] == "context-line" and "s3cr3t" not in json.dumps(events)
    first_message = next(e for e in events if e["event"] == "message" and e["role"] == "user")
    assert "context-line" in json.dumps(first_message)
