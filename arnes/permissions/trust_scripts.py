"""The workspace scripts a trusted settings file runs: hook commands and MCP server commands.

Trust covers what the user agreed to, and a hook `sh tools/check.sh` or an MCP server
`python tools/server.py` runs whatever that script says at the time. So the words of each hook
command and each server's command and arguments that name a file in the workspace are hashed
with the settings (trust.py): a pull that changes such a script asks again. This reads the JSON
loosely (a broken file is hashed as bytes anyway and refused by its own loader); a script the
command reaches some other way (a word built at run time, a script that sources another) is not
seen, which docs/hooks.md says.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from arnes.host.paths import is_inside, resolve_real

MAX_WORDS = 200  # words looked at per file: a settings file is small, this only bounds a hostile one
_PROJECT_VARS = ("$CLAUDE_PROJECT_DIR/", "${CLAUDE_PROJECT_DIR}/", "$ARNES_PROJECT_DIR/", "${ARNES_PROJECT_DIR}/")
# A server's `${VAR}/rest` is expanded when it starts (mcp/expand.py): `${PWD}/tools/server.py`
# names the workspace's tools/server.py when arnes runs there, so `rest` counts as a name too.
_EXPANDED_PREFIX = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/")


def referenced_scripts(workspace: Path, settings: list[str]) -> list[str]:
    """Workspace files (relative, sorted) that the hooks and servers of these settings files name."""
    root = resolve_real(workspace)
    found: set[str] = set()
    for name in settings:
        try:
            raw = json.loads((workspace / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        for _, word in zip(range(MAX_WORDS), _words(raw), strict=False):
            rel = _workspace_file(root, word)
            if rel is not None:
                found.add(rel)
    return sorted(found)


def _words(raw: object) -> Iterator[str]:
    if not isinstance(raw, dict):
        return
    servers = raw.get("mcpServers")
    if isinstance(servers, dict):
        for server in servers.values():
            if isinstance(server, dict):
                if isinstance(server.get("command"), str):
                    yield from _split(server["command"])
                args = server.get("args")
                if isinstance(args, list):
                    yield from (a for a in args if isinstance(a, str))
    hooks = raw.get("hooks")
    if isinstance(hooks, dict):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else []:
                inner = group.get("hooks") if isinstance(group, dict) else None
                for hook in inner if isinstance(inner, list) else []:
                    if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                        yield from _split(hook["command"])


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _workspace_file(root: Path, word: str) -> str | None:
    for var in _PROJECT_VARS:
        if word.startswith(var):
            word = word[len(var) :]
            break
    else:
        word = _EXPANDED_PREFIX.sub("", word, count=1)
    if not word or "\0" in word:
        return None
    path = Path(word) if word.startswith("/") else root / word
    try:
        if not path.is_file():
            return None
    except OSError:
        return None
    parent = resolve_real(path.parent)  # the name as written (a link is hashed as a link)
    return str((parent / path.name).relative_to(root)) if is_inside(root, parent) else None
