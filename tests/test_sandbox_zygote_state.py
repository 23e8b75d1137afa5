"""Each command's sandbox is as bwrap made it, compared by more than names (sandbox/zygote_server.py).

Red team round 2 (low) found that the session's command server does not give each command a fresh
sandbox: an entry that existed when the server started can be replaced, and the replacement
outlives the command.

zygote_server.py promises "each command begins as a fresh bubblewrap would give it": after a
command, every path under the tmpfs folders (/tmp, /dev, home, /run, the hidden roots) that was
not there at the start is removed. But it compares path NAMES only: a command that unlinks a
pre-existing entry and puts something else under the same name (here /dev/stdout, a link bwrap
made, now pointing at a file the first command chose) leaves it for every later command of the
session. A repository's first command (a test it ships, run unasked in acceptEdits or by an
allow rule) can so plant state for later ones, e.g. redirect what later commands write to
/dev/stdout into a file it reads afterwards. Inside the sandbox only: nothing reaches the host.

Expected: the second command sees /dev/stdout as bwrap made it (-> /proc/self/fd/1). FAILS while
the hole exists. tests/test_sandbox_zygote.py has the finer cases (a folder's bits, what cannot be
put back retires the sandbox).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import scripted_outputs

pytestmark = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")

PLANT = (
    "import os; os.unlink('/dev/stdout'); os.symlink('/tmp/planted-by-first-command', '/dev/stdout'); print('planted')"
)
LOOK = "import os; print('LINK=' + os.readlink('/dev/stdout'))"


def test_a_replaced_dev_entry_does_not_outlive_its_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "plant.py").write_text(PLANT + "\n")
    (ws / "look.py").write_text(LOOK + "\n")
    outputs = scripted_outputs(
        tmp_path,
        ws,
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "python3 plant.py"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "python3 look.py"}}]},
        ],
    )
    assert "planted" in outputs[0], outputs
    assert "LINK=" in outputs[1], outputs
    assert "planted-by-first-command" not in outputs[1], "the first command's /dev/stdout reached the second"
