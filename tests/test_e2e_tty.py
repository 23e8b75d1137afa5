"""The approval prompt in a real pseudo-terminal: the diff is shown, and y / n / free text work."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pexpect
import pytest

from arnes.agent.trace import read_trace
from tests.conftest import ARNES

ANSI = r"(?:\x1b\[[0-9;]*m)*"  # bold survives NO_COLOR
EDIT_TURNS = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
    {
        "tool_calls": [
            {"name": "Edit", "input": {"file_path": "pricing.py", "old_string": "0.10", "new_string": "0.15"}}
        ]
    },
    {"text": "finished"},
]


def spawn(shop: Path, tmp_path: Path, colour: bool = False) -> tuple[pexpect.spawn, Path]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": EDIT_TURNS}))
    trace = tmp_path / "t.jsonl"
    child = pexpect.spawn(
        ARNES,
        ["--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(trace), "fix"],
        env={
            **{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
            "COLUMNS": "120",
            "TERM": "xterm-256color",
            **({} if colour else {"NO_COLOR": "1"}),
        },
        encoding="utf-8",
        timeout=30,
    )
    return child, trace


def test_prompt_shows_the_diff_and_y_writes(shop: Path, tmp_path: Path) -> None:
    child, _ = spawn(shop, tmp_path)
    child.expect(rf"\?{ANSI} {ANSI}Edit {ANSI}pricing\.py")
    child.expect(r"-DISCOUNT_RATE = 0\.10")
    child.expect(r"\+DISCOUNT_RATE = 0\.15")
    child.expect(r"\[y\] yes / \[n\] no")
    child.sendline("y")
    child.expect(r"\[end_turn\]")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "DISCOUNT_RATE = 0.15" in (shop / "pricing.py").read_text()


def test_n_leaves_the_file_alone(shop: Path, tmp_path: Path) -> None:
    child, trace = spawn(shop, tmp_path)
    child.expect(r"\[y\] yes / \[n\] no")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert "0.10" in (shop / "pricing.py").read_text()
    result = [e for e in read_trace(trace) if e["event"] == "tool_result"][-1]
    assert result["output"].startswith("The user denied this action.")


def test_free_text_is_a_no_that_reaches_the_model(shop: Path, tmp_path: Path) -> None:
    child, trace = spawn(shop, tmp_path)
    child.expect(r"\[y\] yes / \[n\] no")
    child.sendline("use 0.20 instead")
    child.expect(pexpect.EOF)
    child.close()
    assert "0.10" in (shop / "pricing.py").read_text()
    events = read_trace(trace)
    result = [e for e in events if e["event"] == "tool_result"][-1]
    assert result["output"] == (
        "The user denied this action: use 0.20 instead. "
        "Do not retry it with another tool; ask the user how to proceed if needed."
    )
    perm = [e for e in events if e["event"] == "permission"][-1]
    assert perm["decision"] == "deny" and perm["source"] == "user"


def test_always_adds_a_session_rule_for_reads_outside(shop: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a.py").write_text("A = 1\n")
    (lib / "b.py").write_text("B = 2\n")
    script = tmp_path / "s.json"
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": str(lib / "a.py")}}]},
        {"tool_calls": [{"name": "Read", "input": {"file_path": str(lib / "b.py")}}]},
    ]
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    child = pexpect.spawn(
        ARNES,
        ["--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(trace), "read"],
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        encoding="utf-8",
        timeout=30,
    )
    child.expect(r"read outside the workspace")
    child.expect(r"\[y\] yes / \[a\] always / \[n\] no")
    child.sendline("a")
    child.expect(r"\[end_turn\]")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert child.before.count("[a] always") == 0  # the second read was not asked
    events = read_trace(trace)
    perms = [e for e in events if e["event"] == "permission"]
    assert perms[0]["source"] == "user" and f"Read({lib}/**)" in perms[0]["reason"]
    assert perms[1]["decision"] == "allow" and perms[1]["reason"] == f"rule Read({lib}/**)"
    outputs = [e["output"] for e in events if e["event"] == "tool_result"]
    assert "A = 1" in outputs[0] and "B = 2" in outputs[1]


COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-9][;m]|\x1b\[[0-9;]*38;")  # a foreground colour code


@pytest.mark.parametrize("colour", [True, False])
def test_the_diff_is_coloured_unless_no_color(shop: Path, tmp_path: Path, colour: bool) -> None:
    child, _ = spawn(shop, tmp_path, colour=colour)
    child.expect(r"\[y\] yes / \[n\] no")
    shown = child.before
    child.sendline("n")
    child.expect(pexpect.EOF)
    assert "DISCOUNT_RATE = 0.15" in shown
    assert bool(COLOUR.search(shown)) is colour
