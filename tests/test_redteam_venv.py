"""Red team: a `.venv/pyvenv.cfg` that a command writes opens a broad folder of the home to commands.

sandbox/home.py binds back, read-only, the folder a workspace virtual environment's interpreter
comes from: the parent of pyvenv.cfg's `home = .../bin` when that bin holds a python. The check
("`home` must name a folder that really holds a Python interpreter; otherwise `home =
~/projects/bin` would open another folder of the user's") is met by any folder of the user's with a
`bin/python3`: `~/.local` (uv's `python install --default`, pip's user scheme), `~/anaconda3`,
`~/miniconda3`, ... So a command (run unasked in acceptEdits) writes
`.venv/pyvenv.cfg` with `home = ~/.local/bin`, and the next command reads all of `~/.local`
(`~/.local/share/*`: shell histories, application data) though the home folder is "hidden".
Expected: only the interpreter's own installation (the folder holding `lib/pythonX.Y`), or nothing
that a workspace file chose. Fails while the hole exists.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import scripted_outputs

pytestmark = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")


def test_a_workspace_pyvenv_cfg_does_not_open_local_share(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".local" / "bin").mkdir(parents=True)
    os.symlink(os.path.realpath(sys.executable), home / ".local" / "bin" / "python3")
    (home / ".local" / "share" / "app").mkdir(parents=True)
    secret = home / ".local" / "share" / "app" / "history"
    secret.write_text("CANARY-LOCAL-SHARE\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    read = f"python3 -c 'import sys; print(open(sys.argv[1]).read())' {secret}"
    plant = f"mkdir -p .venv && printf 'home = {home}/.local/bin\\n' > .venv/pyvenv.cfg"
    outputs = scripted_outputs(
        tmp_path,
        ws,
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": read}}]},  # hidden, as promised
            {"tool_calls": [{"name": "Bash", "input": {"command": plant}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": read}}]},
        ],
    )
    assert len(outputs) == 3
    assert "CANARY-LOCAL-SHARE" not in outputs[0]  # the control: home is hidden
    assert "CANARY-LOCAL-SHARE" not in outputs[2], "a planted pyvenv.cfg opened ~/.local to commands"
