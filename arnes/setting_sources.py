"""Which settings sources a run reads: Claude Code's `--setting-sources` (the Agent SDKs pass it for
`setting_sources`, so that an app's run leaves the developer's own files out, or the project's).

`user`: your settings files (`~/.claude/settings.json`, `~/.config/arnes/settings.json`), the user
scope of `~/.claude.json` and Codex's `config.toml`, your instruction files, rules, commands,
agents, skills and plugins. `project`: the project's settings files, `.mcp.json`, its CLAUDE.md /
AGENTS.md files, rules, commands, agents and skills. `local`: `settings.local.json`, the local scope
of `~/.claude.json`, CLAUDE.local.md. Without the flag, all three. The built-in rules (the secret
denies) are not a source: they always hold.

Kept in arnes's environment, like `--plugin-dir`'s folders, so every reader (and a sub-agent's
run) sees the same choice.
"""

from __future__ import annotations

import os
from typing import Literal

from arnes.errors import ConfigError

VARIABLE = "ARNES_SETTING_SOURCES"
Source = Literal["user", "project", "local"]
SOURCES: tuple[Source, ...] = ("user", "project", "local")


def note(value: str | None) -> None:
    """`--setting-sources user,project` (an empty value: none); ConfigError for a name that is not one."""
    if value is None:
        return
    given = [word.strip() for word in value.split(",") if word.strip()]
    wrong = [word for word in given if word not in SOURCES]
    if wrong:
        raise ConfigError(f"--setting-sources: {wrong[0]!r} is not a source; give user, project and/or local, "
                          "comma-separated")  # fmt: skip
    os.environ[VARIABLE] = ",".join(given)


def reads(source: Source, env: dict[str, str] | None = None) -> bool:
    """Whether this run reads `source`."""
    value = (os.environ if env is None else env).get(VARIABLE)
    return value is None or source in value.split(",")
