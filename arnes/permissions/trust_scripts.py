"""The workspace scripts a trusted settings file runs: hook commands and MCP server commands.

Trust covers what the user agreed to, and a hook `sh tools/check.sh` or an MCP server
`python tools/server.py` runs whatever that script says at the time. So every word of each hook
command and each server's command and arguments that names a file in the workspace is hashed with
the settings (trust.py): a pull that changes such a script asks again. A word is looked at as the
shell would split it (`;`, `&&`, `|` and redirections end a word), a `bash -c '...'` string is split
again, `--opt=FILE` counts by FILE, a server's `env` values count as words too, and
`$CLAUDE_PROJECT_DIR/` (`$ARNES_PROJECT_DIR/`, `$PWD/`: a hook starts there) means the workspace.
A name inside the workspace counts wherever links lead it (trust.py hashes the file the hook would
open). This reads the JSON loosely (a broken file is hashed as bytes anyway and refused
by its own loader). What is not seen, said in docs/hooks.md: a name built at run time (another
variable, `cd sub && ./x.sh`), and files a script reads or sources itself, unless they lie under
`.claude/hooks/` or `.arnes/hooks/`, which are covered whole.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path

from arnes.errors import ConfigError
from arnes.host.paths import resolve_real
from arnes.nesting import json_loads

MAX_WORDS = 5000  # words per settings file; past it the folder cannot be trusted (never half-covered)
NESTING = 2  # `bash -c "sh -c 'x.sh'"`: how deep a quoted command is split again
_PROJECT_VARS = tuple(
    f"{form}/" for var in ("CLAUDE_PROJECT_DIR", "ARNES_PROJECT_DIR", "PWD") for form in (f"${var}", f"${{{var}}}")
)
# A server's `${VAR}/rest` is expanded when it starts (mcp/expand.py): `${PWD}/tools/server.py`
# names the workspace's tools/server.py when arnes runs there, so `rest` counts as a name too.
_EXPANDED_PREFIX = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/")


class Uncoverable(ConfigError):
    """The granting files cannot all be hashed: the folder cannot be trusted as it is."""


def referenced_scripts(workspace: Path, settings: list[Path], blocks: Iterable[tuple[str, object]] = ()) -> list[str]:
    """Workspace files (relative, as named, sorted) that the hooks and servers of these settings
    files name, and folders they run as programs (RUNNABLE): the project's settings, and the
    user's own (a hook of yours that runs `python3 lint.py` in the workspace runs the
    repository's file, unsandboxed once the folder is trusted). `blocks`: (where, settings-shaped
    dict) read elsewhere, such as your plugins' hooks and servers."""
    root = resolve_real(workspace)
    found: set[str] = set()
    for name, raw in [*_read_all(settings), *blocks]:
        for count, word in enumerate(_words(raw)):
            if count >= MAX_WORDS:
                raise Uncoverable(
                    f"{root} cannot be trusted as it is: the hooks and servers of {name} name more than "
                    f"{MAX_WORDS} words, more than arnes checks; put the commands in a script under "
                    ".claude/hooks/ (covered whole) and name that, or use --trust for one run"
                )
            rel = _workspace_file(workspace, root, word)
            if rel is not None:
                found.add(rel)
    return sorted(found)


def _read_all(settings: list[Path]) -> Iterator[tuple[str, object]]:
    for name in settings:
        try:
            yield str(name), json_loads(name.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue


def _words(raw: object) -> Iterator[str]:
    if not isinstance(raw, dict):
        return
    servers = raw.get("mcpServers")
    if isinstance(servers, dict):
        for server in servers.values():
            if isinstance(server, dict):
                if isinstance(server.get("command"), str):
                    yield from _split(server["command"], NESTING)
                args = server.get("args")
                if isinstance(args, list):
                    for arg in args:
                        if isinstance(arg, str):
                            yield from _also(arg, NESTING)
                    yield from _modules([a for a in args if isinstance(a, str)])
                env = server.get("env")  # BASH_ENV=tools/x.sh, NODE_OPTIONS="--require ./x.js"
                if isinstance(env, dict):
                    for value in env.values():
                        if isinstance(value, str):
                            yield from _also(value, NESTING)
    hooks = raw.get("hooks")
    if isinstance(hooks, dict):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else []:
                inner = group.get("hooks") if isinstance(group, dict) else None
                for hook in inner if isinstance(inner, list) else []:
                    if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                        yield from _split(hook["command"], NESTING)


def _split(command: str, depth: int) -> Iterator[str]:
    """The command's words as a shell splits them, each with what `_also` finds in it."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        words = command.split()
    for word in words:
        yield from _also(word, depth)
    yield from _modules(words)


def _modules(words: list[str]) -> Iterator[str]:
    """The files `python -m a.b` runs, however the option is spelled (`-m a.b`, `-ma.b`, `-Bm
    a.b`): a.py or a/__init__.py, a/b.py, a/b/__init__.py, a/b/__main__.py (a folder, hashed whole)."""
    for i, word in enumerate(words):
        if not word.startswith("-") or word.startswith("--") or "m" not in word[1:]:
            continue
        rest = word[1:].split("m", 1)[1]
        module = rest or (words[i + 1] if i + 1 < len(words) else "")
        if not re.fullmatch(r"[A-Za-z_][\w.]*", module):
            continue
        parts = module.split(".")
        for n in range(1, len(parts) + 1):
            path = "/".join(parts[:n])
            yield from (f"{path}.py", f"{path}/__init__.py", path)


def _also(word: str, depth: int) -> Iterator[str]:
    """The word, what follows its first `=`, and (a quoted command) its own words."""
    yield word
    if "=" in word:
        yield word.split("=", 1)[1]
    if depth > 0 and (any(c.isspace() for c in word) or (word.strip(";&|<>()") and any(c in ";&|<>()" for c in word))):
        yield from _split(word, depth - 1)


def _workspace_file(workspace: Path, root: Path, word: str) -> str | None:
    """The word as a name relative to the workspace, when the hook (run in the workspace) would
    find a file by it: `tools/x.sh`, `./x.sh`, `../x/y.sh`, the workspace's own absolute path and
    below. It is kept as written (only `.` and doubled slashes dropped): `link/../x.sh` is opened
    through the link, as the hook opens it; trust.py hashes what it leads to."""
    for var in _PROJECT_VARS:
        if word.startswith(var):
            word = word[len(var) :].lstrip("/")  # `$CLAUDE_PROJECT_DIR//x.sh` is the workspace's x.sh
            break
    else:
        stripped = _EXPANDED_PREFIX.sub("", word, count=1)
        word = stripped.lstrip("/") if stripped != word else word
    if not word or "\0" in word:
        return None
    if word.startswith("/"):
        for top in {str(workspace).rstrip("/"), str(root).rstrip("/")}:
            if word.startswith(top + "/"):
                word = word[len(top) + 1 :]
                break
        else:
            return None  # a program of the system (`/usr/bin/python3`): not the repository's
    rel = str(Path(word))
    if rel in (".", "..") or rel.startswith("/"):
        return None
    try:
        return rel if (workspace / rel).is_file() or _runnable_folder(workspace / rel) else None
    except OSError:
        return None


# A folder an interpreter runs as a program: `python3 srv` runs srv/__main__.py (which imports its
# siblings), `node srv` runs srv/index.js. trust.py hashes such a folder whole.
RUNNABLE = ("__main__.py", "index.js", "index.mjs", "index.cjs")


def _runnable_folder(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in RUNNABLE)
