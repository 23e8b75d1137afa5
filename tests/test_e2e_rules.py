"""Claude Code's `.claude/rules/` with the real `arnes` command and a scripted model: a rule without
`paths:` is in the first message; one with `paths:` is not, and arrives once, with the result of the
first Read of a file it names; a rule file linking out of the workspace is refused with one note."""

from __future__ import annotations

import json
from pathlib import Path

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes


def run(tmp_path: Path, ws: Path, turns: list[dict[str, object]]) -> tuple[str, list[str], str]:
    """The first user message's text, every tool result as the model got it, and what was printed."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", "go")  # fmt: skip
    assert done.code == 0, done.err
    events = read_trace(trace)
    first = next(e for e in events if e["event"] == "message" and e["role"] == "user")
    text = "\n".join(block["text"] for block in first["content"] if block["type"] == "text")
    results = [str(e.get("output", "")) for e in events if e["event"] == "tool_result"]
    return text, results, done.out + done.err


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    rules = ws / ".claude" / "rules"
    (rules / "backend").mkdir(parents=True)
    (ws / "src" / "api").mkdir(parents=True)
    (ws / "src" / "api" / "users.ts").write_text("export const users = [];\n")
    (ws / "src" / "api" / "orders.ts").write_text("export const orders = [];\n")
    (ws / "README.md").write_text("hello\n")
    (rules / "general.md").write_text("ALWAYS-RULE: keep functions short.\n")
    api = '---\npaths:\n  - "src/api/**/*.{ts,tsx}"\n---\nAPI-RULE: validate input.\n'
    (rules / "backend" / "api.md").write_text(api)
    (ws / "src" / "api" / "CLAUDE.md").write_text("@../../README.md\nFOLDER-RULE: log every request.\n")
    return ws


def read(path: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "Read", "input": {"file_path": path}}]}


def test_unscoped_rules_start_the_session_and_scoped_ones_come_with_their_files(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    turns = [read("README.md"), read("src/api/users.ts"), read("src/api/orders.ts"), {"text": "done"}]
    first, results, _ = run(tmp_path, ws, turns)
    assert "The project's rule, .claude/rules/general.md" in first and "ALWAYS-RULE" in first
    assert "API-RULE" not in first
    readme, users, orders = results
    assert "API-RULE" not in readme  # no match, no rule
    assert "[The project's rule .claude/rules/backend/api.md applies to src/api/users.ts" in users
    assert "API-RULE: validate input.\n" in users and "export const users" in users
    assert "API-RULE" not in orders  # once per session
    # Claude Code's on-demand CLAUDE.md: a sub-folder's file, with its imports, comes with its first file
    assert "FOLDER-RULE" not in first and "FOLDER-RULE" not in readme and "FOLDER-RULE" not in orders
    assert "[Instructions for the files under src/api/, which src/api/users.ts is one of; follow them:]" in users
    assert "The project's src/api/CLAUDE.md (its own rules; follow them):" in users
    assert "README.md (imported by src/api/CLAUDE.md):\nhello" in users


def test_an_edit_of_a_matching_file_brings_the_rule_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    edit = {"name": "Write", "input": {"file_path": "src/api/new.tsx", "content": "export {};\n"}}
    _, results, _ = run(tmp_path, ws, [{"tool_calls": [edit]}, {"text": "done"}])
    assert "API-RULE" in results[0] and (ws / "src" / "api" / "new.tsx").exists()


def test_a_rule_file_linking_out_is_refused_with_one_note(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (tmp_path / "elsewhere.md").write_text("OUTSIDE-SECRET\n")
    (ws / ".claude" / "rules" / "linked.md").symlink_to(tmp_path / "elsewhere.md")
    (ws / ".claude" / "rules" / "private.md").write_text("---\npaths: src/**\n---\nDENIED-RULE\n")
    (ws / "src" / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")  # a sub-folder's file linking out
    deny = {"permissions": {"deny": ["Read(./.claude/rules/private.md)"]}}  # a restriction: holds untrusted
    (ws / ".claude" / "settings.json").write_text(json.dumps(deny))
    first, results, printed = run(tmp_path, ws, [read("src/api/users.ts"), {"text": "done"}])
    for secret in ("OUTSIDE-SECRET", "DENIED-RULE"):
        assert secret not in first and secret not in results[0]
    assert "API-RULE" in results[0] and "FOLDER-RULE" in results[0]  # the rest still work
    assert printed.count(".claude/rules/linked.md left out of the prompt") == 1, printed
    assert "link out of the workspace" in printed
    assert printed.count(".claude/rules/private.md left out of the prompt") == 1, printed


def test_doctor_lists_the_rules_scoped_or_not(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    doctor = run_arnes("-w", str(ws), "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "doctor")
    assert ("project instructions: ok: .claude/rules/general.md; rules loaded with matching files: "
            ".claude/rules/backend/api.md (src/api/**/*.{ts,tsx})") in doctor.out, doctor.out  # fmt: skip
