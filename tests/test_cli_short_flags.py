"""End to end: the short flags of Claude Code and Codex that scripts and fingers type, with the real `arnes`."""

from __future__ import annotations

from arnes import __version__
from tests.conftest import run_arnes


def test_dash_v_prints_the_version_as_claude_code_does() -> None:
    for flag in ("-v", "--version"):
        run = run_arnes(flag)
        assert (run.code, run.out.strip()) == (0, f"arnes {__version__}"), run.err
