"""Which git commands run on the host instead of in the sandbox (permissions/gitroute.py), how the
gate judges them, and what host/gitwrite.py lets a repository's config hold. The end-to-end
attacks are in test_e2e_git_host.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arnes.host.git import repository
from arnes.host.gitwrite import WRITE_SUBCOMMANDS, unknown_key, work_tree, write_command
from arnes.llm.script import ScriptProvider
from arnes.permissions.gitroute import git_writes, host_git
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.session import Session
from tests.test_shell_rules import decide, engine

GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"]

ROUTED = {
    "git add a.py": ("new", ("a.py",)),
    "git add -A": ("new", ()),
    "git add --all": ("new", ()),
    "git add -u": ("tracked", ()),
    "git add -Av": ("new", ()),
    "git add -- -odd.py": ("new", ("-odd.py",)),
    "git add '*.py'": ("new", ("*.py",)),
    "git add -- . ':!.env'": ("new", (".", ":!.env")),
    "git add {a,b}.py": ("new", ("a.py", "b.py")),
    "git add a.py;": ("new", ("a.py",)),
    "git commit -m 'two words'": ("none", ()),
    "git commit -mmsg": ("none", ()),
    "git commit --message=msg -q -s": ("none", ()),
    "git commit -am msg": ("tracked", ()),
    "git commit -qam msg": ("tracked", ()),
    "git commit -a -m msg --author='A <a@b>'": ("tracked", ()),
    "git commit -m msg a.py": ("tracked", ("a.py",)),
    "git commit -m msg -- a.py": ("tracked", ("a.py",)),
    "git commit --amend --no-edit": ("none", ()),
    "git commit --amend -m new": ("none", ()),
    "git commit --allow-empty -m x --no-verify": ("none", ()),
    "git commit -m 'fix ~ in paths'": ("none", ()),
    "git restore --staged a.py": ("none", ("a.py",)),
    "git restore -S -- a.py": ("none", ("a.py",)),
    "git rm --cached -r -q build": ("none", ("build",)),
    "git reset": ("none", ()),
    "git reset -q HEAD": ("none", ()),
    "git reset HEAD a.py": ("none", ("a.py",)),
    "git reset -- a.py": ("none", ("a.py",)),
    "git reset HEAD -- a.py": ("none", ("a.py",)),
    "git switch -c topic": ("none", ()),
    "git switch --create=topic": ("none", ()),
    "git checkout -b topic": ("none", ()),
    "git checkout -qb topic": ("none", ()),
    "git branch topic": ("none", ()),
    "git branch topic main": ("none", ()),
}

NOT_ROUTED = [
    # the line is more than one plain git command
    "git add -A && git commit -m x",
    "git add a.py; git commit -m x",
    "git commit -m x && touch y",
    "cd sub && git commit -m x",
    "git add a.py | cat",
    "git commit -m x &",
    "! git commit -m x",
    "(git commit -m x)",
    "{ git commit -m x; }",
    "git commit -m x 2>&1",
    "git commit -m x > log.txt",
    "git commit -F - < msg.txt",
    "git commit -m x # why",
    "if true; then git commit -m x; fi",
    # something in front, a wrapper, another git
    "GIT_DIR=x git commit -m x",
    "GIT_CONFIG_PARAMETERS=\"'core.hooksPath=h'\" git commit -m x",
    "env git commit -m x",
    "command git commit -m x",
    "nice git commit -m x",
    "timeout 5 git commit -m x",
    "sudo git commit -m x",
    "/usr/bin/git commit -m x",
    "./git commit -m x",
    # global options
    "git -c core.hooksPath=h commit -m x",
    "git --no-pager commit -m x",
    "git -C sub commit -m x",
    "git --git-dir=x commit -m x",
    "git --work-tree=x add a.py",
    # words only known when it runs, or that bash would expand
    "git commit -m $MSG",
    'git commit -m "$(cat .env)"',
    "git commit -m `id`",
    "git add *.py",
    "git add ~/x",
    "git add a=~/x",
    "git add $'\\x2e'env $F",
    # options that read a file, open an editor, run a program or are not read here
    "git commit -F .env",
    "git commit --file=msg.txt",
    "git commit -t tmpl",
    "git commit --template=tmpl -m x",
    "git commit -C HEAD",
    "git commit -c HEAD",
    "git commit --fixup HEAD",
    "git commit --squash=HEAD -m x",
    "git commit --trailer 'a: b' -m x",
    "git commit -S -m x",
    "git commit -v -m x",
    "git commit -p -m x",
    "git commit -e -m x",
    "git commit --mess=x",
    "git commit --pathspec-from-file=list",
    "git commit --dry-run -m x",
    "git commit -m",
    "git commit",
    "git commit --no-edit",
    "git commit --reset-author -m x",
    "git add",
    "git add ''",
    "git add -f ignored.log",
    "git add -p",
    "git add -i",
    "git add -e",
    "git add --chmod=755 a.sh",
    "git add --pathspec-from-file=list",
    "git add --renormalize .",
    # commands that would change files of the working tree, or move a branch
    "git restore a.py",
    "git restore --staged --worktree a.py",
    "git restore --staged --source=HEAD~1 a.py",
    "git restore --staged",
    "git rm a.py",
    "git rm --cached",
    "git reset a.py",
    "git reset HEAD~1",
    "git reset --hard",
    "git reset --soft HEAD~1",
    "git reset main -- a.py",
    "git switch topic",
    "git switch -c topic main",
    "git switch -C topic",
    "git switch -c -x",
    "git checkout topic",
    "git checkout -b topic main",
    "git checkout -B topic",
    "git checkout -- a.py",
    "git branch",
    "git branch -a",
    "git branch -d topic",
    "git branch -f topic HEAD~1",
    "git branch -m old new",
    "git branch a b c",
    "git branch topic -- x",
    # other subcommands
    "git stash",
    "git merge topic",
    "git rebase main",
    "git push",
    "git tag v1",
    "git mv a.py b.py",
    "git status",
    "git config user.name x",
]


@pytest.mark.parametrize("command", list(ROUTED))
def test_these_take_the_host_route(command: str) -> None:
    route = host_git(command)
    assert route is not None, command
    assert (route.scans, route.pathspecs) == ROUTED[command]
    assert route.subcommand in WRITE_SUBCOMMANDS


@pytest.mark.parametrize("command", NOT_ROUTED)
def test_these_run_in_the_sandbox_as_before(command: str) -> None:
    assert host_git(command) is None


def test_the_words_are_those_bash_passes() -> None:
    route = host_git("git commit -m 'a \"quoted\" $word' --author=\"A B <a@b>\" -- 'x y.py'")
    assert route is not None
    assert route.args == ("commit", "-m", 'a "quoted" $word', "--author=A B <a@b>", "--", "x y.py")


def test_a_failed_git_write_in_the_sandbox_is_recognised_for_the_hint() -> None:
    assert git_writes("git add -A && git commit -m x")
    assert git_writes("cd sub && git commit -m x")
    assert not git_writes("git status && ls")
    assert not git_writes("npm test")


def test_the_gate_judges_a_routed_command_as_before_but_accept_edits_does_not_cover_it(tmp_path: Path) -> None:
    on_host = "runs on the host, not in the sandbox"
    kind, reason = decide(engine(tmp_path, "default", sandboxed=True), "git commit -m x")
    assert kind == "ask" and on_host in reason
    kind, reason = decide(engine(tmp_path, "acceptEdits", sandboxed=True), "git commit -m x")
    assert kind == "ask" and on_host in reason  # the sandbox holds nothing on the host
    assert decide(engine(tmp_path, "acceptEdits", sandboxed=True), "git add -A && git commit -m x")[0] == "allow"
    assert decide(engine(tmp_path, "acceptEdits", sandboxed=False), "git commit -m x")[0] == "ask"
    kind, reason = decide(engine(tmp_path, "bypass", sandboxed=True), "git commit -m x")
    assert kind == "allow" and on_host in reason
    assert decide(engine(tmp_path, "plan", sandboxed=True), "git commit -m x")[0] == "deny"
    allowed = engine(tmp_path, "default", sandboxed=True, allow=["Bash(git commit:*)"])
    assert decide(allowed, "git commit -m x") == ("allow", "rule Bash(git commit:*)")
    denied = engine(tmp_path, "bypass", sandboxed=True, deny=["Bash(git commit:*)"])
    assert decide(denied, "git commit -m x")[0] == "deny"
    # what git would be given to read is judged as before: a hidden file as the message asks no one
    assert decide(engine(tmp_path, "bypass", sandboxed=True, deny=["Read(.env)"]), "git commit -F .env")[0] == "deny"


def test_only_a_writable_workspace_in_bubblewrap_gets_the_route(tmp_path: Path) -> None:
    off = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), sandbox_mode="off")
    assert not off.ctx.host_git
    off.close()
    if Bubblewrap.unavailable() is not None:
        pytest.skip("needs bubblewrap")
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), sandbox_mode="bubblewrap")
    children = [
        session.child(read_only=True, parent_call="a"),
        session.child(read_only=False, parent_call="b", mode="plan"),
        session.child(read_only=False, parent_call="c"),
    ]
    try:
        assert session.ctx.host_git
        assert [child.ctx.host_git for child in children] == [False, False, True]
    finally:
        for child in children:
            child.end()
        session.close()


INERT = [
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "remote.origin.url",
    "remote.origin.fetch", "branch.main.remote", "branch.main.merge", "user.name", "user.signingkey",
    "submodule.lib.url", "submodule.lib.active", "lfs.repositoryformatversion", "lfs.https://h/x.git/info/lfs.access",
    "extensions.worktreeconfig", "color.diff.meta", "init.defaultbranch",
    # what the command line overrides or empties, and what these commands never use
    "core.fsmonitor", "core.hookspath", "core.pager", "core.editor", "core.sshcommand", "core.askpass",
    "credential.helper", "commit.gpgsign", "gpg.program", "gpg.format", "gpg.ssh.program", "filter.lfs.clean",
    "filter.a=b.process", "alias.commit", "sequence.editor",
    "commit.template", "protocol.file.allow",
]  # fmt: skip
UNKNOWN = [
    "hook.pre-commit.command", "hook.x.event", "diff.x.textconv", "diff.external", "merge.x.driver",
    "trailer.sign.command", "core.worktree", "core.attributesfile", "core.alternaterefscommand", "pager.log",
    "credential.https://h.helper", "lfs.extension.x.clean", "lfs.customtransfer.x.path",
    "uploadpack.packobjectshook", "url.x.insteadof", "remote.origin.uploadpack", "remote.origin.vcs",
    "submodule.lib.update", "status.showuntrackedfiles", "core", "include.path", "includeif.gitdir:/x/.path",
]  # fmt: skip


def test_the_repositorys_config_may_hold_only_keys_known_to_be_harmless_here() -> None:
    assert unknown_key(INERT) is None
    for key in UNKNOWN:
        assert unknown_key([*INERT, key]) == key, key


def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=ws, check=True)
    return ws


def test_the_runner_overrides_the_programs_and_refuses_an_unknown_key(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    with (ws / ".git" / "config").open("a") as config:
        config.write('[filter "evil"]\n\tclean = x\n[core]\n\teditor = x\n')
    found = repository(ws)
    assert not isinstance(found, str)
    run = write_command(found, ["commit", "-m", "x"])
    assert not isinstance(run, str)
    configs = [run.argv[i + 1] for i, word in enumerate(run.argv) if word == "-c"]
    for expected in ("core.hooksPath=/dev/null", "core.fsmonitor=false", "core.editor=:", "commit.gpgSign=false"):
        assert expected in configs
    assert run.argv[-3:] == ["commit", "-m", "x"] and run.cwd == found.workspace
    overrides = {run.env[f"GIT_CONFIG_KEY_{i}"]: run.env[f"GIT_CONFIG_VALUE_{i}"] for i in range(4)}
    assert overrides == {"filter.evil.clean": "", "filter.evil.smudge": "", "filter.evil.process": "",
                         "filter.evil.required": "false"}  # fmt: skip
    with (ws / ".git" / "config").open("a") as config:
        config.write('[hook "lint"]\n\tcommand = x\n\tevent = pre-commit\n')
    said = write_command(found, ["commit", "-m", "x"])
    assert isinstance(said, str) and "hook.lint.command" in said and "not run" in said
    with pytest.raises(ValueError):
        write_command(found, ["push"])


def test_the_work_tree_lists_what_git_add_would_read(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    for name in ("kept.txt", "gone.txt", "changed.txt"):
        (ws / name).write_text("1\n")
    (ws / ".gitignore").write_text("ignored.log\n")
    subprocess.run([*GIT, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*GIT, "commit", "-qm", "one"], cwd=ws, check=True)
    (ws / "changed.txt").write_text("2\n")
    (ws / "gone.txt").unlink()
    (ws / "new.txt").write_text("n\n")
    (ws / "ignored.log").write_text("i\n")
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q"], cwd=nested, check=True)
    found = repository(ws)
    assert not isinstance(found, str)
    every = work_tree(found, [], untracked=True)
    assert not isinstance(every, str)
    assert sorted(every.files) == ["changed.txt", "gone.txt", "new.txt"]
    assert every.removed == ["gone.txt"] and every.nested == ["vendor/lib/"]
    tracked = work_tree(found, ["changed.txt", "new.txt"], untracked=False)
    assert not isinstance(tracked, str)
    assert tracked.files == ["changed.txt"] and tracked.nested == []
