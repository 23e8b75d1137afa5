"""git-lfs runs programs the repository names: `lfs.extension.NAME.clean`/`smudge` and
`lfs.customtransfer.NAME.path` in `.git/config`. git-lfs itself starts from the user's own
`filter.lfs` (written to ~/.gitconfig by `git lfs install`), which arnes leaves alone so LFS files
stay pointers; so a repository key naming such a program must keep git from running on the host
(`arnes handoff`'s status, the commit route) and out of the read-only command class.

git-lfs is not installed here: the user's filter is a small stand-in that does what git-lfs
does with an extension (reads its program from the repository's config and runs it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arnes.host.git import LFS_INERT, lfs_program, repository, run_git
from arnes.permissions.gitrepo import repository_code
from tests.conftest import run_arnes


def _lfs_repository(tmp_path: Path, extra_config: str) -> tuple[Path, Path]:
    """A repository whose `*.bin` files go through the user's `filter.lfs`, and a marker path."""
    marker = tmp_path / "PWNED"
    fake_lfs = tmp_path / "fake-git-lfs"
    fake_lfs.write_text(
        "#!/bin/sh\n"
        "# like git-lfs clean: run the repository's extension, then pass the content through\n"
        'ext=$(git config --get lfs.extension.x.clean)\n[ -n "$ext" ] && sh -c "$ext" </dev/null\ncat\n'
    )
    fake_lfs.chmod(0o755)
    home = Path(os.environ["HOME"])
    with open(home / ".gitconfig", "a", encoding="utf-8") as config:
        config.write(f'[filter "lfs"]\n\tclean = {fake_lfs} clean %f\n\tsmudge = cat\n\trequired = true\n')
    ws = tmp_path / "ws"
    ws.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True)

    git("init", "-q")
    (ws / ".gitattributes").write_text("*.bin filter=lfs\n")
    (ws / "a.bin").write_bytes(b"\x00data\n")
    git("add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init")
    with open(ws / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(extra_config.replace("MARKER", str(marker)))
    st = os.stat(ws / "a.bin")
    os.utime(ws / "a.bin", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # git re-reads it
    return ws, marker


EXTENSION = '[lfs "extension.x"]\n\tclean = touch MARKER\n\tpriority = 0\n'


def test_the_stand_in_runs_the_extension_under_plain_git(tmp_path: Path) -> None:
    """The control for the attack: plain `git status` in that repository runs the program."""
    ws, marker = _lfs_repository(tmp_path, EXTENSION)
    subprocess.run(["git", "-C", str(ws), "status"], check=True, capture_output=True)
    assert marker.exists()


def test_handoff_does_not_run_git_when_the_repository_names_an_lfs_program(tmp_path: Path) -> None:
    ws, marker = _lfs_repository(tmp_path, EXTENSION)
    done = run_arnes("handoff", "-w", str(ws))
    assert not marker.exists(), "git-lfs ran the repository's extension program on the host"
    assert "lfs.extension.x.clean" in done.out + done.err


def test_inert_lfs_settings_keep_git_running(tmp_path: Path) -> None:
    """lfs.url and a host's access setting name no program: git still runs on the host."""
    inert = '[lfs]\n\turl = https://h/x.git/info/lfs\n[lfs "https://h/"]\n\taccess = basic\n'
    ws, marker = _lfs_repository(tmp_path, inert)
    repo = repository(ws)
    assert not isinstance(repo, str)
    done = run_git(repo, ["status", "--porcelain"])
    assert done.returncode == 0, done.stderr
    assert repository_code(ws) is None
    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "program"),
    [
        ("lfs.extension.x.clean", True),
        ("lfs.extension.x.smudge", True),
        ("lfs.customtransfer.x.path", True),
        ("lfs.standalonetransferagent", True),
        ("lfs.url", False),
        ("lfs.https://h/x.access", False),
        ("lfs.fetchinclude", False),
    ],
)
def test_lfs_keys_that_name_programs_are_told_apart(tmp_path: Path, key: str, program: bool) -> None:
    assert (lfs_program(["core.bare", key]) == key) is program
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    (tmp_path / ".git").mkdir(exist_ok=True)
    header = f'[{section} "{sub}"]' if sub else f"[{section}]"
    (tmp_path / ".git" / "config").write_text(f"{header}\n\t{name} = x\n")
    assert (repository_code(tmp_path) is not None) is program
    assert all(k.startswith("lfs.") for k in LFS_INERT)


def test_git_status_in_such_a_repository_is_not_a_read_only_command(tmp_path: Path) -> None:
    ws, _ = _lfs_repository(tmp_path, '[lfs "customtransfer.x"]\n\tpath = MARKER\n')
    done = run_arnes("permissions", "check", "Bash", "git status", cwd=ws)
    assert "lfs.*.path" in done.out, done.out + done.err
    assert not done.out.startswith("allow"), done.out
