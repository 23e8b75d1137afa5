"""`arnes trust [DIR]`, `--list`, `--revoke [DIR]`: the user's say over what a folder may grant."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console
from rich.text import Text

from arnes import setting_sources
from arnes.cliargs import parse_subcommand
from arnes.errors import ConfigError
from arnes.safe import visible


def run(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.config import load_config
    from arnes.config_flags import note_plugin_dirs
    from arnes.permissions.trust import TrustStore, key
    from arnes.permissions.trust_frontmatter import frontmatter_grants
    from arnes.ui.trust_prompt import grant_lines

    parser = argparse.ArgumentParser(
        prog="arnes trust",
        description="Trust a folder: its project settings may then grant (allow rules, mode, model, sandbox, "
        "teams). Remembered until those files change.",
    )
    parser.add_argument("dir", nargs="?", help="the folder (default: the workspace, -w or .)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="the folders you trusted (or declined)")
    what.add_argument("--revoke", action="store_true", help="forget the folder: untrusted again")
    opts = parse_subcommand(parser, rest, args)
    note_plugin_dirs(args)  # `arnes trust --plugin-dir DIR`: the plugin's styles are in what is trusted
    console = Console(highlight=False, soft_wrap=True)
    store = TrustStore.default()
    if opts.list:
        records = store.records()
        for folder, record in sorted(records.items()):
            state: str = "gone"
            try:
                state = store.status(Path(folder)) if Path(folder).is_dir() else "gone"
            except ConfigError:  # too much to hash: `arnes trust DIR` says why
                state = "cannot be trusted as it is"
            console.print(Text(visible(f"{folder}  {state}  (recorded {record.at})")))
        if not records:
            console.print(visible(f"no folder trusted yet (the record is {store.path})"), markup=False)
        return 0
    ws = Path(opts.dir or args.workspace).expanduser()
    if not ws.is_dir():
        raise ConfigError(f"arnes trust: {ws} is not a folder")
    ws = Path(key(ws))
    if opts.revoke:
        known = store.revoke(ws)
        console.print(visible(f"{ws}: {'no longer trusted' if known else 'was not in the record'}"), markup=False)
        return 0
    # Trust covers every project file (its fingerprint does), so the summary reads them all, whatever
    # sources a run would read (ARNES_SETTING_SOURCES inherited from an SDK app or a shell).
    os.environ.pop(setting_sources.VARIABLE, None)
    grants = load_config(ws, trusted=False).ignored
    store.record(ws, True)
    console.print(
        visible(f"trusted {ws} (until its project settings, hook scripts, team files or command models change)"),
        markup=False,
    )
    if grants:
        console.print("its project settings now apply:", markup=False)
        for line in grant_lines(ws, grants):
            console.print(Text(visible(f"  {line}")))
    else:
        console.print("its project settings grant nothing today", markup=False)
    chosen = frontmatter_grants(ws)
    if chosen:
        console.print("its commands and agents may now choose their model:", markup=False)
        for line in chosen:
            console.print(Text(visible(f"  {line}")))
    return 0
