"""`arnes mcp add`, `add-json` and `remove`: Claude Code's `claude mcp add` habit, written where arnes reads.

READMEs give `claude mcp add NAME -- CMD ARGS`; a user who types it with arnes gets the server.
arnes never writes Claude Code's ~/.claude.json (mcp/claude_json.py reads it only), so the user
scope is arnes's own settings file (~/.config/arnes/settings.json, `mcpServers`), and the project
scope is the workspace's `.mcp.json` (which starts only once the folder is trusted, docs/mcp.md).
Claude Code's default `local` scope has no place here: the user scope is the default. Every
server is checked as arnes will read it before anything is written, and the file is written whole
(its other keys kept), atomically; a file that does not parse is one line, and is left alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arnes.cliargs import parse_subcommand, workspace_of
from arnes.errors import EXIT_USAGE, ConfigError
from arnes.safe import one_line

if TYPE_CHECKING:
    from arnes.host.files import HostFiles

SCOPES = ("user", "project")


def run_edit(action: str, args: argparse.Namespace, rest: list[str]) -> int:
    """`action` is add, add-json or remove; `rest` the words after it (a `--` starts a command line)."""
    cut = rest.index("--") if "--" in rest else len(rest)
    head, command = rest[:cut], rest[cut + 1 :]
    parser = argparse.ArgumentParser(prog=f"arnes mcp {action}", allow_abbrev=False)
    parser.add_argument("-s", "--scope", choices=[*SCOPES, "local"], help="user (default): your arnes settings")
    parser.add_argument("name")
    if action == "add":
        parser.add_argument("-t", "--transport", choices=["stdio", "http", "sse"], default=None)
        parser.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("-H", "--header", action="append", default=[], metavar='"NAME: VALUE"')
        parser.add_argument("target", nargs="*", help="the command and its arguments, or the URL")
    elif action == "add-json":
        parser.add_argument("json", help="the server as Claude Code's mcpServers entry")
    opts = parse_subcommand(parser, head, args)
    if opts.scope == "local":
        raise ConfigError(
            f"mcp {action}: arnes has no local scope (Claude Code keeps it in ~/.claude.json, which arnes does not "
            "write); use --scope user (your ~/.config/arnes/settings.json) or --scope project (.mcp.json)"
        )
    if action == "remove":
        return _remove(opts.name, opts.scope, args)
    server = _from_json(opts.json) if action == "add-json" else _from_words(opts, command)
    path = _file(opts.scope or "user", args)
    _check(opts.name, server)
    data = _read(path, args)
    servers = data.setdefault("mcpServers", {})
    replaced = opts.name in servers
    servers[opts.name] = server
    _write(path, data, args)
    verb = "replaced" if replaced else "added"
    print(one_line(f"{verb} MCP server {opts.name} in {path} ({opts.scope or 'user'} scope)"))
    if opts.scope == "project":
        print("it starts once you trust this folder (arnes trust); `arnes mcp list` shows its state")
    return 0


def _from_words(opts: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    target = [*opts.target, *command]
    if not target:
        raise ConfigError(f"mcp add {opts.name}: give the server's command after `--`, or its URL")
    transport = opts.transport or "stdio"
    server: dict[str, Any] = {}
    if transport == "stdio":
        server = {"command": target[0], "args": target[1:]}
    elif len(target) != 1:
        raise ConfigError(f"mcp add {opts.name}: an {transport} server takes one URL, not {' '.join(target)!r}")
    else:
        server = {"type": transport, "url": target[0]}
    env = dict(_pair(item, "=", "-e KEY=VALUE") for item in opts.env)
    headers = dict(_pair(item, ":", '--header "NAME: VALUE"') for item in opts.header)
    if env:
        server["env"] = env
    if headers:
        server["headers"] = headers
    return server


def _pair(item: str, sep: str, form: str) -> tuple[str, str]:
    key, found, value = item.partition(sep)
    if not found or not key.strip():
        raise ConfigError(f"mcp add: {item!r} is not {form}")
    return key.strip(), value.strip() if sep == ":" else value


def _from_json(text: str) -> dict[str, Any]:
    from arnes.nesting import json_loads

    try:
        server = json_loads(text)
    except ValueError as exc:
        raise ConfigError(f"mcp add-json: the server is not JSON ({one_line(str(exc))})") from None
    if not isinstance(server, dict):
        raise ConfigError('arnes mcp add-json: the server is a JSON object, e.g. {"command": "npx", "args": [...]}')
    return server


def _check(name: str, server: dict[str, Any]) -> None:
    """The server as arnes will read it (names, keys, a command or a URL): one line if not."""
    from arnes.mcp.settings import parse_servers

    parse_servers({"mcpServers": {name: server}}, f"mcp add {name}")


def _file(scope: str, args: argparse.Namespace) -> Path:
    if scope == "project":
        from arnes.mcp.settings import MCP_FILE

        return workspace_of(args) / MCP_FILE
    from arnes.config import user_settings_path

    return user_settings_path()


def _read(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from arnes.jsonfile import read_json
    from arnes.nesting import json_loads

    if path.name == ".mcp.json":  # the workspace's: through no link out of it (host/files.py)
        try:
            raw = _workspace(args).read(path.name)
            data = None if raw is None else json_loads(raw.decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: not read ({one_line(str(exc))}); it was not changed") from None
        if data is None:
            return {}
    elif not path.exists():
        return {}
    else:
        data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ConfigError(f"{path}: not a JSON object with an mcpServers object; fix it by hand, it was not changed")
    return data


def _write(path: Path, data: dict[str, Any], args: argparse.Namespace) -> None:
    from arnes.host.atomic import atomic_write

    text = (json.dumps(data, indent=2) + "\n").encode("utf-8")
    try:
        if path.name == ".mcp.json":
            _workspace(args).write(path.name, text, judged=False)  # the user's own command, not the model's
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be written ({exc.strerror or exc})") from None


def _workspace(args: argparse.Namespace) -> HostFiles:
    from arnes.host.files import HostFiles

    return HostFiles(workspace_of(args))


def _remove(name: str, scope: str | None, args: argparse.Namespace) -> int:
    scopes = [scope] if scope else list(SCOPES)
    found = [(s, path) for s in scopes if name in _read(path := _file(s, args), args).get("mcpServers", {})]
    if not found:
        where = " or ".join(str(_file(s, args)) for s in scopes)
        print(one_line(f"arnes mcp remove: no MCP server {name} in {where}"), file=sys.stderr)
        return EXIT_USAGE
    if len(found) > 1:
        raise ConfigError(f"mcp remove: {name} is in both {found[0][1]} and {found[1][1]}; give --scope")
    chosen, path = found[0]
    data = _read(path, args)
    del data["mcpServers"][name]
    _write(path, data, args)
    print(one_line(f"removed MCP server {name} from {path} ({chosen} scope)"))
    return 0
