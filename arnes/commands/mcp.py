"""`arnes mcp list`: the configured MCP servers, whether they started (and why not), their tools;
`add`, `add-json` and `remove` are commands/mcp_edit.py. Any other word is an error, never a task:
`arnes mcp add-jsn ...` run as a prompt would hand the server's command line to the model."""

from __future__ import annotations

import argparse
import os

from rich.console import Console
from rich.text import Text

from arnes.cliargs import NotASubcommand, parse_subcommand
from arnes.safe import one_line, visible

ACTIONS = ("list", "add", "add-json", "remove")


def run(args: argparse.Namespace, rest: list[str]) -> int:
    import sys

    from arnes.cliargs import first_word
    from arnes.errors import EXIT_USAGE

    at = first_word(rest)
    action = rest[at] if at is not None else "list"
    if action not in ACTIONS:
        shown = one_line(action)
        print(f"arnes mcp: no command {shown!r}; use one of {', '.join(ACTIONS)} (see docs/mcp.md)", file=sys.stderr)
        return EXIT_USAGE
    try:
        if action != "list":
            from arnes.commands.mcp_edit import run_edit

            assert at is not None
            return run_edit(action, args, rest[:at] + rest[at + 1 :])
        return _list(args, rest)
    except NotASubcommand as words:  # words `arnes mcp ACTION` does not take: an error here, not a task
        extra = list(words.args)[1:] if words.args and words.args[0] == action else list(words.args)
        said = one_line(" ".join(extra))
        print(f"arnes mcp {action}: unexpected words {said!r} (docs/mcp.md)", file=sys.stderr)
        return EXIT_USAGE


def _list(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.envlimits import env_limits
    from arnes.mcp.start import make_hub
    from arnes.runner import resolve_config
    from arnes.session import open_shared

    parser = argparse.ArgumentParser(prog="arnes mcp", description="The MCP servers of this folder.")
    sub = parser.add_subparsers(dest="action")
    sub.add_parser("list", help="each server, its state (started / not started / failed: why) and its tools")
    parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    cfg = resolve_config(args, ws, ask=False)
    console = Console(highlight=False, soft_wrap=True)
    for warning in cfg.warnings:
        console.print(Text(f"warning: {visible(warning)}", style="yellow"))
    if not cfg.mcp_servers:
        console.print(
            "no MCP servers configured (add them to .mcp.json or mcpServers in settings; see docs/mcp.md)",
            markup=False,
        )
        return 0
    # The sandbox a run would have: the servers start in the same one, the same way.
    shared = open_shared(ws, cfg.mode, cfg.rules, cfg.sandbox, cfg.network, cfg.commands_see(), tuple(cfg.read_paths))
    limits, said = env_limits(os.environ)  # MCP_TIMEOUT, as a run would read it (after the settings' env)
    for warning in said:
        console.print(Text(f"warning: {visible(warning)}", style="yellow"))
    hub = make_hub(
        shared, cfg.mcp_servers, network=cfg.network, env_passthrough=tuple(cfg.env_passthrough),
        start_ms=limits.mcp_start_ms,
    )  # fmt: skip
    try:
        if hub is None:
            return 1
        hub.start()
        hub.wait()
        for name, st in hub.servers.items():
            kind = st.entry.config.transport
            where = (
                st.entry.config.url
                if kind == "http"
                else " ".join([st.entry.config.command or "", *st.entry.config.args])
            )
            boxed = f", sandbox {st.sandbox}" if st.sandbox else ""
            if st.entry.user and not st.entry.config.sandbox and not st.entry.unconfined:
                boxed += ' ("sandbox": false waits for trust)'
            # The command, URL and tools are the repository's and the server's words: shown, never obeyed.
            console.print(Text(one_line(f"{name}  {st.state}  ({kind}{boxed}: {where}; from {st.entry.source})")))
            for line in st.stderr_tail:
                console.print(Text(one_line(f"    stderr| {line}")))
            for tool in st.tools:
                first = tool.description.splitlines()[0] if tool.description else ""
                console.print(Text(one_line(f"  mcp__{name}__{tool.name}  {first}")))
    finally:
        if hub is not None:
            hub.close()
        shared.sandbox.close()
    return 0
