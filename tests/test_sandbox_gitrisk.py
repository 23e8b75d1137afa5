"""What counts as a repository (sandbox/repos.py) and what in one runs a program (sandbox/gitrisk.py):
the pieces the sandbox's nested-repository guard is built from (end to end: test_sandbox_nested_git.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arnes.sandbox.gitguard import check, start
from arnes.sandbox.gitrisk import config_runs_programs, risky_parts
from arnes.sandbox.repos import Walker, find_repos

INIT = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
CLONE = INIT + '[remote "origin"]\n\turl = /x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
CLONE += '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\temail = a@b\n'


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        (INIT, False),
        (CLONE, False),
        ("# a comment\n; another\n\n[core]\n", False),
        (INIT + "\tfsmonitor = touch x\n", True),
        (INIT + "\thooksPath = h\n", True),
        ("[core] pager = less; touch x\n", True),  # a key on the section's line
        ("[CORE]\n\tSSHCOMMAND = x\n", True),
        ("[alias]\n\tci = !touch x\n", True),
        ('[diff "x"]\n\ttextconv = touch x\n', True),
        ('[filter "x"]\n\tsmudge = touch x\n', True),
        ("[include]\n\tpath = other\n", True),
        ('[includeIf "gitdir:/"]\n\tpath = other\n', True),
        ('[remote "o"]\n\tuploadpack = touch x\n', True),
        ('[url "ext::sh -c x"]\n\tinsteadOf = https://\n', True),
        ("[core]\n\tbare = false \\\n\tfsmonitor = x\n", True),  # a continued line
        ("[core\n\tfsmonitor = x\n", True),  # a header this reader cannot place
        ("\tbare = false\n", True),  # a key before any section
        ("[core.x]\n\tfilemode = true\n", False),  # the old `section.sub` spelling
    ],
)
def test_config_keys_outside_the_inert_list_count_as_running_programs(text: str, runs: bool) -> None:
    assert config_runs_programs(text) is runs


def _git(*args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], check=True, capture_output=True)


def test_find_repos_finds_nested_folders_pointers_and_bare_layouts_but_not_the_top_level(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _git("init", "-q", str(ws))
    _git("init", "-q", str(ws / "vendor" / "lib"))
    _git("init", "-q", str(ws / ".venv" / "src" / "pkg"))  # pip's editable VCS installs: walked too
    _git("init", "-q", "--bare", str(ws / "remote.git"))
    (ws / "store").mkdir()
    (ws / "sub").mkdir()
    _git("-C", str(ws / "sub"), "init", "-q", "--separate-git-dir", str(ws / "store" / "sub.git"))
    (ws / "link").symlink_to(ws / "vendor")  # never followed: found once, where it is
    found = find_repos(ws)
    paths = sorted(r.path.relative_to(ws).as_posix() for r in found.repos)
    assert paths == [".venv/src/pkg/.git", "remote.git", "store/sub.git", "sub/.git", "vendor/lib/.git"]
    pointer = next(r for r in found.repos if r.path == ws / "sub" / ".git")
    assert pointer.pointer and pointer.git_dirs == (ws / "store" / "sub.git",)
    assert found.complete


def test_past_the_bound_the_walk_says_it_is_incomplete_and_the_sandbox_warns(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    assert not find_repos(tmp_path, most=3).complete
    assert find_repos(tmp_path, most=6).complete


def test_a_pointer_leading_out_of_the_workspace_is_renamed_aside_unless_it_was_there(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "old").mkdir(parents=True)
    (ws / "old" / ".git").write_text("gitdir: /elsewhere\n")
    walker = Walker(ws)
    before = start(walker)
    (ws / "new").mkdir()
    (ws / "new" / ".git").write_text(f"gitdir: {tmp_path}\n")
    said = check(walker, before)
    assert (ws / "old" / ".git").is_file() and not (ws / "new" / ".git").exists()
    assert (ws / "new" / ".git.arnes-disabled").is_file() and len(said) == 1 and "new/.git" in said[0]


def test_an_operation_left_half_done_and_a_hooks_link_are_risky(tmp_path: Path) -> None:
    git_dir = tmp_path / "g"
    (git_dir / "rebase-merge").mkdir(parents=True)
    (git_dir / "hooks").symlink_to(tmp_path)
    assert sorted(p.name for p in risky_parts(git_dir)) == ["hooks", "rebase-merge"]


def test_the_start_says_in_one_line_what_is_past_its_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    for name in ("a", "b", "c"):
        _git("init", "-q", str(ws / name))
    assert start(Walker(ws)).warning() is None
    warning = start(Walker(ws, most=2)).warning()
    assert warning is not None and "not held" in warning and "\n" not in warning
    monkeypatch.setattr("arnes.sandbox.gitguard.MOST_REPOS", 2)
    many = start(Walker(ws))
    assert len(many.held(ws)) == 2 and "3 git repositories" in (many.warning() or "")


def test_the_workspace_laid_out_as_a_bare_repository_is_checked_not_held(tmp_path: Path) -> None:
    """It cannot be bound read-only (it is the workspace); a config planted there goes aside."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)  # the sandbox's empty stand-in: git then tries the folder itself
    walker = Walker(ws)
    before = start(walker)
    (ws / "objects").mkdir()
    (ws / "refs").mkdir()
    (ws / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "config").write_text("[core]\n\tpager = touch x\n")
    assert before.held(ws) == [] and len(check(walker, before)) == 1
    assert (ws / "config.arnes-disabled").is_file() and not (ws / "config").exists()


def test_a_fifo_named_git_commondir_or_config_neither_hangs_nor_passes(tmp_path: Path) -> None:
    """read_regular opens without blocking: a FIFO no one writes to is refused, not waited on."""
    ws = tmp_path / "ws"
    ws.mkdir()
    walker = Walker(ws)
    before = start(walker)
    (ws / "a").mkdir()
    os.mkfifo(ws / "a" / ".git")  # a pointer nobody can read: renamed aside
    _git("init", "-q", str(ws / "b"))
    (ws / "b" / ".git" / "config").unlink()
    os.mkfifo(ws / "b" / ".git" / "config")
    said = check(walker, before)
    assert (ws / "a" / ".git.arnes-disabled").exists() and (ws / "b" / ".git" / "config.arnes-disabled").exists()
    assert len(said) == 2


def test_a_check_that_finds_more_folders_than_the_bound_says_so_once(tmp_path: Path) -> None:
    from arnes.sandbox.gitguard import Guard

    ws = tmp_path / "ws"
    ws.mkdir()
    guard = Guard(ws)
    guard.recorded()
    guard._walker.most = 3  # the bound, made small
    for i in range(5):
        (ws / f"d{i}").mkdir()
    assert any("not checked" in line for line in guard.check())
    assert not any("not checked" in line for line in guard.check())


def test_a_folder_a_command_made_unlistable_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`chmod 000 sub` after planting `sub/.git/hooks/...`: the check cannot see in, so it says so
    (as root the permissions do not stop the listing, so the refusal is made by hand here)."""
    from arnes.sandbox import repos
    from arnes.sandbox.gitguard import Guard

    ws = tmp_path / "ws"
    ws.mkdir()
    guard = Guard(ws)
    guard.recorded()
    (ws / "sub").mkdir()
    real = os.scandir

    def refusing(path: str) -> object:
        if path.endswith("/sub"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(repos.os, "scandir", refusing)
    said = guard.check()
    assert len(said) == 1 and said[0].startswith("warning: sub cannot be listed") and guard.check() == []
