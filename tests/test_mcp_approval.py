"""Claude Code's approval keys for `.mcp.json` servers (mcp/approval.py), as the settings read them.

`disabledMcpjsonServers` narrows from any file; `enabledMcpjsonServers` and
`enableAllProjectMcpServers` count from the user's own files, and from a project's only in a
trusted folder; nothing of an untrusted folder's `.mcp.json` starts, whatever a file says.
The real command runs them in tests/test_e2e_mcp_approval.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arnes.config import load_config, user_settings_path
from arnes.errors import ConfigError
from arnes.workspace_trust import untrusted_warning

SERVER = {"command": "true"}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])  # a fresh one per test (tests/conftest.py)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A project whose .mcp.json has three servers."""
    folder = tmp_path / "ws"
    write(folder / ".mcp.json", {"mcpServers": {"memory": SERVER, "github": SERVER, "shell": SERVER}})
    return folder


def starting(ws: Path, trusted: bool) -> tuple[dict[str, str], list[str]]:
    """Each server: "starts", "untrusted" or why it is held; and the warnings."""
    cfg = load_config(ws, trusted=trusted)
    states = {n: e.held or ("starts" if e.starts else "untrusted") for n, e in cfg.mcp_servers.items()}
    return states, cfg.warnings


def test_without_the_keys_trust_starts_every_server(ws: Path) -> None:
    assert starting(ws, True) == ({"memory": "starts", "github": "starts", "shell": "starts"}, [])


def test_the_users_disabled_list_holds_a_server_with_one_line_naming_key_and_file(home: Path, ws: Path) -> None:
    mine = write(home / ".claude" / "settings.json", {"disabledMcpjsonServers": ["shell", "not-here"]})
    states, warnings = starting(ws, True)
    assert states == {"memory": "starts", "github": "starts", "shell": f"disabledMcpjsonServers in {mine} names it"}
    assert warnings == [
        f"{ws / '.mcp.json'}: mcpServers.shell is not started: disabledMcpjsonServers in {mine} names it "
        "(take it out there to start it)"
    ]  # a name no server has is not news: the user's list serves every project


def test_a_projects_disabled_list_narrows_untrusted_and_leaves_the_trust_prompt(ws: Path) -> None:
    local = write(ws / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["shell"]})
    cfg = load_config(ws, trusted=False)
    assert cfg.mcp_servers["shell"].held == f"disabledMcpjsonServers in {local} names it"
    assert not cfg.mcp_servers["memory"].starts  # the others wait for trust, as before
    # The trust prompt shows what trusting would start: not the server that never will.
    assert set(cfg.ignored[ws / ".mcp.json"]) == {"mcpServers.memory", "mcpServers.github"}
    assert local not in cfg.ignored
    assert load_config(ws, trusted=True).mcp_servers["shell"].held


def test_an_enabled_list_of_yours_starts_only_what_it_names(home: Path, ws: Path) -> None:
    mine = write(home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["memory", "github"]})
    states, warnings = starting(ws, True)
    held = f"enabledMcpjsonServers in {mine} does not name it"
    assert states == {"memory": "starts", "github": "starts", "shell": held}
    assert warnings == [
        f"{ws / '.mcp.json'}: mcpServers.shell is not started: {held} "
        '(add it there, or set "enableAllProjectMcpServers": true)'
    ]
    write(user_settings_path(), {"enableAllProjectMcpServers": True})  # arnes's own file takes the keys too
    assert starting(ws, True) == ({"memory": "starts", "github": "starts", "shell": "starts"}, [])


def test_disabled_wins_over_enabled_and_enable_all(home: Path, ws: Path) -> None:
    write(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["shell"]})
    write(ws / ".claude" / "settings.json", {"disabledMcpjsonServers": ["shell"]})
    states, _ = starting(ws, True)
    assert states["shell"].startswith("disabledMcpjsonServers in") and states["memory"] == "starts"


def test_a_projects_own_approval_counts_only_in_a_trusted_folder(home: Path, ws: Path) -> None:
    """A repository cannot approve its own servers: untrusted, its enabled keys are grants that
    wait (named for the trust prompt), and your own enableAllProjectMcpServers starts nothing."""
    write(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    project = write(ws / ".claude" / "settings.json",
                    {"enabledMcpjsonServers": ["memory"], "enableAllProjectMcpServers": True})  # fmt: skip
    states, _ = starting(ws, False)
    assert states == {"memory": "untrusted", "github": "untrusted", "shell": "untrusted"}
    cfg = load_config(ws, trusted=False)
    assert cfg.ignored[project] == {"enabledMcpjsonServers": ["memory"], "enableAllProjectMcpServers": True}
    assert "enabledMcpjsonServers" in untrusted_warning(ws, cfg)
    write(project, {"enabledMcpjsonServers": ["memory"]})
    write(home / ".claude" / "settings.json", {})
    states, _ = starting(ws, True)  # trusted, the project's list is the user's choice as in Claude Code
    assert states["memory"] == "starts" and states["github"].startswith("enabledMcpjsonServers in")


def test_a_held_server_does_not_take_the_name_of_yours(home: Path, ws: Path) -> None:
    """As in Claude Code, a project server left out does not shadow the user's server of that name."""
    write(user_settings_path(), {"mcpServers": {"shell": {"command": "mine"}}, "disabledMcpjsonServers": ["shell"]})
    cfg = load_config(ws, trusted=True)
    assert cfg.mcp_servers["shell"].config.command == "mine" and cfg.mcp_servers["shell"].starts
    assert "mcpServers.shell is not started" in cfg.warnings[0]


def test_this_projects_choices_in_claude_json_count(home: Path, ws: Path) -> None:
    """Claude Code keeps the approval and `/mcp`'s disable in this project's ~/.claude.json entry too;
    the empty lists it writes for every project change nothing."""
    entry: dict[str, Any] = {"enabledMcpjsonServers": [], "disabledMcpjsonServers": [], "disabledMcpServers": []}
    claude = {"mcpServers": {"notes": {"command": "notes"}}, "projects": {str(ws.resolve()): entry}}
    write(home / ".claude.json", claude)
    assert starting(ws, True)[0] == {n: "starts" for n in ("notes", "memory", "github", "shell")}
    entry.update(enabledMcpjsonServers=["memory"], disabledMcpServers=["notes", "github"])
    write(home / ".claude.json", claude)
    states, warnings = starting(ws, True)
    where = "~/.claude.json (this project)"
    assert states == {
        "notes": f"disabledMcpServers in {where} names it",
        "memory": "starts",
        "github": f"enabledMcpjsonServers in {where} does not name it",
        "shell": f"enabledMcpjsonServers in {where} does not name it",
    }
    assert f"~/.claude.json: mcpServers.notes is not started: disabledMcpServers in {where} names it" in warnings[-1]


def test_a_key_of_the_wrong_shape_is_one_line_never_a_traceback(home: Path, ws: Path) -> None:
    mine = write(home / ".claude" / "settings.json",
                 {"enabledMcpjsonServers": "memory", "enableAllProjectMcpServers": "yes"})  # fmt: skip
    states, warnings = starting(ws, True)
    assert set(states.values()) == {"starts"}
    assert warnings == [
        f"{mine}: enableAllProjectMcpServers left out: it is true or false, not str",
        f'{mine}: enabledMcpjsonServers left out: it is a list of server names, like ["memory", "github"]',
    ]
    write(ws / ".arnes" / "settings.json", {"disabledMcpjsonServers": "shell"})  # arnes's own files stay strict
    with pytest.raises(ConfigError, match=r"settings.json: invalid settings: disabledMcpjsonServers: "):
        load_config(ws, trusted=True)
