"""git judged by what it would show (docs/shell.md, "git"), in a real repository that tracks a
`.env`: read-only git runs, allow rules work, and no command that would print the hidden file runs
unasked, whatever allows it. The decisions are the engine's, with the built-in secret rules the
CLI loads (tests/test_e2e_git.py runs the real `arnes` on the same kind of repository)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arnes.config import SECRET_DENIES, SECRET_SOURCE
from arnes.permissions.engine import RuleEngine
from arnes.permissions.gitgrep import grep_view
from arnes.permissions.gitoptions import LOG, scan
from arnes.permissions.gitprobe import Unlisted, parse_name_status
from arnes.permissions.gitview import tree_path
from arnes.permissions.rules import RuleKind, SourcedRule
from arnes.permissions.types import Decision, Mode, ToolRequest

# No user or system configuration: the repository is made the same way on every machine.
QUIET = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"]


def git(ws: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([*GIT, *args], cwd=ws, env=env or QUIET, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`.env` committed first; the last commit touches only src/app.py; a.txt changed, unstaged."""
    ws = tmp_path_factory.mktemp("repo")
    git(ws, "init", "-q")
    (ws / ".env").write_text("SECRET=hunter2\n")
    (ws / "a.txt").write_text("a\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("x = 1\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    (ws / "src" / "app.py").write_text("x = 2\n")
    git(ws, "commit", "-qam", "app")
    (ws / "a.txt").write_text("a\nb\n")
    return ws


def decide(
    ws: Path, command: str, *rules: tuple[RuleKind, str], mode: Mode = "default", secrets: bool = True
) -> Decision:
    sourced = [SourcedRule("deny", r, SECRET_SOURCE) for r in SECRET_DENIES if secrets]
    sourced += [SourcedRule(kind, rule, "test") for kind, rule in rules]
    return RuleEngine(ws, mode, sourced).decide(ToolRequest("Bash", {}, (), False, command))


READ_ONLY = [
    "git status", "git log --oneline", "git log --stat", "git diff", "git diff --cached", "git diff HEAD~1",
    "git diff -- a.txt", "git diff --stat HEAD~1 HEAD", "git show", "git show --stat HEAD~1", "git show -s HEAD~1",
    "git log -p -1", "git log -p -- src", "git log -p -- . ':!.env'", "git log -p --follow -- src/app.py",
    "git grep -n x -- src", "git blame a.txt", "git branch", "git branch -a", "git cat-file -p HEAD",
    "git cat-file -t HEAD:.env", "git show HEAD:a.txt", "git ls-files",
    "git ls-tree -r --name-only HEAD", "git ls-tree HEAD src", "git ls-files -s -- src", "cd src && git diff",
    "git status && git diff | head -5", "git --no-pager diff", "LC_ALL=C git diff",
]  # fmt: skip


@pytest.mark.parametrize("command", READ_ONLY)
def test_git_that_shows_no_hidden_file_runs_unasked(repo: Path, command: str) -> None:
    decision = decide(repo, command)
    assert (decision.kind, decision.reason) == ("allow", "read-only command")


DENIED = {
    "git show HEAD:.env": "rule Read(**/.env)",
    "git show :.env": "rule Read(**/.env)",
    "cd src && git show HEAD:./../.env": "rule Read(**/.env)",
    "git cat-file -p HEAD:.env": "rule Read(**/.env)",
    "git cat-file blob HEAD~1:.env": "rule Read(**/.env)",
    "git diff -- .env": "rule Read(**/.env)",
    "git log -p -- .env": "rule Read(**/.env)",
    "git blame .env": "rule Read(**/.env)",
    "git config --file .env --list": "rule Read(**/.env)",
    "git config -f.env --list": "rule Read(**/.env)",
    "git config --blob=HEAD:.env --list": "rule Read(**/.env)",
    "git log -p": "git log would show .env (rule Read(**/.env)); name the paths to show, or leave it out with",
    "git log -p --all -- .": "git log would show .env",
    "git log -S hunter2 --oneline": "git log would show .env",  # a search of contents is an oracle
    "git show HEAD~1": "git show would show .env",
    "git grep hunter2": "git grep would show .env",
    "git grep -l SECRET": "git grep would show .env",
    "echo $(git show HEAD:.env)": "rule Read(**/.env)",
    # A blob id is a hash of the content: a short secret's id is the secret to an offline search.
    "git ls-tree -r HEAD": "git ls-tree would show .env",
    "git ls-files -s": "git ls-files would show .env",
    "git rev-parse HEAD:.env": "rule Read(**/.env)",
    "git hash-object .env": "rule Read(**/.env)",
}


@pytest.mark.parametrize("command", sorted(DENIED))
def test_git_that_would_print_a_hidden_file_is_denied(repo: Path, command: str) -> None:
    decision = decide(repo, command)
    assert decision.kind == "deny" and decision.reason.startswith(DENIED[command]), decision


def test_a_change_to_the_hidden_file_makes_the_plain_diff_deny(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "copy"
    git(tmp_path, "clone", "-q", str(repo), str(ws))
    assert decide(ws, "git diff").kind == "allow"
    (ws / ".env").write_text("SECRET=hunter3\n")
    assert decide(ws, "git diff").reason.startswith("git diff would show .env (rule Read(**/.env))")
    assert decide(ws, "git diff -- a.txt").kind == "allow"
    git(ws, "stash", "-q")
    assert decide(ws, "git diff").kind == "allow"
    assert decide(ws, "git stash show -p").reason.startswith("git stash show would show .env")
    assert decide(ws, "git stash show").kind == "deny"  # stash.showPatch may make it a diff
    assert decide(ws, "git stash show --stat", ("allow", "Bash(git stash:*)")).kind == "allow"


def test_what_cannot_be_told_asks(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:.env")
    asks = [
        f"git cat-file -p {blob}", f"git show {blob}", "git show HEAD^{tree}", "git archive HEAD",
        "git format-patch -1", "git log -p --stdin", "git log -L1,1:a.txt", "git add -p", "git commit -v",
        "git add -A && git diff --cached", "echo x >> .env; git diff", "git diff --find-copies-harder",
        "git diff --submodule=diff", "git grep x HEAD", "git diff --no-index a.txt src/app.py",
        "git log -p --frobnicate", "git log --format x -p", "git -c diff.noprefix=true diff", "GIT_DIR=.git git show",
        "git diff --output=changes.txt -- a.txt",
    ]  # fmt: skip
    for command in asks:
        assert decide(repo, command).kind == "ask", command


def test_a_configuration_that_shows_submodules_files_asks(repo: Path) -> None:
    """`diff.submodule=diff` (the user's, here) makes a diff print the files of submodules, which
    the names-only listing leaves out: what it shows can no longer be told."""
    assert decide(repo, "git diff").kind == "allow"
    (Path(os.environ["HOME"]) / ".gitconfig").write_text("[diff]\n\tsubmodule = diff\n")
    assert "diff.submodule=diff" in decide(repo, "git diff").reason
    assert decide(repo, "git status").kind == "allow"


def test_allow_rules_work_and_do_not_lift_what_is_hidden(repo: Path) -> None:
    assert decide(repo, "git commit -m x", ("allow", "Bash(git commit:*)")).reason == "rule Bash(git commit:*)"
    rules: list[tuple[RuleKind, str]] = [("allow", "Bash(git add:*)"), ("allow", "Bash(git commit:*)")]
    assert decide(repo, "git add a.txt && git commit -m 'x y'", *rules).kind == "allow"
    assert decide(repo, "git switch -c topic", ("allow", "Bash(git switch:*)")).kind == "allow"
    assert decide(repo, "git commit -m x").kind == "ask"  # no rule: it writes
    assert decide(repo, "git show HEAD:.env", ("allow", "Bash(git show:*)")).kind == "deny"
    assert decide(repo, "git commit -F .env", ("allow", "Bash(git commit:*)")).kind == "deny"
    assert decide(repo, "git add --pathspec-from-file=.env", ("allow", "Bash(git add:*)")).kind == "deny"
    outside = decide(repo, "git --git-dir=/elsewhere/.git log", ("allow", "Bash(git:*)"))
    assert (outside.kind, outside.reason) == ("ask", "read outside the workspace: /elsewhere/.git")
    assert decide(repo, "git diff --output=.git/hooks/pre-commit", ("allow", "Bash(git diff:*)")).kind == "deny"


def test_without_read_rules_nothing_is_hidden_and_bypass_keeps_the_denies(repo: Path) -> None:
    assert decide(repo, "git log -p", secrets=False).kind == "allow"
    assert decide(repo, "git show HEAD:.env", secrets=False).kind == "allow"
    assert decide(repo, "git log -p", mode="bypass").kind == "deny"
    assert decide(repo, "git show HEAD:.env", mode="bypass").kind == "deny"


def test_git_that_runs_programs_asks(repo: Path) -> None:
    for command in ["git -c core.pager=cat log", "git -c alias.x='!cat a.txt' x", "git --exec-path=./bin fetch",
                    "GIT_CONFIG_COUNT=1 git status", "git frobnicate"]:  # fmt: skip
        assert decide(repo, command).kind == "ask", command
    deny: tuple[RuleKind, str] = ("deny", "Bash(git fetch:*)")
    assert decide(repo, "git --exec-path=./bin fetch", deny, mode="bypass").kind == "deny"
    # a command git runs from its own arguments is judged as a command, Read rules included
    for command in ["git rebase -x 'cat .env' HEAD~1", "git bisect run cat .env", "git submodule foreach 'cat .env'",
                    "git clone -u 'cat .env' . copy", "git push --receive-pack='cat .env' ."]:  # fmt: skip
        assert decide(repo, command, ("allow", "Bash(git:*)"), mode="bypass").kind == "deny", command
    assert decide(repo, "git clone --template=t . copy", ("allow", "Bash(git:*)")).kind == "ask"


def test_plumbing_that_names_objects_asks(repo: Path) -> None:
    """A hidden file's blob staged under another name and checked out would be readable there."""
    blob = git(repo, "rev-parse", "HEAD:.env")
    for command in [f"git update-index --add --cacheinfo 100644,{blob},notes.txt", "git read-tree HEAD",
                    f"git update-ref refs/heads/x {blob}", "git commit-tree HEAD^{tree}"]:  # fmt: skip
        assert decide(repo, command, ("allow", "Bash(git:*)")).kind == "ask", command


def test_asking_git_runs_none_of_the_repositorys_programs(tmp_path: Path) -> None:
    """A hostile repository's config names a program for every way git could start one while it
    lists what a command shows; a plain git proves each is live, the decisions run none."""
    marker = tmp_path / "ran"
    run = tmp_path / "run.sh"
    run.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null 2>&1\nexit 0\n')
    run.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".gitattributes").write_text("* filter=x diff=x\n")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    signed = git(ws, "cat-file", "commit", "HEAD").replace(
        "\n\n", "\ngpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----\n\n", 1
    )
    sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=ws, env=QUIET, input=signed,
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    git(ws, "update-ref", "refs/heads/main", sha)
    for key in ("core.fsmonitor", "diff.external", "gpg.program", "filter.x.clean", "filter.x.smudge",
                "diff.x.textconv", "core.pager"):  # fmt: skip
        git(ws, "config", key, str(run))
    git(ws, "config", "log.showSignature", "true")
    (ws / "a.txt").write_text("b\n")
    commands = ["git diff", "git diff --cached", "git log -p", "git show", "git grep b", "git log -p -1"]
    for command in commands:
        decide(ws, command)
    assert not marker.exists(), marker.read_text()
    subprocess.run(["git", "log", "-p"], cwd=ws, env=QUIET, capture_output=True, check=False)
    assert marker.exists()  # the same commands in a plain git run the repository's programs


def test_the_names_git_lists_are_read_as_git_writes_them() -> None:
    assert parse_name_status(b"M\0a.txt\0R100\0.env\0b.txt\0\0A\0c\nd\0") == ["a.txt", ".env", "b.txt", "c\nd"]
    assert parse_name_status(b"") == []
    for garbage in (b"SECRET=hunter2\n", b"M\0", b"R100\0a\0", b"M\0a\0tag v1\n"):
        with pytest.raises(Unlisted):
            parse_name_status(garbage)


def test_words_are_read_as_git_reads_them() -> None:
    assert [tree_path(w) for w in ["HEAD:.env", ":.env", ":2:x", "HEAD@{1:2}:y", ":/fix: it", ":!x", "HEAD"]] == [
        ".env", ".env", "x", "y", None, None, None
    ]  # fmt: skip
    scanned = scan(["-p", "--author", "me", "-n", "3", "HEAD", "--", "src"], LOG)
    assert scanned.shows_content and scanned.kept == ["--author", "me", "-n", "3", "HEAD", "--", "src"]
    assert scan(["--format", "x"], LOG).positionals == ["x"]  # as git: --format takes its value only after `=`
    assert scan(["-ps"], LOG).unread  # no bundles in git's diff options
    view = grep_view(["-inC3", "-e", "x", "--cach", "src"])
    assert view.probe is not None and view.probe.args == ["--cached"] and view.probe.verify == ["src"]
    assert grep_view(["--no-ind", "x"]).unread
