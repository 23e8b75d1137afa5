"""A hook's `if` (Claude Code's permission-rule filter): the hook runs only for the tool calls the
rule matches, read by the permission engine as a deny rule reads (generously); an `if` that cannot
be read is dropped with a warning and the hook runs on every call its matcher matches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.extensions.hook_if import HookCondition
from tests.test_e2e_hooks import bash, hook, hook_runs, results, run, workspace

GUARD = "echo 'pushes go through CI' >&2; exit 2"


@pytest.mark.parametrize(
    ("rule", "tool", "given", "holds"),
    [
        ("Bash(git push:*)", "Bash", {"command": "git push origin main"}, True),
        ("Bash(git push:*)", "Bash", {"command": "echo hello"}, False),
        ("Bash(git push:*)", "Bash", {"command": "git status"}, False),
        ("Bash(git push:*)", "Bash", {"command": "ls && git push"}, True),  # any part of a compound command
        ("Bash(git push:*)", "Bash", {"command": "FOO=1 git push"}, True),  # assignments peeled off
        ("Bash(git push:*)", "Bash", {"command": "sudo git push"}, True),  # and wrappers
        ("Bash(git push:*)", "Bash", {"command": 'eval "$x"'}, True),  # cannot be read: the hook runs
        ("Bash(git push:*)", "Read", {"file_path": "a"}, False),  # another tool
        ("Bash", "Bash", {"command": "anything"}, True),
        ("Edit(*.ts)", "Write", {"file_path": "a.ts"}, True),  # Edit covers Write, as in the rules
        ("Edit(*.ts)", "Edit", {"file_path": "b.py"}, False),
        ("Edit(**/*.ts)", "Edit", {"file_path": "src/deep/b.ts"}, True),
        ("Edit(*.ts)", "Read", {"file_path": "a.ts"}, False),
        ("Read(src/**)", "Grep", {"pattern": "x", "path": "src"}, True),
        ("Read(src/**)", "Grep", {"pattern": "x"}, True),  # the workspace: src/ is searched too
        ("Read(src/**)", "Grep", {"pattern": "x", "path": "docs"}, False),  # a folder src/ is not in
        ("Read(secrets/**)", "Bash", {"command": "cat src/../secrets/prod.cfg"}, True),  # a file it reads
        ("Read(secrets/**)", "Bash", {"command": "tail -n +1 secrets/x src/y"}, True),
        ("Read(secrets/**)", "Bash", {"command": "ls src && echo ok"}, False),
        ("Edit(secrets/**)", "Bash", {"command": "echo x > secrets/y"}, True),  # a file it writes
        ("mcp__mini", "mcp__mini__echo", {}, True),
        ("mcp__mini", "mcp__other__echo", {}, False),
        ("Task", "Delegate", {"prompt": "x"}, True),  # Claude Code's name for Delegate
    ],
)
def test_an_if_matches_as_the_permission_rules_do(
    tmp_path: Path, rule: str, tool: str, given: dict[str, Any], holds: bool
) -> None:
    assert HookCondition(rule, tmp_path).holds(tool, given) is holds


def test_a_hook_with_an_if_runs_only_for_the_calls_it_matches(tmp_path: Path) -> None:
    guard = hook(GUARD, **{"if": "Bash(git push:*)"})
    unread = hook("echo ran-anyway >> unread.txt", **{"if": "Bash(git push"})  # unbalanced: cannot be read
    start = hook("echo started >> start.txt", **{"if": "Bash"})  # SessionStart has no tool call
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [guard, unread]}], "SessionStart": [{"hooks": [start]}]}
    ws = workspace(tmp_path, hooks, ".claude/settings.json")
    turns = [{"tool_calls": [bash("echo hello")]}, {"tool_calls": [bash("ls && git push origin main")]}, {"text": "ok"}]
    done, events = run(tmp_path, ws, turns, "--trust", "--permission-mode", "bypassPermissions")
    assert done.code == 0, done.err
    (hello_error, hello), (push_error, push) = results(events)
    assert not hello_error and hello.endswith("hello")
    assert push_error and "pushes go through CI" in push
    assert [r["decision"] for r in hook_runs(events, "PreToolUse")].count("block") == 1
    said = done.out + done.err
    assert "settings.json: hooks.PreToolUse[0].hooks[1].if: " in said and "runs on every call its matcher" in said
    assert (ws / "unread.txt").read_text().count("ran-anyway") == 2
    assert "hooks.SessionStart[0].hooks[0].if: " in said and "never runs" in said
    assert not (ws / "start.txt").exists()
    assert "keys arnes does not use" not in said


def test_an_if_in_arnes_settings_must_be_a_rule(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(GUARD, **{"if": "Bash(git push"})]}]})
    done, _ = run(tmp_path, ws, [{"text": "ok"}], "--trust")
    assert done.code == 2 and "hooks.PreToolUse.0.hooks.0.if: " in done.err and "is not a rule" in done.err
    ws = workspace(
        tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(GUARD, **{"if": "Bash(git push:*)"})]}]}
    )
    done, events = run(tmp_path, ws, [{"tool_calls": [bash("git push")]}, {"text": "ok"}], "--trust",
                       "--permission-mode", "bypassPermissions")  # fmt: skip
    assert done.code == 0, done.err
    assert results(events)[0][0] and "pushes go through CI" in results(events)[0][1]
    assert json.dumps(events).count('"hook_event": "PreToolUse"') == 1
