"""Claude Code's `apiKeyHelper`: a command of the user's own settings that prints the API key.

It runs on the host (it reads the user's keychain or vault), once a run, with a time limit; its
output is the key and is never shown. A helper that fails is one line naming the file and the
fix, never a key on the screen.
"""

from __future__ import annotations

import subprocess

from arnes.errors import ConfigError

TIMEOUT = 30.0  # seconds: a vault asked over the network may be slow, a hung helper must not hang arnes


def run_key_helper(command: str, source: str) -> str:
    """The key `command` prints (its first line, stripped); ConfigError when it prints none."""
    where = f"{source}: apiKeyHelper"
    try:
        done = subprocess.run(["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT, check=False)  # fmt: skip
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
