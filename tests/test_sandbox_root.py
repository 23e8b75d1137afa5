"""Outside home, only the system stays readable (red-team finding 4: another project in /var/tmp,
/srv or /work was readable through the read-only root). Every other top-level folder is an empty
one in the sandbox; the workspace, toolchains and virtual environments in them are bound back."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.sandbox.root import hidden_roots, kept_under
from tests.test_sandbox import require, run, session


def test_every_top_level_folder_but_the_systems_is_hidden(tmp_path: Path) -> None:
    for name in ("usr", "etc", "opt", "var/lib", "var/tmp", "var/www", "srv", "work", "mnt", "home"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "lib64").symlink_to("usr")
    (tmp_path / "data").symlink_to("srv")  # a link: its target is judged on its own
    hidden = [p.relative_to(tmp_path).as_posix() for p in hidden_roots(tmp_path)]
    assert hidden == ["home", "mnt", "srv", "var/tmp", "var/www", "work"]


def test_what_commands_run_from_a_hidden_folder_is_bound_back(tmp_path: Path) -> None:
    work = tmp_path / "work"
    venv, scripts, other = work / "proj" / ".venv", work / "tools" / "bin", work / "otherproject"
    for folder in (venv / "bin", scripts, other):
        folder.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    environ = {"PATH": f"{venv}/bin:{scripts}:{work}:/usr/bin"}
    kept = kept_under([work], environ, [], [work / "data"])
    assert [p for p in kept if p.is_relative_to(work)] == [venv, scripts]  # not the folder itself, nor tools/


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="arnes-root-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_workspace_and_a_venv_in_a_hidden_folder_work_but_their_neighbours_do_not_show(var_tmp: Path) -> None:
    require(Bubblewrap.unavailable())
    ws, neighbour = var_tmp / "ws", var_tmp / "other-project"
    ws.mkdir()
    neighbour.mkdir()
    (neighbour / "secret.txt").write_text("CANARY-NEIGHBOUR\n")
    s = session(ws, "bubblewrap")
    out = run(s, f"{sys.executable} -c 'print(42)' > made.txt; cat {neighbour}/secret.txt")
    assert (ws / "made.txt").read_text() == "42\n"  # the workspace writable, arnes's interpreter runs
    assert "CANARY-NEIGHBOUR" not in out and "No such file or directory" in out
    assert "other-project" not in run(s, f"ls {var_tmp}")
