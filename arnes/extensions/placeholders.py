"""The text substitutions of command and skill bodies, in one pass (an argument that itself says
`$1` or `${CLAUDE_SKILL_DIR}` stays as typed).

Commands keep Claude Code's command-file spelling: `$1` is the first word. Skills follow its skills
docs ("Available string substitutions"): `$N` is `$ARGUMENTS[N]`, so `$0` is the first word and `$1`
the second, a word not given stays as written; `${CLAUDE_SKILL_DIR}` is the skill's folder and
`${CLAUDE_SESSION_ID}` the session's id. `$ARGUMENTS` is the whole string and `$ARGUMENTS[N]` a word
counted from 0 in both.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$([0-9]+)|\$\{(CLAUDE_SKILL_DIR|CLAUDE_SESSION_ID)\}")


def words(arguments: str) -> list[str]:
    """Shell-like words; a stray quote falls back to plain blanks rather than refusing the prompt."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def substitute(
    text: str, arguments: str, *, skill: bool = False, variables: Mapping[str, str] = {}
) -> tuple[str, bool]:
    """`text` with its placeholders filled in, and whether it had an argument placeholder (a body
    with none gets `ARGUMENTS: ...` appended by the caller). A `${NAME}` not in `variables` stays."""
    parts = words(arguments)
    used = False

    def value(match: re.Match[str]) -> str:
        nonlocal used
        if match.group(3) is not None:
            return (variables or {}).get(match.group(3), match.group(0))
        if match.group(2) is not None:
            n = int(match.group(2))
            if skill:  # $N is $ARGUMENTS[N]; one not given stays as written, as in Claude Code
                used = True
                return parts[n] if n < len(parts) else match.group(0)
            if n == 0 or match.group(2).startswith("0"):
                return match.group(0)  # commands count from $1: `$0` is not theirs
            used = True
            return parts[n - 1] if n <= len(parts) else ""
        used = True
        if match.group(1) is not None:  # $ARGUMENTS[N], from 0
            n = int(match.group(1))
            return parts[n] if n < len(parts) else ""
        return arguments

    return PLACEHOLDER.sub(value, text), used
