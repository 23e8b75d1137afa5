"""A user coming from Claude Code brings CLAUDE.md and .claude/settings.json; arnes reads both."""

from __future__ import annotations

import json
from pathlib import Path

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes


def script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def first_user_text(trace: Path) -> str:
    event = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    return "\n".join(block["text"] for block in event["content"] if block["type"] == "text")


def test_claude_md_is_read_when_there_is_no_agents_md(shop: Path, tmp_path: Path) -> None:
    (shop / "AGENTS.md").unlink()
    (shop / "CLAUDE.md").write_text("Always run the tests with unittest.\n")
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "ok"}]), "-w", str(shop),
                    "--trace", str(trace), "x")  # fmt: skip
    assert run.code == 0, run.err
    assert "The project's CLAUDE.md" in first_user_text(trace) and "Always run the tests" in first_user_text(trace)
    (shop / "AGENTS.md").write_text("Use pytest.\n")  # AGENTS.md, when both exist, is arnes's own
    second = tmp_path / "t2.jsonl"
    run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "ok"}]), "-w", str(shop),
              "--trace", str(second), "y")  # fmt: skip
    assert "Use pytest." in first_user_text(second) and "Always run the tests" not in first_user_text(second)


def test_a_copied_claude_settings_file_applies_with_unknown_keys_warned(shop: Path, tmp_path: Path) -> None:
    (shop / ".env").write_text("TOKEN=s3cret\n")
    (shop / ".claude").mkdir()
    settings = {
        "permissions": {"deny": ["Read(./.env)", "WebFetch(domain:example.com)"], "allow": ["Edit(/pricing.py)"],
                        "defaultMode": "acceptEdits", "additionalDirectories": ["../x"]},
        "env": {"FOO": "1"},
        "hooks": {},
    }  # fmt: skip
    (shop / ".claude" / "settings.json").write_text(json.dumps(settings))
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": ".env"}}]},
        {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
        {"tool_calls": [{"name": "Edit", "input": {"file_path": "pricing.py", "old_string": "0.10",
                                                   "new_string": "0.15"}}]},
        {"text": "done"},
    ]  # fmt: skip
    trace = tmp_path / "t.jsonl"
    untrusted = run_arnes("--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop),
                          "--trace", str(trace), "x")  # fmt: skip
    assert untrusted.code == 0, untrusted.err
    said = untrusted.err + untrusted.out
    assert "settings.json: env ignored: only your user settings set variables" in said  # trusted or not
    assert "settings.json: permissions.additionalDirectories ignored: only your user settings or --add-dir" in said
    assert "Claude Code keys arnes does not use" not in said and "ignored until you trust this folder: allow" in said
    assert "WebFetch(domain:example.com)' skipped" in untrusted.err + untrusted.out
    decisions = [(e["decision"], e["reason"]) for e in read_trace(trace) if e["event"] == "permission"]
    assert decisions[0] == ("deny", "rule Read(.env)")  # a restriction holds untrusted
    assert "0.10" in (shop / "pricing.py").read_text()  # its allow is a grant: not applied untrusted
    trusted = run_arnes("--trust", "--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop),
                        "--trace", str(trace), "x")  # fmt: skip
    assert trusted.code == 0, trusted.err
    assert "0.15" in (shop / "pricing.py").read_text()


def test_the_file_tools_never_write_claude_settings(shop: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "Write", "input": {"file_path": ".claude/settings.json",
                                                          "content": '{"permissions": {"allow": ["Bash"]}}'}}]},
             {"text": "done"}]  # fmt: skip
    run = run_arnes("--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop),
                    "--permission-mode", "bypass", "x")  # fmt: skip
    assert run.code == 0 and not (shop / ".claude" / "settings.json").exists()
