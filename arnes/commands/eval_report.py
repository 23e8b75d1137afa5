"""`arnes eval report A.json [B.json ...] --html FILE`: one self-contained page to look at."""

from __future__ import annotations

import argparse
from pathlib import Path

from arnes.errors import ConfigError
from arnes.host.atomic import atomic_write
from arnes.nesting import json_loads
from arnes.workflow import evals


def run_report(rest: list[str]) -> int:
    from arnes.ui.html.eval_report import LoadedReport, render

    parser = argparse.ArgumentParser(prog="arnes eval report", description="Draw eval reports as one HTML page.")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    opts = parser.parse_args(rest)
    loaded = []
    for name in opts.reports:
        try:
            data = evals.check_report(json_loads(Path(name).read_text(encoding="utf-8")), name)
        except (OSError, ValueError) as exc:  # not JSON, not UTF-8, nested too deep
            raise ConfigError(f"cannot read eval report {name}: {exc}") from exc
        loaded.append(LoadedReport(Path(name).stem, data, Path(name)))
    if len({r.label for r in loaded}) < len(loaded):  # same file names from different folders
        loaded = [LoadedReport(f"{r.path.parent.name}/{r.label}", r.data, r.path) for r in loaded]
    target = Path(opts.html)
    if not target.parent.is_dir():
        raise ConfigError(f"--html {target}: the folder {target.parent} does not exist")
    atomic_write(target, render(loaded, target).encode("utf-8"))
    print(f"report page: {target}")
    return 0
