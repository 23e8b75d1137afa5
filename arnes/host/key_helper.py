"""Claude Code's `apiKeyHelper`: a command of the user's own settings that prints the API key.

It runs on the host (it reads the user's keychain or vault), once a run, with a time limit; its
output is the key and is never shown. A helper that fails is one line naming the file and the
fix, never a key on the screen. It is the user's program, so it must not find the repository's:
it runs from the home folder (or `/` when the workspace holds the home), with the workspace's and
relative entries out of PATH, PYTHONPATH and NODE_PATH, and with PYTHONSAFEPATH (`python -m
keyring` must not import a `keyring.py` of the repository).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

from arnes.errors import ConfigError
from arnes.host.paths import is_inside, resolve_real, user_program_env

TIMEOUT = 30.0  # seconds: a vault asked over the network may be slow, a hung helper must not hang arnes


class KeyHelper(NamedTuple):
    command: str
    source: str  # the user's settings file that set it
    workspace: Path  # the folder whose files the helper must not pick up


def helper_folder(workspace: Path) -> str:
    home = resolve_real(Path.home())
    return "/" if is_inside(resolve_real(workspace), home) else str(home)


def run_key_helper(helper: KeyHelper) -> str:
    """The key the helper prints (its first line, stripped); ConfigError when it prints none."""
    where = f"{helper.source}: apiKeyHelper"
    try:
        done = subprocess.run(["/bin/sh", "-c", helper.command], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT, check=False, cwd=helper_folder(helper.workspace),
                              env=user_program_env(os.environ, helper.workspace))  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{where} printed no key within {TIMEOUT:g} s; fix it or export ANTHROPIC_API_KEY") from None
    except OSError as exc:
        raise ConfigError(f"{where} could not start ({exc.strerror or exc}); fix the command") from None
    key = done.stdout.decode("utf-8", errors="replace").strip().split("\n", 1)[0].strip()
    if done.returncode != 0 or not key:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(f"{where} exited with {done.returncode} and printed no key ({said[0][:200]}); fix it "
                          "or export ANTHROPIC_API_KEY")  # fmt: skip
    return key
