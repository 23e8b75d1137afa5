"""Ask real bash which simple commands a command line runs, to hold the parser's reading against it.

Every command runs as bash parses `bash -c COMMAND` (as the Bash tool runs it), from an empty
environment, in a fresh folder, with PATH naming only a folder of logging stubs: each stub
records its name, arguments and working folder and does nothing else, a function of the same
name does the same without starting a process, and `command_not_found_handle` records any other
name; common builtins (`echo`, `test`, ...) are recorded by functions that shadow them. Stubs
are /bin/sh scripts (which ignore BASH_ENV); the shells are stubs that record and then run the
real bash, so `bash -c '...'` is followed inside. Nothing real runs but bash itself, in a folder that is thrown away.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

STUBBED = """rm touch cat ls curl git sed awk gawk tar find xargs timeout nice env nohup grep head tail mkdir cp mv
    chmod wc sort id whoami hostname printenv date python3 make npm victim stdbuf ionice setsid flock watch
    strace busybox sudo doas command_stub rg jq du tree diff strings""".split()
SHELLS = ("bash", "sh")
RECORDED_BUILTINS = "echo printf test [ pwd kill type".split()
_STUB = """#!/bin/sh
{ printf '%s\\0' "$PWD" "$#" "${0##*/}" "$@"; } >> "$ORACLE_LOG"
"""
_SHELL_STUB = _STUB + 'exec /bin/bash "$@"\n'
# Functions record without starting a process; the stubs on PATH catch what bypasses functions
# (`exec rm`, `command rm`, a program started by another program).
_RECORD = """__oracle_record() { { builtin printf '%s\\0' "$PWD" "$(($# - 1))" "$@"; } >> "$ORACLE_LOG"; return 0; }
command_not_found_handle() { __oracle_record "$@"; }
"""
_INIT = _RECORD + "".join(f'{name}() {{ __oracle_record {name} "$@"; }}\n' for name in STUBBED + RECORDED_BUILTINS)


@dataclass
class Ran:
    """What bash did for one command line: the commands it ran (with their folder) and files it made."""

    folder: Path
    commands: list[tuple[str, list[str]]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)


def _stubs(root: Path) -> Path:
    stubs = root / "stubs"
    stubs.mkdir()
    for name in STUBBED:
        (stubs / name).write_text(_STUB)
        (stubs / name).chmod(0o755)
    for name in SHELLS:
        (stubs / name).write_text(_SHELL_STUB)
        (stubs / name).chmod(0o755)
    (root / "init.sh").write_text(_INIT)
    return stubs


def _records(raw: bytes) -> list[tuple[str, list[str]]]:
    fields = raw.decode(errors="replace").split("\0")
    out, i = [], 0
    while i + 2 < len(fields):
        cwd, count = fields[i], int(fields[i + 1])
        words = fields[i + 2 : i + 3 + count]
        out.append((cwd, words))
        i += 3 + count
    return out


_DRIVER = """
__oracle_n=0
while IFS= read -r -d '' __oracle_line; do
  cd "$ORACLE_ROOT/runs/$__oracle_n" || exit 3
  unset OLDPWD
  export HOME="$PWD/home" ORACLE_LOG="$ORACLE_ROOT/log$__oracle_n"
  ( eval "$__oracle_line" ) </dev/null >/dev/null 2>&1
  __oracle_n=$((__oracle_n + 1))
done < "$ORACLE_ROOT/lines"
"""


def run_all(commands: list[str], root: Path) -> list[Ran]:
    """Each command in its own folder `root/runs/N`, which holds a file `victim`, folders `home`
    ($HOME), `sub` and `far/deep`, and `lnk`, a link to `far/deep` (so `lnk/..` is `far`).

    One bash runs them all, each in a subshell through `eval`, which parses a string as `bash -c`
    does (one command at a time, so an alias or a shopt takes effect on the next line); OLDPWD
    is unset for each, as in a fresh `bash -c`."""
    stubs = _stubs(root)
    before = {"home", "victim", "sub", "far", "far/deep", "lnk"}
    os.mkdir(root / "runs")
    for n in range(len(commands)):
        folder = f"{root}/runs/{n}"
        for name in ("", "/home", "/sub", "/far", "/far/deep"):
            os.mkdir(folder + name)
        os.symlink(folder + "/far/deep", folder + "/lnk")
        with open(folder + "/victim", "w") as f:
            f.write("v\n")
    (root / "lines").write_bytes(b"".join(c.encode() + b"\0" for c in commands))
    (root / "driver.sh").write_text(_INIT + _DRIVER)
    env = {"PATH": str(stubs), "ORACLE_ROOT": str(root), "BASH_ENV": str(root / "init.sh")}
    subprocess.run(["/bin/bash", str(root / "driver.sh")], cwd=root, env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    results = []
    for n in range(len(commands)):
        folder = root / "runs" / str(n)
        created = sorted(
            os.path.relpath(os.path.join(d, f), folder)
            for d, dirs, files in os.walk(folder)
            for f in files + dirs
            if os.path.relpath(os.path.join(d, f), folder) not in before
        )
        log = root / f"log{n}"
        results.append(Ran(folder, _records(log.read_bytes() if log.exists() else b""), created))
    return results
