"""The environment a shell command gets: the user's, less anything that looks like a secret.

Provider keys and tokens in the environment are for arnes (and the user's own shell), not for
commands the model writes: `env` or a test that prints its environment would hand them to the
model, and with the network on to anyone. Names the user's settings list (sandbox.env_passthrough,
exact names or globs) pass anyway. This holds with every sandbox, `off` included.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

# Whole-name patterns, case-insensitive: *_KEY, *_TOKEN, *PASSWORD*, provider prefixes, ...
_SECRET_NAME = re.compile(
    r"""(?ix)
    (^|_)(KEY|KEYS|APIKEY|TOKEN|TOKENS|SECRET|SECRETS|PASS|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH|PAT)$
    | PASSWORD | SECRET | PRIVATE_KEY
    | ^(ANTHROPIC|OPENAI|AWS|GEMINI|MISTRAL|GROQ|COHERE|OPENROUTER|DEEPSEEK|TOGETHER|FIREWORKS)_
    """
)
# A URL carrying a user name and a password (postgres://user:pass@host/db).
_URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
# Needed by commands and not secret, even though a pattern above would catch them.
_KEEP = frozenset({"GIT_TERMINAL_PROMPT", "GIT_PAGER", "SSH_AUTH_SOCK"})
QUIET_PAGERS = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def looks_secret(name: str, value: str) -> bool:
    if name.upper() in _KEEP:
        return False
    return bool(_SECRET_NAME.search(name) or _URL_WITH_PASSWORD.match(value))


def command_env(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """`environ` less its secrets (unless listed in `passthrough`), with pagers that never wait."""
    allowed = tuple(passthrough)
    kept = {
        name: value
        for name, value in environ.items()
        if not looks_secret(name, value) or any(fnmatch.fnmatchcase(name, glob) for glob in allowed)
    }
    return {**kept, **QUIET_PAGERS}


# Search paths whose relative (or empty) entries mean the folder a program runs in.
SEARCH_PATHS = ("PATH", "PYTHONPATH", "NODE_PATH")


def absolute_entries(value: str) -> str:
    """A search path with its relative and empty entries left out: in the workspace they would
    name the repository's files."""
    return os.pathsep.join(p for p in value.split(os.pathsep) if os.path.isabs(p))


def user_program_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of a program of the user's own (a hook from the user's settings) that runs
    in the workspace: it must not pick up the repository's files by accident. `python -m NAME`
    and `python -c` do not put the working folder on sys.path (PYTHONSAFEPATH, Python 3.11+),
    and PATH, PYTHONPATH and NODE_PATH keep only absolute entries."""
    fixed = {name: absolute_entries(env[name]) for name in SEARCH_PATHS if name in env}
    return {**env, **fixed, "PYTHONSAFEPATH": "1"}
