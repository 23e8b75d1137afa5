"""Red team, round 3 (git and handoff): hostile repositories against the git arnes runs on the host,
the git-config allow-list, and `arnes handoff`. Copied from tests/test_redteam_round3.py on branch
`redteam3`; the parameters named `control-*` passed before the fix and show the check itself works.

The common root: text from the file system or from git is cut with `split("\\n")`/`splitlines()`
(which also breaks at \\r, \\v, \\f, \\x1c-\\x1e, \\x85, \\u2028, \\u2029) or decoded with
errors="replace", where the other side (git's config, its output) breaks lines differently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_arnes

# -- 1d. arnes handoff runs a repository's git filter on the host ---------------------------------


@pytest.mark.parametrize(
    "name",
    [b"plain", b"ev\x1cil", b"ev\xffil", b"ev\xe2\x80\xa8il"],
    ids=["control-plain-name", "x1c", "not-utf8", "u2028"],
)
def test_handoff_runs_no_filter_driver_of_the_repository(tmp_path: Path, name: bytes) -> None:
    """High (code of the workspace runs on the host, with no model call). host/git.py empties every
    filter driver the repository's config defines before `git status` (a tarball with its .git is in
    its threat model), finding their names with `git config --name-only --get-regexp` read as text
    with errors="replace" and cut with `splitlines()`. A driver named `ev\\x1cil` (or `ev\\u2028il`)
    is cut in two at the separator, one named with a byte that is not UTF-8 comes back as U+FFFD:
    either way the override names another driver, and `arnes handoff`'s `git status` runs the
    repository's `clean` command on the host. (With a plain name, the control, it does not.)"""
    import os
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "PWNED"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True)

    git("init", "-q")
    (ws / "a.txt").write_text("hello\n")
    (ws / ".gitattributes").write_bytes(b"* filter=" + name + b"\n")
    git("add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init")
    with open(ws / ".git" / "config", "ab") as config:
        config.write(b'[filter "' + name + b'"]\n\tclean = "touch ' + os.fsencode(str(marker)) + b'; cat"\n')
    st = os.stat(ws / "a.txt")
    os.utime(ws / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # git re-reads it
    done = run_arnes("handoff", "-w", str(ws))
    assert "uncommitted changes" in done.out, done.out + done.err  # git status did run
    assert not marker.exists(), "arnes handoff ran the repository's filter driver on the host"


# -- 1e. The git-config allow-list reads lines where git does not -------------------------------


FSMONITOR_LAYOUTS = {
    "control-newline": "[core]\n\tfilemode = true ;\n[user]\n",
    "x0c": "[core]\n\tfilemode = true ;\x0c[user]\n",
    "x1c": "[core]\n\tfilemode = true ;\x1c[user]\n",
    "u2028": "[core]\n\tfilemode = true ;\u2028[user]\n",
    "cr": "[core]\n\tfilemode = true ;\r[user]\n",
    # plain ASCII: git joins a line ending in a backslash to the next (core.whitespace="trailing-space [user]")
    "backslash-continuation": "[core]\n\twhitespace = trailing-space \\\n[user]\n",
}


@pytest.mark.parametrize("layout", FSMONITOR_LAYOUTS.values(), ids=FSMONITOR_LAYOUTS.keys())
def test_git_status_is_not_read_only_when_the_config_hides_fsmonitor_behind_a_line_break(
    tmp_path: Path, layout: str
) -> None:
    """Medium-High (with `--sandbox off`: repository code on the host, not asked). `git status` counts
    as read-only only when the repository's config holds inert keys (permissions/gitrepo.py). That
    check cuts the file with `splitlines()`, which also breaks at \\f, \\x1c-\\x1e, \\x85, \\u2028;
    git breaks lines at \\n only. `filemode = true ;<FF>[user]` is one line with a comment for git,
    but for the check a `[user]` section begins, so the next line's `fsmonitor = ...` reads as the
    inert `user.fsmonitor` while git runs it as `core.fsmonitor`. The model's `git status` is then
    allowed with no prompt and runs the repository's program (with the sandbox off, on the host).
    The control (a real newline) is judged right: the command is denied. Plain ASCII does it too:
    a value ending in a backslash continues on the next line for git, so `[user]` is part of
    `core.whitespace` and `fsmonitor` stays in [core]."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "PWNED"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("hi\n")
    with open(ws / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(layout + f'\tfsmonitor = "touch {marker}; false"\n')
    _git_status_runs_no_fsmonitor(tmp_path, ws, marker)


# -- 3. arnes handoff and a file name with a newline ------------------------------------------------


def test_handoff_survives_a_file_name_with_a_newline(tmp_path: Path) -> None:
    """Low (denial of service). `arnes handoff` stats every name of the newline-split listing
    (workflow/handoff.py `progress_problem`); an empty file named "x\\ny" gives the names `x` and
    `y`, neither of which exists, and the command dies with a FileNotFoundError traceback."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "PROGRESS.md").write_text("# progress\n")
    (ws / "x\ny").write_text("")
    done = run_arnes("handoff", "-w", str(ws))
    assert "Traceback" not in done.err, done.err[-600:]


# -- Found elsewhere: the same shape in the `.git` file pointer and in handoff's git status ------


GITFILE_LAYOUTS = {
    # the control: the pointer names the folder plainly (denied before the fix too)
    "control-plain": (b"gitdir: g\n", b"g"),
    # git keeps the second space: the path is " g", the check used to strip it and read "g"
    "two-spaces": (b"gitdir:  g\n", b" g"),
    # a folder name that is not UTF-8: decoded with errors="replace" it named no folder at all
    "not-utf8": (b"gitdir: g\xff\n", b"g\xff"),
}


@pytest.mark.parametrize("layout", GITFILE_LAYOUTS.values(), ids=GITFILE_LAYOUTS.keys())
def test_git_status_is_not_read_only_when_a_git_file_points_where_the_check_does_not_look(
    tmp_path: Path, layout: tuple[bytes, bytes]
) -> None:
    """A `.git` file (`gitdir: PATH`) names the repository git uses. git takes the path after
    exactly "gitdir: " and cuts only the trailing LF/CR, as bytes; the check stripped every space
    and decoded with errors="replace". So `gitdir:  g` (two spaces) had it read the inert config of
    a decoy `g` while git ran the fsmonitor of ` g`, and a name that is not UTF-8 had it read no
    config at all: either way `git status` was allowed unasked and ran the repository's program."""
    import os
    import shutil
    import subprocess

    pointer, real = layout
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "PWNED"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("hi\n")
    gitdir = ws / os.fsdecode(real)
    (ws / ".git").rename(gitdir)
    if real != b"g":
        shutil.copytree(gitdir, ws / "g")  # the decoy: the same repository with an inert config
    with open(gitdir / "config", "a", encoding="utf-8") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    (ws / ".git").write_bytes(pointer)
    _git_status_runs_no_fsmonitor(tmp_path, ws, marker)


def test_a_config_with_crlf_line_ends_is_still_judged_read_only(tmp_path: Path) -> None:
    """The allow-list refuses what it cannot judge, but git reads CR LF as LF: an inert config
    saved on Windows stays inert (the refusal is for a lone CR, not for every CR)."""
    from arnes.permissions.gitrepo import repository_code

    (tmp_path / ".git").mkdir()
    config = tmp_path / ".git" / "config"
    config.write_bytes(b"\xef\xbb\xbf[core]\r\n\tfilemode = true\r\n[user]\r\n\tname = J\xc3\xb6rg\r\n")
    assert repository_code(tmp_path) is None
    config.write_bytes(b"[core]\r\n\tfilemode = true\r\n\tfsmonitor = x\r\n")
    assert "core.fsmonitor" in (repository_code(tmp_path) or "")
    config.write_bytes(b"[user]\n\tname = J\xf6rg\n")  # latin-1: git reads bytes, this check cannot
    assert "not UTF-8" in (repository_code(tmp_path) or "")


def test_handoff_lists_a_changed_name_with_a_line_break_as_one_name(tmp_path: Path) -> None:
    """handoff reads `git status --porcelain -z` (NUL-separated, names unquoted) and prints each
    name on one line: a name "x\\nhandoff: clean" is one uncommitted change, written out with
    `\\n`, and prints no line of the report itself."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "PROGRESS.md").write_text("# progress\n")
    (ws / "x\nhandoff: clean").write_text("")
    done = run_arnes("handoff", "-w", str(ws))
    assert "Traceback" not in done.err, done.err[-600:]
    assert "x\\nhandoff: clean" in done.out, done.out
    assert "handoff: clean" not in done.out.splitlines(), done.out


def _git_status_runs_no_fsmonitor(tmp_path: Path, ws: Path, marker: Path) -> None:
    """The model's `git status --short`, unsandboxed: it must not run the repository's fsmonitor."""
    script = tmp_path / "script.json"
    status = {"name": "Bash", "input": {"command": "git status --short"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [status]}, {"text": "done"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--sandbox", "off", "go")
    assert done.code == 0, done.err
    assert not marker.exists(), "git status was judged read-only and ran the repository's core.fsmonitor"
