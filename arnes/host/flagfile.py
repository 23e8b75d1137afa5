"""A file the command line names (`--json-schema FILE`, `--append-system-prompt-file`, `--settings`,
`--mcp-config`): read as given, except that a name inside the workspace (or the current folder)
is read through no link that leads out of it, and never from a FIFO.

A CI job that names a file of the repository in a flag reads what the repository holds: a pull
request that makes that file a link to `/proc/self/environ` or `~/.docker/config.json` would
otherwise send the job's secrets to the model."""

from __future__ import annotations

import os
from pathlib import Path

from arnes.errors import ConfigError
from arnes.host.nofollow import read_regular
from arnes.host.paths import is_inside, resolve_real

MOST_BYTES = 8 << 20


def read_flag_file(value: str, flag: str, workspace: Path | None) -> str:
    path = Path(os.path.abspath(Path(value).expanduser()))
    real = resolve_real(path)
    for root in {Path(os.path.abspath(r)) for r in (workspace, Path.cwd()) if r is not None}:
        if is_inside(root, path) and not is_inside(resolve_real(root), real):
            raise ConfigError(
                f"{flag} {value}: a link that leads out of {root} (to {real}); a file inside it is read only "
                "as it is there: name the file itself"
            )
    try:
        data, _ = read_regular(real, MOST_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{flag} {value}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MOST_BYTES:
        raise ConfigError(f"{flag} {value}: over {MOST_BYTES >> 20} MB; name a smaller file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{flag} {value}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
