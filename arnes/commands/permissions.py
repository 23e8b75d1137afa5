"""`arnes permissions`: the effective rules and where each came from; `check` explains one decision."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arnes.cliargs import parse_subcommand
from arnes.config import SECRET_SOURCE, EffectiveConfig, settings_layers
from arnes.host.paths import absolute
from arnes.permissions.engine import READ_FAMILY, RuleEngine
from arnes.permissions.rules import KNOWN_TOOLS, MCP_RULE
from arnes.permissions.types import Access, Target, ToolRequest
from arnes.safe import visible
from arnes.sandbox.bubblewrap import Bubblewrap


def run(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.runner import resolve_config

    parser = argparse.ArgumentParser(prog="arnes permissions", description="Show or test the permission rules.")
    sub = parser.add_subparsers(dest="action")
    check = sub.add_parser("check", help="print the decision for one call, without running it")
    check.add_argument("tool", type=_tool_name, help=f"{', '.join(KNOWN_TOOLS)} or mcp__SERVER__TOOL")
    check.add_argument("target", nargs="?", default="", help="a path (file tools) or a command (Bash)")
    opts = parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    cfg = resolve_config(args, ws, ask=False)
    engine = RuleEngine(ws, cfg.mode, list(cfg.rules))
    # As a run would: with bubblewrap available, acceptEdits runs shell commands unasked.
    engine.sandboxed = cfg.sandbox in ("auto", "bubblewrap") and Bubblewrap.unavailable() is None
    console = Console(highlight=False, soft_wrap=True)
    for warning in cfg.warnings:
        console.print(f"warning: {visible(warning)}", style="yellow", markup=False)
    if opts.action == "check":
        return _check(console, engine, opts.tool, opts.target)
    show_rules(console, engine)
    show_files(console, cfg, ws)
    show_trust(console, cfg, ws)
    return 0


LAYER_NAMES = {
    "claude-user": "yours, Claude Code's",
    "user": "yours",
    "claude-project": "the project's, Claude Code's",
    "claude-local": "the project's local file, Claude Code's",
    "project": "the project's",
    "local": "the project's local file",
}


def show_files(console: Console, cfg: EffectiveConfig, workspace: Path) -> None:
    """The settings files read, in the order a value is taken (DESIGN §5, §16): the later wins."""
    read = [f"{path} ({LAYER_NAMES[layer]})" for layer, path in settings_layers(workspace) if path in cfg.files]
    if read:
        line = f"settings read, a later file wins a value: {', '.join(read)}; flags win over all of them"
        console.print(visible(line), markup=False)


def show_trust(console: Console, cfg: EffectiveConfig, workspace: Path) -> None:
    """Whether the project's settings may grant here, and what they would grant."""
    from arnes.ui.trust_prompt import grant_lines

    if cfg.trusted:
        how = "recorded by you" if cfg.trust_status == "trusted" else cfg.trust_status
        console.print(f"trust: this folder is trusted ({how}): its project settings apply", markup=False)
        return
    state = {"changed": "untrusted (its settings changed since you trusted it)", "declined": "untrusted (you said no)"}
    console.print(f"trust: {state.get(cfg.trust_status, 'untrusted')}", markup=False)
    if cfg.ignored:
        console.print("ignored until you trust it (`arnes trust`, or --trust for one run):", markup=False)
        for line in grant_lines(workspace, cfg.ignored):
            console.print(Text(f"  {line}"))
    else:
        console.print("its project settings grant nothing: only their restrictions, which apply", markup=False)


def show_rules(console: Console, engine: RuleEngine) -> None:
    console.print(f"workspace: {visible(str(engine.workspace))}", markup=False)
    console.print(f"mode: {engine.mode}", markup=False)
    rules = engine.listing()
    if rules:
        table = Table(show_header=True, header_style="bold", box=None)
        for column in ("kind", "rule", "from"):
            table.add_column(column)
        for kind in ("deny", "ask", "allow"):
            for r in rules:
                if r.kind == kind:
                    table.add_row(kind, Text(visible(r.rule)), Text(visible(r.source)))  # a settings file's text
        console.print(table)
    else:
        console.print("no rules: the perimeter and the mode decide", markup=False)
    if any(r.source == SECRET_SOURCE for r in engine.rules):
        console.print(
            'secrets (.env files, keys, credentials) are denied by default ("built in: secrets"): '
            "an allow of the same rule in your user settings lifts one",
            markup=False,
        )
    console.print(
        "order: deny > ask > allow over every source, then the perimeter (reads inside allowed, "
        "anything outside asks), then the mode",
        markup=False,
    )
    console.print(
        "built in: the file tools never write .git (at any depth, a folder or a gitfile), .arnes, "
        "features.json, your arnes config folder, your ~/.claude/settings.json, or ~/.claude.json; "
        "names compared case-insensitively",
        markup=False,
    )


def _tool_name(name: str) -> str:
    """A built-in tool or an MCP tool `mcp__SERVER__TOOL` (any server: the rules are what is tested)."""
    if name in KNOWN_TOOLS or (MCP_RULE.match(name) and name.count("__") == 2 and not name.endswith("*")):
        return name
    raise argparse.ArgumentTypeError(
        f"{name!r} is not a tool; give one of {', '.join(KNOWN_TOOLS)} or mcp__SERVER__TOOL"
    )


def _check(console: Console, engine: RuleEngine, tool: str, target: str) -> int:
    if tool.startswith("mcp__"):
        request = ToolRequest(tool, {}, (), False)
    elif not target:
        console.print(f"{tool} needs a target: a path (file tools) or a command (Bash)", markup=False)
        return 2
    elif tool in ("Bash", "BashOutput", "KillShell", "Delegate"):
        request = ToolRequest(tool, {"command": target}, (), False, command=target)
    else:
        access: Access = "read" if tool in READ_FAMILY else "write"
        path = absolute(engine.workspace, target)
        request = ToolRequest(tool, {}, (Target(path, access),), access == "read")
    d = engine.decide(request)
    where = f" (from {d.origin})" if d.origin else ""
    style = {"allow": "green", "ask": "yellow", "deny": "red"}[d.kind]
    console.print(visible(f"{d.kind}: {d.reason}{where}"), style=style, markup=False)  # a project's rule text
    console.print(visible(f"source: {d.source}"), markup=False)
    if d.kind == "ask":
        console.print("with no terminal to ask, this would be denied", style="dim", markup=False)
    return 0
