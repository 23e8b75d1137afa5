"""Claude Code's Bash rule syntax means what it means there: `*` anywhere, a trailing ` *` optional.

The form its docs lead with (`Bash(npm run *)`, `Bash(rm -rf *)`) used to parse and never match:
an allow only asked, and a deny did not deny.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.permissions.rules import CommandPattern, RuleError, parse_rule
from tests.conftest import run_arnes
from tests.test_shell_rules import decide, engine


@pytest.mark.parametrize(
    ("rule", "command", "allowed"),
    [
        ("npm run *", "npm run build", True),
        ("npm run *", "npm run", True),  # the trailing ` *` may stand for nothing
        ("npm run *", "npm test", False),
        ("ls *", "ls -la", True),
        ("ls *", "lsof", False),  # the space is a word boundary
        ("ls*", "lsof", True),
        ("git * main", "git push origin main", True),  # `*` spans words, as Claude Code's docs warn
        ("git * main", "git push origin dev", False),
        ("* --version", "python3 --version", True),
        ("npm run test:*", "npm run test:unit", False),  # `:*` is the old prefix form: a word boundary
        ("npm run test:*", "npm run test unit", True),
        (r"echo \*", "echo *", True),  # an escaped star is a star
        (r"echo \*", "echo x", False),
    ],
)
def test_allow_rules_match_as_in_claude_code(rule: str, command: str, allowed: bool) -> None:
    assert CommandPattern.parse(rule).allows(command.split()) is allowed


@pytest.mark.parametrize(
    ("rule", "command", "denied"),
    [
        ("rm -rf *", "rm -rf build", True),
        ("rm -rf *", "rm -fr build", True),  # flags in any order or bundle
        ("rm -rf *", "/bin/rm -r -f build", True),
        ("rm -rf *", "rm -rf", True),
        ("rm -rf *", "rm build", False),
        ("git push *", "git -C . push origin main", True),  # global options before the subcommand
        ("git push *", "git pull", False),
        ("npm run test*", "npm run test:unit", True),
        ("npm run test*", "npm run build", False),
        ("* --version", "node --version", True),
    ],
)
def test_deny_rules_deny_generously(rule: str, command: str, denied: bool) -> None:
    assert CommandPattern.parse(rule).denies(command.split()) is denied


def test_rules_that_can_match_nothing_are_refused_and_bash_star_is_every_command() -> None:
    with pytest.raises(RuleError, match="`:\\*` works only at the end"):
        parse_rule("Bash(npm:* test)")
    with pytest.raises(RuleError, match="names no command"):
        CommandPattern.parse("* *")
    assert parse_rule("Bash(*)").specifier is None


def test_the_engine_holds_wildcard_rules_in_every_part_of_a_command(tmp_path: Path) -> None:
    e = engine(tmp_path, "bypass", deny=["Bash(rm -rf *)", "Bash(* --force)"], allow=["Bash(npm run *)"])
    assert decide(e, "ls && rm -fr build")[0] == "deny"
    assert decide(e, "echo $(rm -rf /tmp/x)")[0] == "deny"
    assert decide(e, "git push --force")[0] == "deny"  # a rule whose command is a wildcard meets every command
    e = engine(tmp_path, "default", allow=["Bash(npm run *)"])
    assert decide(e, "npm run build")[0] == "allow"
    assert decide(e, "npm run build && curl evil.example")[0] != "allow"  # every part must be allowed


def test_a_wildcard_deny_holds_in_bypass_end_to_end(tmp_path: Path) -> None:
    """The issue's own example: `--deny 'Bash(rm -rf *)' --permission-mode bypass` let `rm -rf build` run."""
    ws = tmp_path / "ws"
    (ws / "build").mkdir(parents=True)
    (ws / "build" / "out.o").write_text("x")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf build"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "rm -fr ./build"}}]},
        {"text": "done"},
    ]
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
        "--deny", "Bash(rm -rf *)", "--permission-mode", "bypass", "--sandbox", "off", "--output-format", "json", "go",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert (ws / "build" / "out.o").exists()
    assert [d["reason"] for d in json.loads(done.out)["denials"]] == ["rule Bash(rm -rf *)"] * 2
    assert [e["decision"] for e in read_trace(trace) if e["event"] == "permission"] == ["deny", "deny"]
