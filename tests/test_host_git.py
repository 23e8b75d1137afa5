"""Git on the host runs no repository code: hostile repositories against the real `arnes handoff`.

Each layout makes a plain `git status` in the workspace run a program of the repository's
choosing (the first test proves it does); `arnes handoff` must not.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_arnes

GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"]


def git(where: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=where, check=True, capture_output=True)


def program(tmp_path: Path, marker: Path) -> str:
    """A script outside the workspace that leaves `marker` behind when anything runs it."""
    script = tmp_path / f"run-{marker.name}"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat >/dev/null 2>&1\nexit 0\n")
    script.chmod(0o755)
    return str(script)


def fsmonitor_in_git_config(ws: Path, run: str) -> None:
    """A tarball that ships its .git: core.fsmonitor runs on every status."""
    git(ws, "init", "-q")
    (ws / "f.txt").write_text("x\n")
    git(ws, "add", "f.txt")
    git(ws, "commit", "-qm", "start")
    git(ws, "config", "core.fsmonitor", run)


def nested_submodule(ws: Path, run: str) -> None:
    """A nested repository the top one records as a submodule: status recurses into it."""
    git(ws, "init", "-q")
    sub = ws / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "g.txt").write_text("y\n")
    git(sub, "add", "g.txt")
    git(sub, "commit", "-qm", "sub")
    git(ws, "add", "sub")
    git(ws, "commit", "-qm", "top")
    git(sub, "config", "core.fsmonitor", run)


def gitfile_to_planted_folder(ws: Path, run: str) -> None:
    """`.git` is a gitfile pointing at a git folder the repository planted beside it."""
    planted = ws / "planted"
    git(ws, "init", "-q", "--separate-git-dir", str(planted))
    (ws / ".git").write_text("gitdir: planted\n")
    git(ws, "config", "core.fsmonitor", run)


def bare_layout(ws: Path, run: str) -> None:
    """The workspace itself laid out as a bare repository: HEAD, config, objects/ at the top."""
    git(ws, "init", "-q", "--bare", ".")
    git(ws, "--git-dir=.", "config", "core.bare", "false")
    git(ws, "--git-dir=.", "config", "core.worktree", str(ws))
    git(ws, "--git-dir=.", "config", "core.fsmonitor", run)


def clean_filter(ws: Path, run: str) -> None:
    """A filter driver the repository names in .gitattributes and defines in its config."""
    git(ws, "init", "-q")
    (ws / ".gitattributes").write_text("*.txt filter=evil\n")
    (ws / "f.txt").write_text("x\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "start")
    git(ws, "config", "filter.evil.clean", f"{run} %f")
    (ws / "f.txt").write_text("y\n")  # changed: status runs the clean filter to compare


def filter_named_with_an_equals_sign(ws: Path, run: str) -> None:
    """Found by the red team: `-c filter.a=b.clean=` splits at the first `=`, so `a=b` kept running."""
    git(ws, "init", "-q")
    (ws / ".gitattributes").write_text("*.txt filter=a=b\n")
    (ws / "f.txt").write_text("x\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "start")
    git(ws, "config", "filter.a=b.clean", f"{run} %f")
    (ws / "f.txt").write_text("y\n")


LAYOUTS = [
    fsmonitor_in_git_config, nested_submodule, gitfile_to_planted_folder, bare_layout, clean_filter,
    filter_named_with_an_equals_sign,
]  # fmt: skip


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
def test_handoff_runs_no_repository_code(tmp_path: Path, layout: Callable[[Path, str], None]) -> None:
    control, marker = tmp_path / "control", tmp_path / "marker"
    # The attack is real: in a twin of the workspace, a plain git status runs the repository's program.
    (tmp_path / "twin").mkdir()
    layout(tmp_path / "twin", program(tmp_path, control))
    subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path / "twin", capture_output=True, check=False)
    assert control.exists(), "the layout does not attack git status; the test would prove nothing"
    ws = tmp_path / "ws"
    ws.mkdir()
    layout(ws, program(tmp_path, marker))
    run = run_arnes("-w", str(ws), "handoff")
    assert "Traceback" not in run.err and "handoff:" in run.out, run.err
    assert not marker.exists(), f"arnes handoff ran the repository's program:\n{run.out}"


def test_handoff_still_sees_uncommitted_work_in_a_plain_repository(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "PROGRESS.md").write_text("# Progress\n")
    git(ws, "add", "PROGRESS.md")
    git(ws, "commit", "-qm", "start")
    (ws / "new.txt").write_text("new\n")
    run = run_arnes("-w", str(ws), "handoff")
    assert "uncommitted changes: new.txt" in run.out, run.out


def test_git_variables_of_the_user_do_not_redirect_arnes(tmp_path: Path) -> None:
    ws, planted, marker = tmp_path / "ws", tmp_path / "planted", tmp_path / "marker"
    ws.mkdir()
    git(ws, "init", "-q")
    git(tmp_path, "init", "-q", "--bare", str(planted))
    git(planted, "--git-dir=.", "config", "core.fsmonitor", program(tmp_path, marker))
    env = {"GIT_DIR": str(planted), "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
           "GIT_CONFIG_VALUE_0": program(tmp_path, marker)}  # fmt: skip
    run = run_arnes("-w", str(ws), "handoff", env=env)
    assert "uncommitted changes: 0 paths" in run.out, run.out
    assert not marker.exists()


def test_a_gitfile_is_named_and_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text("gitdir: /elsewhere\n")
    run = run_arnes("-w", str(ws), "handoff")
    assert "git: .git is a file pointing elsewhere" in run.out
