"""`${VAR}` and `${VAR:-default}` in an MCP server's settings, as Claude Code expands them.

Claude Code expands the two forms (nothing else: `$VAR` stays as written) in `command`, `args`,
`env`, `url` and `headers`, from the environment arnes runs in. A variable that is unset and has
no default stops that server (Claude Code would fail on the file; arnes names the variable and
the fix, and starts the rest).

A repository's `.mcp.json` is expanded only when its servers may start, that is after `arnes
trust`; and it reads only variables that say where and who (`HOME`, `USER`, `PWD`, `PATH`,
`LANG`, `TMPDIR`, the XDG folders: `PROJECT_VARIABLES`) plus those the user's settings let
commands see (`sandbox.env_passthrough`). The locale's are named one by one, each value a
locale's name: sshd forwards `LC_*` (`AcceptEnv LANG LC_*`), so people carry tokens to other
machines as `LC_TOKEN_GITHUB`, and an `LC_*` glob sent those to a project's URL. Anything else
might be a secret under a name no pattern knows (`BW_SESSION`, `SLACK_WEBHOOK_URL`, `CI_JOB_JWT`,
`TOKEN_GITHUB` all went out to a project's URL when a pattern decided), and a cloned repository
could send it to a URL of its choosing in a header, an argument or the URL itself. The user's
own settings, `~/.claude.json` and `--mcp-config` expand any variable.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

from arnes.mcp.settings import McpServer
from arnes.sandbox.env import LOCALE_NAMES, looks_like_locale, looks_secret

# `${NAME}` or `${NAME:-default}`; the default runs to the first `}` (no nesting, as Claude Code).
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ExpansionError(ValueError):
    """One line for the user: the variable, and what to do."""


def expand_text(text: str, environ: Mapping[str, str], allowed: VariableCheck) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None and (problem := allowed(name, value)):
            raise ExpansionError(problem)
        if value is not None:
            return value
        if default is not None:
            return default
        raise ExpansionError(
            f"${{{name}}} is not set and has no default: export {name} before starting arnes, "
            f"or write ${{{name}:-DEFAULT}}"
        )

    return _REFERENCE.sub(one, text)


# What a project's file may read: where and who, never what (a value of these is no secret).
PROJECT_VARIABLES = frozenset({
    "HOME", "USER", "LOGNAME", "PWD", "PATH", "SHELL", "TERM", "TZ", "TMPDIR",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "CLAUDE_PROJECT_DIR", "ARNES_PROJECT_DIR",
}) | LOCALE_NAMES | {"LANGUAGE"}  # fmt: skip


class VariableCheck:
    """Which variables a server's file may read: every one for the user's own; for a project's,
    PROJECT_VARIABLES and the user's `sandbox.env_passthrough`, and a secret-looking value never."""

    def __init__(self, user: bool, passthrough: Iterable[str] = ()):
        self.user, self.passthrough = user, tuple(passthrough)

    def __call__(self, name: str, value: str) -> str:
        if self.user or any(fnmatch.fnmatchcase(name, glob) for glob in self.passthrough):
            return ""
        if (name in LOCALE_NAMES or name == "LANGUAGE") and not looks_like_locale(value):
            return (
                f"${{{name}}} does not hold a locale's name (C, POSIX, en_US.UTF-8, ...), so it is not expanded: "
                f"set {name} to a locale, or move this server to your user settings (~/.config/arnes/settings.json)"
            )
        if name in PROJECT_VARIABLES and not looks_secret(name, value):
            return ""
        return (
            f"${{{name}}} is not a variable a project's file may read (those say where and who: HOME, USER, "
            f"PWD, PATH, ...): move this server to your user settings (~/.config/arnes/settings.json or "
            f"~/.claude/settings.json), or add {name} to sandbox.env_passthrough there"
        )


def expand_server(server: McpServer, environ: Mapping[str, str], allowed: VariableCheck) -> McpServer:
    """The server with its five fields expanded; ExpansionError names the first variable that stops it."""

    def text(value: str) -> str:
        return expand_text(value, environ, allowed)

    return server.model_copy(
        update={
            "command": None if server.command is None else text(server.command),
            "args": [text(a) for a in server.args],
            "env": {k: text(v) for k, v in server.env.items()},
            "url": None if server.url is None else text(server.url),
            "headers": {k: text(v) for k, v in server.headers.items()},
        }
    )
