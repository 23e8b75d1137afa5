"""Regression tests: each command here was reported as slipping past the rules (review, 2026-11)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Mode, ToolRequest
from tests.conftest import run_arnes


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".env").write_text("SECRET=hunter2\n")
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    return tmp_path / "ws"


def kind(ws: Path, command: str, mode: Mode = "default", sandboxed: bool = False, **rules: list[str]) -> str:
    sourced = [SourcedRule(k, r, "t") for k in ("deny", "ask", "allow") for r in rules.get(k, [])]
    engine = RuleEngine(ws, mode, sourced)
    engine.sandboxed = sandboxed
    return engine.decide(ToolRequest("Bash", {}, (), False, command)).kind


@pytest.mark.parametrize(
    "command",
    [
        "env -S 'touch /tmp/pw'",
        "env --split-string='touch /tmp/pw'",
        "sed -n 1p -e '1e touch X' a.txt",
        "sed -n 1p -e '1w /tmp/out' a.txt",
        "sed -n 1p -i a.txt",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch X' git status",
        "PATH=. ls",
        "LESSOPEN='|touch X' less a.txt",
        "GIT_EXTERNAL_DIFF='touch X' git diff",
        "git grep --open-files-in-pager=touch x",
        "git grep -Otouch x",
        "printf -v 'a[$(touch X)]' x",
        "test -v 'a[$(touch X)]'",
        "sort -S1k --compress-program=sh a.txt",
        "git diff --no-index /etc/passwd a.txt",
        "sudo ls",
    ],
)
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_commands_that_run_code_or_write_are_not_read_only(ws: Path, command: str, mode: Mode) -> None:
    assert kind(ws, command, mode) in ("ask", "deny")


@pytest.mark.parametrize(
    "command",
    [
        "cat < .env",
        "cat .e*",
        "cat {.env,a.txt}",
        "cat $HOME/.bashrc",
        "cat $'.env'",
        "grep -r SECRET .",
        "rg SECRET",
        "date -f .env",
        "wc --files0-from=.env",
        "diff --from-file=/etc/passwd a.txt",
        "git show HEAD:.env",
        "git log -p",
        "grep -f .env a.txt",
    ],
)
def test_reads_of_denied_or_outside_files_do_not_run_unasked(ws: Path, command: str) -> None:
    assert kind(ws, command, deny=["Read(**/.env*)"]) in ("ask", "deny")


def test_recursive_search_is_fine_when_the_sandbox_hides_denied_files(ws: Path) -> None:
    assert kind(ws, "grep -r needle .", sandboxed=True, deny=["Read(**/.env*)"]) == "allow"
    assert kind(ws, "grep -r needle .") == "allow"  # no rule hides anything


@pytest.mark.parametrize(
    "command",
    ["cd .git && printf x > hooks/pre-commit", "cd $HOME && echo probe > probe.txt", "cd .. && cat a.txt"],
)
def test_a_cd_before_paths_asks(ws: Path, command: str) -> None:
    assert kind(ws, command, "acceptEdits") in ("ask", "deny")


def test_paths_after_a_cd_inside_are_judged_from_both_folders(ws: Path) -> None:
    (ws / "sub").mkdir()
    assert kind(ws, "cd sub && cat a.txt") == "allow"
    assert kind(ws, "cd sub && cat a.txt", deny=["Read(a.txt)"]) == "deny"  # if the cd fails


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec rm -rf {} +",
        "setsid rm x",
        "busybox rm x",
        "sudo rm x",
        "flock f rm x",
        "f(){ rm -rf x; }; f",
        "$'rm' -rf x",
        "/usr/bin/env rm x",
        "watch -n 1 rm x",
        "watch 'rm x'",
        "watch -x rm x",
        "su -c 'rm x'",
        "sg users 'rm x'",
        "fakeroot rm x",
        "pkexec rm x",
    ],
)
def test_deny_rules_hold_in_bypass(ws: Path, command: str) -> None:
    assert kind(ws, command, "bypass", deny=["Bash(rm:*)"]) == "deny"


@pytest.mark.parametrize("command", ["git -C . push", "git -c a=b push", "git --git-dir=.git push origin"])
@pytest.mark.parametrize("mode", ["bypass", "acceptEdits"])
def test_git_global_options_do_not_dodge_a_deny(ws: Path, command: str, mode: Mode) -> None:
    assert kind(ws, command, mode, sandboxed=True, deny=["Bash(git push:*)"]) == "deny"


def test_opaque_commands_are_denied_in_bypass_when_deny_rules_exist(ws: Path) -> None:
    assert kind(ws, 'eval "$X"', "bypass", deny=["Bash(rm:*)"]) == "deny"
    assert kind(ws, 'eval "$X"', "bypass") == "allow"  # bypass without deny rules is bypass


def test_edit_deny_rules_cover_files_named_by_commands(ws: Path) -> None:
    (ws / "secrets").mkdir()
    rules = {"deny": ["Edit(secrets/**)"]}
    assert kind(ws, "sed -i s/a/b/ secrets/key", "bypass", **rules) == "deny"
    assert kind(ws, "cp a.txt secrets/key", "acceptEdits", sandboxed=True, **rules) == "deny"
    assert kind(ws, "rm -rf .git", "bypass") == "deny"  # the built-in protection too
    assert kind(ws, "sed -i s/a/b/ a.txt", "bypass", **rules) == "allow"


def test_a_rule_for_the_bare_command_does_not_allow_it_under_sudo(ws: Path) -> None:
    assert kind(ws, "sudo npm test", allow=["Bash(npm test)"]) == "ask"


# -- second review (2026-11) -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sort -mo pwned a.txt",
        "printf -v'a[$(touch X)]' x",
        "[[ 'a[$(touch X)]' -eq 1 ]]",
        "x='a[$(touch X)]'; (( x ))",
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch X'; git status",
        "PATH=.:$PATH; ls",
        "echo '-exec touch X ;' | xargs find .",
        "echo '-o F a.txt' | xargs sort",
        "echo $((1 + 2))",
    ],
)
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_evaluating_and_argument_hiding_commands_are_not_read_only(ws: Path, command: str, mode: Mode) -> None:
    assert kind(ws, command, mode) in ("ask", "deny")


@pytest.mark.parametrize(
    "command",
    ["cat /e*/passwd", "cat < /e*/passwd", "cat {/etc/passwd,a.txt}", "cat /h*/*/.ssh/id_rsa", "head -1 /e*/hostname"],
)
def test_globs_and_braces_cannot_reach_outside(ws: Path, command: str) -> None:
    assert kind(ws, command) == "ask"


def test_globs_inside_the_workspace_still_run(ws: Path) -> None:
    (ws / "src").mkdir()
    assert kind(ws, "cat src/*.py") == "allow"


@pytest.mark.parametrize(
    "command",
    ["grep -rn SECRET .", "grep -d recurse SECRET .", "grep --directories=recurse SECRET .", "diff -rN sub ."],
)
def test_recursive_reads_ask_while_read_rules_hide_files(ws: Path, command: str) -> None:
    assert kind(ws, command, deny=["Read(**/.env*)"]) == "ask"


@pytest.mark.parametrize("command", ["rm -rf x\n(", "env -vS 'rm x'", "env -iS'rm x'", "/usr/bin/r? x", "{rm,-rf,x}"])
def test_more_deny_dodges_in_bypass(ws: Path, command: str) -> None:
    assert kind(ws, command, "bypass", deny=["Bash(rm:*)"]) == "deny"


@pytest.mark.parametrize("command", ["cp a.txt .g?t/config", "cp a.txt feature?.json", "cp a.txt {.git,x}/config"])
def test_patterns_do_not_dodge_the_built_in_protection(ws: Path, command: str) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("")
    (ws / "features.json").write_text("{}")
    assert kind(ws, command, "bypass") == "deny"


# -- third review (2026-11) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "unset 'GROUPS[$(touch PWN)]'",
        "echo ${x:='$(touch X)'} \"${x@P}\"",
        "sort --outp=.git/hooks/post-commit a.txt",
        "sort --compress-p=./evil.sh -S 1k a.txt",
        "uniq - uniqout",
        "xxd - xxdout",
        "git log --outp=x",
        "date --se=2020-01-01",
        "trap 'touch X' EXIT",
        "read -r x",
    ],
)
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_third_review_commands_are_not_read_only(ws: Path, command: str, mode: Mode) -> None:
    assert kind(ws, command, mode) in ("ask", "deny")


@pytest.mark.parametrize(
    "command",
    ["diff --from=.env a.txt", "wc --files0=.env", "du --files0=.env", "find -files0-from .env", "file -f.env",
     "file --files-from=.env"],
)  # fmt: skip
def test_abbreviated_and_attached_file_options_are_judged(ws: Path, command: str) -> None:
    assert kind(ws, command, deny=["Read(**/.env*)"]) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "unset 'GROUPS[$(rm -f a.txt)]'",
        "trap 'rm -f x' EXIT",
        "mapfile -C 'rm -f x' -c 1 < a.txt",
        "let 'a[$(rm x)]'",
        "printf -v 'a[$(rm x)]' x",
        "hash -p /bin/rm del; del -f x",
        "unshare -r rm x",
        "strace -f rm x",
        "script -c 'rm x'",
        "coproc rm -f x",
    ],
)
def test_third_review_deny_dodges_in_bypass(ws: Path, command: str) -> None:
    assert kind(ws, command, "bypass", deny=["Bash(rm:*)"]) == "deny"


def test_plain_expansions_and_loops_stay_read_only(ws: Path) -> None:
    for command in ("echo ${HOME} $PWD", "for f in *.txt; do echo $f; done", "ls -la | grep a", "cat - < a.txt"):
        assert kind(ws, command) == "allow", command


# -- issue 12: each class end to end, through the real `arnes` command ---------------------------


def _arnes(ws: Path, tmp_path: Path, commands: list[str], *flags: str) -> list[dict[str, Any]]:
    """Run the scripted model's Bash calls through `arnes` with no terminal: (decision, output) each."""
    run_dir = Path(tempfile.mkdtemp(dir=tmp_path))
    script, trace = run_dir / "script.json", run_dir / "trace.jsonl"
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]}
                                            for c in commands]}))  # fmt: skip
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "--sandbox", "off", *flags, "task")  # fmt: skip
    assert run.code == 0, run.err
    events = read_trace(trace)
    decisions = [e for e in events if e["event"] == "permission"]
    outputs = [e["output"] for e in events if e["event"] == "tool_result"]
    assert len(decisions) == len(commands), decisions
    return [{"command": c, "decision": d["decision"], "reason": d["reason"], "output": o}
            for c, d, o in zip(commands, decisions, outputs, strict=True)]  # fmt: skip


def _ran(results: list[dict[str, Any]]) -> list[str]:
    return [r["command"] for r in results if r["decision"] == "allow"]


PARSER_DISAGREEMENTS = [
    "r\\\nm victim",
    '"r\\\nm" victim',
    "bash -c 'r\\\nm victim'",
    "cat <<E'O'F\nx\nEOF\nrm victim\nEOF",
    "cat <<$'EOF'\nx\nEOF\nrm victim\n$'EOF'",
    "cat <<EOF\n`rm victim`\nEOF",
    "exec {fd}>/dev/null rm victim",
    "time { rm victim; }",
    "for x in 'a[$(rm victim)]'; do echo ${!x}; done",
    "for x in 'a[$(rm victim)]'; do (( x )); done",
    "echo hi > /dev/null rm victim; rm >/dev/null victim",
    "bash -xc 'rm victim'",
    "bash -c -- 'rm victim'",
    "echo a\n\\rm victim",
    "cat <<-EOF\n\t$(rm victim)\n\tEOF",
    "sh -c \"$'\\162m' victim\"",
    'sh -c ":\n\\rm victim"',
]


@pytest.mark.parametrize("flags", [("--permission-mode", "bypass", "--deny", "Bash(rm:*)"), ()])
def test_parser_disagreements_neither_dodge_a_deny_nor_pass_as_read_only(
    ws: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    (ws / "victim").write_text("v\n")
    results = _arnes(ws, tmp_path, PARSER_DISAGREEMENTS, *flags)
    assert _ran(results) == [] and (ws / "victim").exists()


def test_git_global_words_after_a_redirection_do_not_dodge_a_deny(ws: Path, tmp_path: Path) -> None:
    results = _arnes(ws, tmp_path, ["git >/dev/null push", "git 2>/dev/null push origin"],
                     "--permission-mode", "bypass", "--deny", "Bash(git push:*)")  # fmt: skip
    assert [r["reason"] for r in results] == ["rule Bash(git push:*)"] * 2


def test_paths_are_judged_where_the_kernel_and_bash_take_them(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "id_rsa").write_text("PRIVATE-KEY-1\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "ext").symlink_to(outside / "folder")
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_x").write_text("PRIVATE-KEY-2\n")
    commands = [
        "cat docs/ext/../id_rsa",
        "cat ~+/../outside/id_rsa",
        "cd && grep -r PRIVATE",
        "cd && cat .ssh/id_x",
        "cd docs/ext && cat ../id_rsa",
        "cd - && cat id_rsa",
        "echo x > docs/ext/../planted",
        "echo x > ~+/../outside/planted",
        f"env -C {outside} cat id_rsa",  # the wrapper's folder, not the workspace, is where cat reads
        "env --chdir ~/.ssh cat id_x",
        f"time -o {outside}/planted cat a.txt",  # GNU time writes its report there
        f"strace -o {outside}/planted cat a.txt",
    ]
    results = _arnes(ws, tmp_path, commands, "--permission-mode", "acceptEdits")
    assert _ran(results) == []
    assert not any("PRIVATE-KEY" in r["output"] for r in results)
    assert not (outside / "planted").exists()


def test_read_only_commands_that_read_anything_or_run_code_ask(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("PRIVATE-KEY-3\n")
    marker = tmp_path / "ran"
    (ws / "x.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (ws / "x.sh").chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "a.txt"], cwd=ws, check=True)
    commands = [
        f"git blame --contents {secret} a.txt",
        f"strings @{secret}",
        "hostname arnes-was-here",
        "rg --hostname-bin=./x.sh --hyperlink-format=default a",
        "rg --pre ./x.sh a",
        "env",
        "printenv",
        "GIT_DIR=.git GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x.sh git status",
        "git -c core.fsmonitor=./x.sh status",
        "GIT_EXTERNAL_DIFF=./x.sh git diff",
    ]
    results = _arnes(ws, tmp_path, commands, "--allow", "Bash(git status)")
    assert _ran(results) == []
    assert not marker.exists() and not any("PRIVATE-KEY" in r["output"] for r in results)


def test_git_asks_where_the_repository_names_a_program(ws: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (ws / "x.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (ws / "x.sh").chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", "./x.sh"], cwd=ws, check=True)
    bare = tmp_path / "bare"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "config", "core.fsmonitor", str(ws / "x.sh")], cwd=bare, check=True)
    results = _arnes(ws, tmp_path, ["git status", "git diff", "git log --oneline"])
    results += _arnes(bare, tmp_path, ["git status", "git log"])
    assert _ran(results) == [] and not marker.exists()


def test_programs_that_run_programs_are_judged_by_what_they_run(ws: Path, tmp_path: Path) -> None:
    (ws / "victim").write_text("v\n")
    (ws / "s.sh").write_text("rm victim\n")
    subprocess.run(["tar", "-cf", "a.tar", "a.txt"], cwd=ws, check=True)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    commands = [
        "git -c alias.x='!rm victim' x",
        "git -c alias.p=push p origin",
        "git rebase -x 'rm victim' HEAD",
        "git rebase --exec='rm victim' HEAD",
        "git bisect run rm victim",
        "git submodule foreach 'rm victim'",
        "git clone -u 'rm victim' . copy",
        "git push --receive-pack='rm victim' .",
        "git --exec-path=. fetch .",
        "sed '1e rm victim' a.txt",
        "sed -n 1p -e 's/a/rm victim/e' a.txt",
        "awk 'BEGIN{system(\"rm victim\")}'",
        'awk \'BEGIN{print "victim" | "xargs rm"}\'',
        "awk 'BEGIN{cmd=\"rm victim\"; system(cmd)}'",
        "tar -xOf a.tar --to-command='rm victim'",
        "tar -cf b.tar --checkpoint=1 --checkpoint-action=exec='rm victim' a.txt",
        "tar -I 'sh s.sh' -cf c.tar a.txt",
        "BASH_ENV=s.sh bash -c true",
        "export BASH_ENV=s.sh; bash -c true",
        "find . -name a.txt -exec rm victim \\;",
        "echo victim | xargs rm",
        "echo victim | xargs -I% sh -c 'rm %'",
        "rg --pre rm a",
    ]
    results = _arnes(ws, tmp_path, commands, "--permission-mode", "bypass",
                     "--deny", "Bash(rm:*)", "--deny", "Bash(git push:*)")  # fmt: skip
    assert _ran(results) == [] and (ws / "victim").exists()
    assert (ws / "a.txt").exists()
