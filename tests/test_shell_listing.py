"""A pattern the shell expands lists a folder, whatever the program; `test -f` probes a file
(red-team finding 7: `echo /outside/*` listed another project with no prompt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_shell_bypasses import kind


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    return tmp_path / "ws"


@pytest.mark.parametrize(
    "command",
    [
        "echo /srv/*",
        "printf '%s\\n' /var/tmp/*",
        "echo ~/*",
        "echo ../*",
        'echo "/srv"/*',
        "echo /s?v/x",
        "echo $HOME/*",
        "for f in /srv/*; do echo $f; done",
        "true && echo /{srv,opt}/*",
        "test -f /srv/x",
        "[ -e /srv/x ]",
        "[ -d ~/.ssh ]",
        "test a.txt -nt /srv/x",
    ],
)
def test_a_listing_or_a_probe_outside_the_workspace_asks(ws: Path, command: str) -> None:
    assert kind(ws, command) == "ask"
    assert kind(ws, command, "acceptEdits", sandboxed=True) == "ask"


@pytest.mark.parametrize(
    "command",
    ["echo *", "echo src/*.py", "echo '/srv/*'", "echo \\/srv/\\*", 'echo "/srv/*"', "for f in src/*; do echo $f; done",
     "test -f src/a.py", "[ -d src ]", "[ x = y ]", "find . -name '*.py'"],
)  # fmt: skip
def test_patterns_and_probes_inside_the_workspace_or_quoted_run(ws: Path, command: str) -> None:
    assert kind(ws, command) == "allow"
