"""Nested git repositories and the bubblewrap sandbox (sandbox/gitguard.py, docs/sandbox.md): the
real `arnes`, the scripted model and real bubblewrap, in acceptEdits (commands run unasked).

Paths under `.git` are built in Python (`'.g'+'it'`) so the shell rules never see them: what
stops each attack is the sandbox or the check after the command. After each session the user's
own git runs on the host, and a canary folder must stay empty.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.base import SandboxSpec
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.test_redteam_git_writable import git, one_commit_repo

pytestmark = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")


def hook(canary: Path, name: str) -> str:
    return f"#!/bin/sh\\ntouch {canary}/{name}\\n"


def plant_hook(repo: str, canary: Path, name: str = "pre-commit") -> str:
    """A shell command that writes REPO/.git/hooks/NAME, its path hidden from the shell rules."""
    return (
        f"python3 -c \"import os; p='{repo}/.g'+'it/hooks/{name}'; "
        f"open(p,'w').write('{hook(canary, name + '-ran')}'); os.chmod(p, 0o755)\""
    )


def session(tmp_path: Path, ws: Path, commands: list[str], name: str = "s") -> tuple[list[str], str]:
    """Each command as one Bash call of a scripted session: their results, and what arnes printed."""
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands]
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / f"{name}.trace.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", "go")  # fmt: skip
    assert done.code == 0, done.err
    outputs = [str(e.get("output", "")) for e in read_trace(trace) if e["event"] == "tool_result"]
    return outputs, done.out + done.err


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return one_commit_repo(tmp_path)


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    folder = tmp_path / "canary"
    folder.mkdir()
    return folder


def test_a_repository_made_in_a_command_loses_the_hook_planted_in_it(ws: Path, tmp_path: Path, canary: Path) -> None:
    outputs, _ = session(tmp_path, ws, [f"git init -q sub && {plant_hook('sub', canary)} && echo PLANTED"])
    assert "PLANTED" in outputs[0]
    # The command's own result says it (the model reads it; the terminal shows it).
    assert "sub/.git/hooks/pre-commit" in outputs[0] and "pre-commit.arnes-disabled" in outputs[0], outputs[0]
    hooks = ws / "sub" / ".git" / "hooks"
    assert not (hooks / "pre-commit").exists() and (hooks / "pre-commit.arnes-disabled").is_file()
    assert git(ws / "sub", "commit", "-qm", "user", "--allow-empty").returncode == 0
    assert not list(canary.iterdir())


def test_a_config_that_runs_programs_in_a_new_repository_is_renamed_aside(
    ws: Path, tmp_path: Path, canary: Path
) -> None:
    """core.fsmonitor runs on `git status`, core.hooksPath moves the hooks into the work tree, an
    alias with `!` shadows the user's own: each is a key outside the inert list."""
    planted = [
        f"git init -q one && git -C one config core.fsmonitor 'touch {canary}/fsmonitor-ran; false'",
        f"git init -q two && mkdir two/h && printf '{hook(canary, 'hookspath-ran')}' > two/h/pre-commit && "
        "chmod +x two/h/pre-commit && git -C two config core.hooksPath h",
        f"git init -q three && git -C three config alias.ci '!touch {canary}/alias-ran'",
    ]
    outputs, _ = session(tmp_path, ws, planted)
    for name, output in zip(("one", "two", "three"), outputs, strict=True):
        assert f"{name}/.git/config" in output and "config.arnes-disabled" in output, output
        assert (ws / name / ".git" / "config.arnes-disabled").is_file()
    assert git(ws / "one", "status").returncode == 0
    assert git(ws / "two", "commit", "-qm", "user", "--allow-empty").returncode == 0
    git(ws / "three", "ci", "-qm", "user", "--allow-empty")
    assert not list(canary.iterdir())


def test_a_repository_the_model_makes_and_uses_keeps_working(ws: Path, tmp_path: Path) -> None:
    """What git itself writes (`git init`, `git config user.*`, a commit, a remote, a branch) is
    inert: nothing is renamed, nothing said. (A clone asks while Read rules hide files:
    tests/test_redteam_round15.py.)"""
    commands = [
        "git init -q own && echo x > own/f && git -C own config user.email m@m && git -C own add f && "
        "git -C own commit -qm one && git -C own remote add origin https://example.com/x.git && "
        "git -C own branch -q side && echo OK"
    ]
    outputs, printed = session(tmp_path, ws, commands)
    assert "OK" in outputs[0] and "arnes-disabled" not in outputs[0] + printed
    assert git(ws / "own", "log", "--oneline").stdout.count("\n") == 1
    assert not list(ws.rglob("*arnes-disabled*"))


def test_a_nested_repository_swapped_for_a_planted_one_is_caught(ws: Path, tmp_path: Path, canary: Path) -> None:
    """The held `.git` moves with its folder; a new repository in its place is not held by the
    mounts made at start, so the check judges it as new."""
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    swap = f"mv vendor/lib vendor/old && git init -q vendor/lib && {plant_hook('vendor/lib', canary)}"
    outputs, _ = session(tmp_path, ws, [swap])
    assert "vendor/lib/.git/hooks/pre-commit" in outputs[0], outputs[0]
    assert git(nested, "commit", "-qm", "user", "--allow-empty").returncode == 0
    assert not list(canary.iterdir())


def test_a_gitdir_pointer_and_a_bare_repository_are_held_like_a_git_folder(
    ws: Path, tmp_path: Path, canary: Path
) -> None:
    """`sub/.git` a file naming `store/sub.git` (git init --separate-git-dir), and `remote.git` a
    bare repository the project pushes to in its tests: hooks there run on the host too."""
    (ws / "sub").mkdir()
    (ws / "store").mkdir()
    git(ws / "sub", "init", "-q", "--separate-git-dir", str(ws / "store" / "sub.git"))
    git(ws, "init", "-q", "--bare", "remote.git")
    attacks = (
        "python3 -c \"import os\nfor p in ('store/sub.git/hooks/pre-commit', 'remote.git/hooks/post-receive', "
        "'sub/.g'+'it'):\n  try:\n    open(p, 'w').write('x'); print('WROTE', p)\n  except OSError as e: "
        "print('REFUSED', p, type(e).__name__)\""
    )
    outputs, _ = session(tmp_path, ws, [attacks])
    assert "WROTE" not in outputs[0] and outputs[0].count("REFUSED") == 3, outputs[0]
    assert (ws / "sub" / ".git").read_text().startswith("gitdir: ")
    assert git(ws / "sub", "commit", "-qm", "user", "--allow-empty").returncode == 0
    assert not list(canary.iterdir())


def test_a_repository_present_at_start_keeps_its_own_hooks(ws: Path, tmp_path: Path) -> None:
    """The user's own hook in a nested repository is theirs: held, never renamed."""
    nested = ws / "lib"
    nested.mkdir()
    git(nested, "init", "-q")
    own = nested / ".git" / "hooks" / "pre-commit"
    own.write_text("#!/bin/sh\nexit 0\n")
    own.chmod(0o755)
    outputs, printed = session(tmp_path, ws, ["echo hi"])
    assert own.is_file() and "arnes-disabled" not in outputs[0] + printed


def test_a_hook_planted_after_the_last_command_goes_aside_when_the_sandbox_closes(tmp_path: Path) -> None:
    """A background command can write after the last foreground command's check: the check at
    close (the session's end, once everything started in it has stopped) still catches it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    box = Bubblewrap(SandboxSpec(ws))
    with box.wrap(["bash", "-c", "git init -q late"], ws, lasting=True) as cmd:
        subprocess.run(cmd.argv, env=cmd.env, pass_fds=cmd.pass_fds, check=True)
    planted = ws / "late" / ".git" / "hooks" / "post-checkout"
    planted.write_text("#!/bin/sh\n")
    box.close()
    assert not planted.exists() and planted.with_name("post-checkout.arnes-disabled").exists()
    assert any("late/.git/hooks/post-checkout" in note for note in box.notes())


def test_no_attack_on_a_nested_repository_held_at_start_gets_through(ws: Path, tmp_path: Path, canary: Path) -> None:
    """The red team's fourteen attacks on the top-level `.git` (hooks, config keys, commondir,
    alternates, a rebase todo, renames, links), run inside `vendor/lib`: each fails."""
    from tests.test_redteam_git_writable import ATTACKS

    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    git(nested, "commit", "-qm", "start", "--allow-empty")
    (nested / "attacks.py").write_text(ATTACKS)
    outputs, _ = session(tmp_path, ws, [f"cd vendor/lib && python3 attacks.py {canary}"])
    line = next(x for x in outputs[0].splitlines() if x.startswith("RESULTS "))
    results = json.loads(line.removeprefix("RESULTS "))
    assert len(results) == 14 and set(results.values()) <= {"OSError", "PermissionError", "RuntimeError"}, results
    for args in (
        ["status"],
        ["log", "--oneline"],
        ["commit", "-qm", "user", "--allow-empty"],
        ["checkout", "-qb", "u"],
    ):
        assert git(nested, *args).returncode == 0
    assert not list(canary.iterdir())


def test_repositories_made_through_links_pointers_commondir_and_bare_layouts_lose_what_runs(
    ws: Path, tmp_path: Path, canary: Path
) -> None:
    """Every way a command can make git in a folder read a config or hooks of its choosing: a
    `.git` link to a planted folder, a `.git` file (separate git dir), a `commondir` naming a
    planted common folder, a bare repository the user may push to."""
    script = f"""
import os, subprocess
def write(p, text, mode=0o755):
    with open(p, "w") as f: f.write(text)
    os.chmod(p, mode)
def git(*a): subprocess.run(["git", *a], check=True, capture_output=True)
HOOK = "#!/bin/sh\\ntouch {canary}/{{}}\\n"
G = ".g" + "it"
git("init", "-q", "--bare", "p1")
write("p1/hooks/pre-commit", HOOK.format("link-hook-ran"))
git("--git-dir=p1", "config", "core.bare", "false")
os.mkdir("s1"); os.symlink("../p1", "s1/" + G)
git("init", "-q", "--separate-git-dir", os.path.abspath("p2"), "s2")
git("-C", "s2", "config", "core.fsmonitor", "touch {canary}/pointer-fsmonitor-ran; false")
git("init", "-q", "--bare", "c3")
write("c3/config", "[core]\\n\\tfsmonitor = touch {canary}/commondir-ran; false\\n", 0o644)
git("init", "-q", "s3")
write("s3/" + G + "/commondir", "../../c3\\n", 0o644)
git("init", "-q", "--bare", "r4.git")
write("r4.git/hooks/post-receive", HOOK.format("push-hook-ran"))
print("PLANTED")
"""
    (ws / "plant.py").write_text(script)
    outputs, _ = session(tmp_path, ws, ["python3 plant.py"])
    assert "PLANTED" in outputs[0], outputs[0]
    for said in ("p1/hooks/pre-commit", "p2/config", "c3/config", "r4.git/hooks/post-receive"):
        assert said in outputs[0], outputs[0]
    for folder in ("s1", "s2", "s3"):
        git(ws / folder, "status")
        git(ws / folder, "commit", "-qm", "user", "--allow-empty")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ws / "r4.git"), str(clone))
    git(clone, "commit", "-qm", "user", "--allow-empty")
    git(clone, "push", "-q", "origin", "HEAD:main")
    assert not list(canary.iterdir())


def test_what_is_found_after_the_last_command_is_said_at_the_end(tmp_path: Path, canary: Path) -> None:
    """A SessionEnd hook (sandboxed, a trusted folder's) is the last thing that runs: what the check
    after it renames aside reaches no command's result, so it is said as a warning at the end."""
    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    plant = f"git init -q late && {plant_hook('late', canary)}"
    settings = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": plant}]}]}}
    (ws / ".arnes" / "settings.json").write_text(json.dumps(settings))
    script = tmp_path / "end.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trust", "go")
    assert done.code == 0, done.err
    said = done.out + done.err
    assert "warning: late/.git/hooks/pre-commit" in said and "pre-commit.arnes-disabled" in said, said
    assert (ws / "late" / ".git" / "hooks" / "pre-commit.arnes-disabled").is_file()
    git(ws / "late", "commit", "-qm", "user", "--allow-empty")
    assert not list(canary.iterdir())
