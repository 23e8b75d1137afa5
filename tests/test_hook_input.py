"""What a PreToolUse/PostToolUse hook is told a file tool will touch: the very file it opens."""

from __future__ import annotations

import os
from pathlib import Path

from arnes.agent.hookpoints import hook_input
from arnes.messages import ToolCall


def test_the_path_is_made_absolute_folded_and_real_as_the_tool_opens_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs" / "deep").mkdir(parents=True)
    (ws / "lnk").symlink_to(ws / "docs" / "deep")
    home = os.path.expanduser("~")
    cases = {
        "src/app.py": f"{ws}/src/app.py",
        "lnk/../secrets/t": f"{ws}/secrets/t",  # `..` folds on the text first, as the tools do
        "lnk/x": f"{ws}/docs/deep/x",  # then links resolve
        "~/notes.txt": f"{os.path.realpath(home)}/notes.txt",
        f"{ws}//secrets//a": f"{ws}/secrets/a",
    }
    for written, seen in cases.items():
        got = hook_input(ToolCall("c1", "Write", {"file_path": written, "content": "x"}), ws)
        assert got == {"file_path": seen, "content": "x"}, written
    notebook = hook_input(ToolCall("c2", "NotebookEdit", {"notebook_path": "n.ipynb"}), ws)
    assert notebook == {"notebook_path": f"{ws}/n.ipynb"}


def test_the_path_the_gate_judged_is_the_one_the_hook_sees(tmp_path: Path) -> None:
    """Resolved once, before the hook runs: a link a background command swaps while the hook runs
    cannot make the hook judge one file and the write land in another."""
    ws = tmp_path / "ws"
    (ws / "realdocs").mkdir(parents=True)
    (ws / "docs").symlink_to(ws / "realdocs")  # now; the gate resolved it while it led to secrets/
    judged = {f"{ws}/docs/f.yml": f"{ws}/secrets/f.yml"}
    got = hook_input(ToolCall("c1", "Write", {"file_path": "docs/f.yml", "content": "x"}), ws, judged)
    assert got["file_path"] == f"{ws}/secrets/f.yml"
