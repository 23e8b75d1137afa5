"""A Claude Code or Codex user's own files are read beside ~/.config/arnes/ (DESIGN §16):
~/.claude/settings.json (rules, hooks), ~/.claude/CLAUDE.md, ~/.claude/{commands,agents,skills}/,
~/.codex/AGENTS.md. They are the user's: their grants apply in any folder, a project's
.claude/ files only once it is trusted; deny and ask rules of every file apply."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.config import HOOK_SCRIPTS_SOURCE, SECRET_SOURCE, load_config, user_settings_path
from arnes.extensions.locations import discover
from arnes.host.files import HostFiles
from arnes.permissions.engine import RuleEngine
from arnes.permissions.types import Target, ToolRequest
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

SECRET = "SECRET-KEY-4711"


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])  # a fresh one per test (tests/conftest.py)


def claude_settings(home: Path, data: object) -> Path:
    return write(home / ".claude" / "settings.json", data)


def test_the_users_claude_settings_are_the_users_own(home: Path, tmp_path: Path) -> None:
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
    path = claude_settings(home, {"permissions": {"allow": ["Bash(npm test)", "WebFetch(domain:x.org)"],
                                                  "deny": ["Read(./secrets/**)"], "defaultMode": "acceptEdits"},
                                  "hooks": {"PreToolUse": [hook]}, "model": "opus", "theme": "dark"})  # fmt: skip
    cfg = load_config(tmp_path / "ws", trusted=False)
    mine = [(r.kind, r.rule) for r in cfg.rules if r.source == str(path)]
    assert mine == [("allow", "Bash(npm test)"), ("deny", "Read(secrets/**)")]  # grants apply untrusted
    assert cfg.mode == "acceptEdits" and not cfg.ignored
    assert [(h.source, h.user, h.runs) for h in cfg.hooks] == [(str(path), True, True)]
    assert cfg.warnings == []  # Claude Code's own keys (model, theme) and an allow arnes cannot read: not noise


def test_arnes_own_file_wins_a_value_and_each_conflict_is_one_line(home: Path, tmp_path: Path) -> None:
    claude = claude_settings(home, {"permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(git push:*)"]}})
    arnes = write(user_settings_path(), {"permissions": {"defaultMode": "plan", "deny": ["Bash(git push:*)"]}})
    cfg = load_config(tmp_path / "ws", trusted=False)
    assert cfg.mode == "plan"
    assert cfg.warnings == [
        f"{claude}: permissions.defaultMode 'acceptEdits' not used: {arnes} sets 'plan', and arnes's own file "
        "wins a value both set",
        f"rule Bash(git push:*) is deny in {arnes}, allow in {claude}: the deny applies (deny > ask > allow, "
        "whatever the file)",
    ]


def test_a_broken_claude_file_is_one_line_and_the_rest_loads(home: Path, tmp_path: Path) -> None:
    claude = claude_settings(home, '{"permissions": {"deny": [')
    arnes = write(user_settings_path(), {"permissions": {"deny": ["Read(**/*.sqlite)"]}})
    cfg = load_config(tmp_path / "ws", trusted=False)
    built = (SECRET_SOURCE, HOOK_SCRIPTS_SOURCE)
    assert [(r.rule, r.source) for r in cfg.rules if r.source not in built] == [("Read(**/*.sqlite)", str(arnes))]
    assert cfg.warnings == [f"{claude}: not valid JSON (line 1, column 27: Expecting value); its rules and hooks "
                            "do not apply (the other settings files still do)"]  # fmt: skip
    claude_settings(home, {"permissions": {"deny": ["Bash(rm -rf:*) trailing"], "allow": "Read"}})
    warnings = load_config(tmp_path / "ws", trusted=False).warnings
    assert warnings == [f"{claude}: permissions.allow must be a list of rules; its rules and hooks do not apply "
                        "(the other settings files still do)"]  # fmt: skip


def test_a_deny_arnes_cannot_read_is_named(home: Path, tmp_path: Path) -> None:
    claude = claude_settings(home, {"permissions": {"deny": ["Bash(npm *)x"]}})
    (warning,) = load_config(tmp_path / "ws", trusted=False).warnings
    assert warning.startswith(f"{claude}: permissions.deny rule 'Bash(npm *)x' skipped: ")
    assert warning.endswith("(this deny does not apply in arnes: add an arnes rule for it)")


def test_an_allow_in_the_users_claude_file_lifts_a_built_in_secret_deny(home: Path, tmp_path: Path) -> None:
    claude_settings(home, {"permissions": {"allow": ["Read(**/.env)"]}})
    rules = load_config(tmp_path / "ws", trusted=False).rules
    assert ("deny", "Read(**/.env)") not in [(r.kind, r.rule) for r in rules]
    assert ("deny", "Read(**/.env.*)") in [(r.kind, r.rule) for r in rules]


def test_the_file_tools_never_write_the_users_claude_settings(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = home / ".claude" / "settings.json"
    engine = RuleEngine(ws, "bypass", home=home)
    for path in (target, target.with_name("Settings.JSON")):  # the same file where the disk folds names
        decision = engine.decide(ToolRequest("Write", {}, (Target(path, "write"),), False))
        assert decision.kind == "deny" and "your Claude Code settings" in decision.reason
    other = engine.decide(ToolRequest("Write", {}, (Target(home / ".claude" / "notes.md", "write"),), False))
    assert other.kind == "allow"  # bypass: only the file that grants is kept out


def test_user_extension_folders_of_claude_code_come_after_arnes_own(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write(home / ".config" / "arnes" / "agents" / "reviewer.md", "---\ndescription: arnes's\n---\nA\n")
    write(home / ".claude" / "agents" / "reviewer.md", "---\ndescription: claude's\n---\nB\n")
    write(home / ".claude" / "agents" / "tester.md", "---\ndescription: tests\n---\nC\n")
    write(home / ".claude" / "skills" / "deploy" / "SKILL.md", "---\nname: deploy\ndescription: d\n---\nD\n")
    write(ws / ".claude" / "agents" / "tester.md", "---\ndescription: project's\n---\nE\n")
    found, refused = discover("agents", HostFiles(ws))
    assert [(f.name, f.origin, f.document.body.strip()) for f in found] == [
        ("reviewer", "user", "A"), ("reviewer", "user", "B"), ("tester", "user", "C"), ("tester", "project", "E"),
    ]  # fmt: skip
    assert refused == []
    skills, _ = discover("skills", HostFiles(ws))
    assert [(s.name, s.origin) for s in skills] == [("deploy", "user")]


def _call(name: str, **inp: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": inp}]}


def test_a_run_reads_the_users_claude_files_and_the_imports(home: Path, tmp_path: Path) -> None:
    """The real `arnes` against a real local HTTP server: what the first request carries."""
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"{SECRET}\n")
    write(home / ".claude" / "CLAUDE.md", "Answer in English. @rules.md\n")
    write(home / ".claude" / "rules.md", "USER-RULE: small commits.\n")
    write(home / ".codex" / "AGENTS.md", "CODEX-RULE: run the linter.\n")
    write(home / ".claude" / "commands" / "hello.md", "---\ndescription: greet\n---\nSay hello to $ARGUMENTS.\n")
    claude_settings(home, {"permissions": {"deny": ["Read(private.txt)"]}})
    ws = tmp_path / "ws"
    key = os.path.relpath(home / ".ssh" / "id_rsa", ws)
    write(ws / "CLAUDE.md", f"PROJECT-RULE: see @docs/style.md and @{key} and `@docs/code.md`\n")
    write(ws / "docs" / "style.md", "STYLE-RULE: four spaces.\n")
    write(ws / "docs" / "code.md", "NOT-AN-IMPORT\n")
    write(ws / "CLAUDE.local.md", "LOCAL-RULE: my sandbox is at port 8080.\n")
    write(ws / "private.txt", f"{SECRET}\n")
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([_call("Read", file_path="private.txt"), {"text": "hello"}]) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model",
                        "-w", str(ws), "--trace", str(trace), "-p", "/hello the team",
                        env={"OPENAI_API_KEY": "test", "HOME": str(home)})  # fmt: skip
        sent = json.dumps([body for _, body in server.requests])
        first = json.dumps(next(m for m in server.requests[0][1]["messages"] if m["role"] == "user"))
    assert run.code == 0, run.err
    for said in ("CODEX-RULE", "Answer in English.", "USER-RULE", "PROJECT-RULE", "STYLE-RULE", "LOCAL-RULE",
                 "Say hello to the team."):  # fmt: skip
        assert said in first, said
    assert first.index("CODEX-RULE") < first.index("USER-RULE") < first.index("PROJECT-RULE") < first.index("LOCAL")
    assert SECRET not in sent and "NOT-AN-IMPORT" not in first
    assert f"CLAUDE.md: @{key} not imported: it is outside the workspace" in run.out + run.err
    denied = [(e["decision"], e["reason"]) for e in read_trace(trace) if e["event"] == "permission"]
    assert denied == [("deny", "rule Read(private.txt)")]
    doctor = run_arnes("-w", str(ws), "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "doctor")
    assert ("project instructions: ok: CLAUDE.md, docs/style.md, CLAUDE.local.md; yours: ~/.codex/AGENTS.md, "
            f"~/.claude/CLAUDE.md, ~/.claude/rules.md; CLAUDE.md: @{key} not imported") in doctor.out  # fmt: skip


def test_arnes_permissions_names_each_rules_file_and_the_order(home: Path, tmp_path: Path) -> None:
    claude = claude_settings(home, {"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash(npm test)"]}})
    arnes = write(user_settings_path(), {"permissions": {"ask": ["Edit(**/*.lock)"]}})
    ws = tmp_path / "ws"
    project = write(ws / ".claude" / "settings.json", {"permissions": {"deny": ["Read(dist/**)"]}})
    run = run_arnes("permissions", "-w", str(ws))
    assert run.code == 0, run.err
    rows = [line.split() for line in run.out.splitlines()]
    for kind, rule, source in (("deny", "Bash(git push:*)", claude), ("allow", "Bash(npm test)", claude),
                               ("ask", "Edit(**/*.lock)", arnes), ("deny", "Read(dist/**)", project)):  # fmt: skip
        assert [kind, *rule.split(), str(source)] in rows, (kind, rule)
    assert (f"settings read, a later file wins a value: {claude} (yours, Claude Code's), {arnes} (yours), "
            f"{project} (the project's, Claude Code's)") in run.out  # fmt: skip
    claude_settings(home, "{not json")
    broken = run_arnes("permissions", "-w", str(ws))
    assert broken.code == 0 and "Traceback" not in broken.err + broken.out
    assert f"{claude}: not valid JSON" in broken.out and "Bash(git push:*)" not in broken.out
