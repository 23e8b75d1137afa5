"""Claude Code's `CLAUDE_ENV_FILE`: a SessionStart hook writes `export NAME=value` lines to the file
it names, and every later Bash command of the session gets those variables.

The file is the hook's own temporary one, made where the hook runs (the sandbox's private /tmp, or
the temporary folder of a hook the user runs outside it), never in the workspace; its text comes
back after the hook's stdout, behind a line the hook cannot know (`ENV_RUNNER`), and is read here as
data: no shell runs it on the host. What is read: blank lines and `#` comments; `NAME=value` with an
optional `export `; a value bare, in single quotes (as written) or double quotes, where `$NAME` and
`${NAME}` are put in from the variables commands get and the lines before. Anything else (`$(...)`,
backticks, several words, `unset`) is a line not read, said in a warning.

A variable commands get reaches the model (`echo $X`), and some change what a command the rules
judged runs, so the rules for commands' environment hold here too: a name or value that looks
secret (sandbox/env.py `secret_setting`, as for your settings' `env`), a name that makes bash run
code (`BASH_ENV`, `PROMPT_COMMAND`, ...) or changes which program runs or what git and the loader run
(`LD_*`, `GIT_*`, `NODE_OPTIONS`, `HOME`, ...) is refused; `PATH`, `PYTHONPATH` and `NODE_PATH` keep
only absolute entries outside the workspace (a sandboxed command could write a program there).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from pathlib import Path

from arnes.host.paths import SEARCH_PATHS, search_path
from arnes.permissions.shell import CODE_ENV
from arnes.permissions.simplecommand import risky_env_name
from arnes.sandbox.env import secret_setting

MOST_BYTES = 65_536  # of the file that are read
MOST_NAMES = 100
# Families of names that make a program the rules judged (`rg`, `tar`, `make`, `go build`, a JVM)
# load or run another: its options or flags from the environment (`TAR_OPTIONS=--to-command=...`,
# `GOFLAGS=-toolexec=...`, `MAKEFLAGS`, `JAVA_TOOL_OPTIONS=-javaagent:...`), a wrapper or a config
# file it obeys (`RUSTC_WRAPPER`, `RIPGREP_CONFIG_PATH` with `--pre`), the program it opens
# (`VISUAL`, `MANPAGER`, `BROWSER`), the interpreter's own library or start-up code, npm's settings.
CODE_SETTINGS = (
    "*_OPTIONS", "*_OPTS", "*FLAGS", "*_WRAPPER", "*_CONFIG_PATH", "*_CONFIG_FILE", "*CONFIG", "*PAGER",
    "*EDITOR", "VISUAL", "BROWSER", "GCONV_PATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONSTARTUP", "PERL5*",
    "RUBY*", "npm_config_*", "NPM_CONFIG_*", "CC", "CXX", "CPP", "LD", "AR", "GOTOOLCHAIN",
)  # fmt: skip
# Runs the hook's command with CLAUDE_ENV_FILE set, then prints a line it was not told ($2) and the
# file after its output; the exit code is the hook's.
ENV_RUNNER = (
    'd=$(mktemp -d) || exit 1; export CLAUDE_ENV_FILE="$d/env"; : > "$CLAUDE_ENV_FILE"; bash -c "$1"; rc=$?; '
    f'printf "\\n%s\\n" "$2"; head -c {MOST_BYTES} "$CLAUDE_ENV_FILE"; rm -rf "$d"; exit $rc'
)
_ASSIGNMENT = re.compile(r"(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)")
_EXPANSION = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class NeedsShell(ValueError):
    """A value only a shell could read."""


def read_env_file(text: str, known: Mapping[str, str], workspace: Path) -> tuple[dict[str, str], list[str]]:
    """(the variables commands get, one line for each that is not read or refused)."""
    got: dict[str, str] = {}
    said: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = _ASSIGNMENT.fullmatch(line)
        if found is None:
            said.append(f"line {number} not read: only NAME=value or export NAME=value lines are")
            continue
        name = found.group(1)
        try:
            value = _value(found.group(2), {**known, **got})
        except NeedsShell as exc:
            said.append(f"{name} not read: {exc} (the file is read, not run)")
            continue
        why = refusal(name, value)
        if why is not None:
            said.append(f"{name} not set for commands: {why}")
            continue
        if len(got) >= MOST_NAMES and name not in got:
            said.append(f"{name} and the lines after it not read: at most {MOST_NAMES} variables")
            break
        got[name] = search_path(value, workspace) if name in SEARCH_PATHS else value
    return got, said


def refusal(name: str, value: str) -> str | None:
    """Why commands must not get this variable, or None."""
    if any(fnmatch.fnmatchcase(name, family) for family in CODE_SETTINGS) and name not in SEARCH_PATHS:
        return "it makes a program the permission rules judged run or load other code"
    if secret_setting(name, value):
        return "it looks like a secret, and what commands print reaches the model"
    if CODE_ENV.match(f"{name}=") or (name not in SEARCH_PATHS and risky_env_name(name)):
        return "it changes what the commands the permission rules judged run"
    return None


def _value(raw: str, known: Mapping[str, str]) -> str:
    """A shell word's value, read as bash would for the forms the module's docstring lists."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if char == "'":
            end = raw.find("'", i + 1)
            if end < 0:
                raise NeedsShell("a quote is not closed")
            out.append(raw[i + 1 : end])
            i = end + 1
        elif char == '"':
            i = _double(raw, i + 1, known, out)
        elif char == "\\" and i + 1 < len(raw):
            out.append(raw[i + 1])
            i += 2
        elif char == "$":
            i = _dollar(raw, i, known, out)
        elif char == "`":
            raise NeedsShell("a command substitution")
        elif char in " \t":
            if raw[i:].strip().startswith("#") or not raw[i:].strip():
                break
            raise NeedsShell("several words; quote the value")
        elif char in ";&|<>()":
            raise NeedsShell(f"{char!r} outside quotes")
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _double(raw: str, i: int, known: Mapping[str, str], out: list[str]) -> int:
    while i < len(raw):
        char = raw[i]
        if char == '"':
            return i + 1
        if char == "\\" and i + 1 < len(raw) and raw[i + 1] in '"\\$`':
            out.append(raw[i + 1])
            i += 2
        elif char == "$":
            i = _dollar(raw, i, known, out)
        elif char == "`":
            raise NeedsShell("a command substitution")
        else:
            out.append(char)
            i += 1
    raise NeedsShell("a quote is not closed")


def _dollar(raw: str, i: int, known: Mapping[str, str], out: list[str]) -> int:
    found = _EXPANSION.match(raw, i)
    if found is not None:
        out.append(known.get(found.group(1) or found.group(2), ""))
        return found.end()
    if i + 1 >= len(raw) or raw[i + 1] in " \t\"'":
        out.append("$")
        return i + 1
    raise NeedsShell(f"{raw[i : i + 2]!r} needs a shell")
