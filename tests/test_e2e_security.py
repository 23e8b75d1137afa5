"""The seed's four security scenarios, and searches that must not leak, through the `arnes` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes


def run_script(
    ws: Path, tmp_path: Path, turns: list[dict[str, Any]], *flags: str
) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
        "--output-format", "json", *flags, "task",
    )  # fmt: skip
    return run.code, json.loads(run.out), read_trace(trace)


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": inp}]}


def settings(ws: Path, data: dict[str, Any]) -> None:
    (ws / ".arnes").mkdir(exist_ok=True)
    (ws / ".arnes" / "settings.json").write_text(json.dumps(data))


SECRET_RULES = {"permissions": {"deny": ["Read(**/.env*)", "Edit(**/.env*)"]}}


def test_deny_wins_even_in_bypass(shop: Path, tmp_path: Path) -> None:
    (shop / ".env").write_text("TOKEN=fake-do-not-use\n")
    settings(shop, SECRET_RULES)
    code, out, trace = run_script(
        shop, tmp_path,
        [call("Read", file_path=".env"), call("Edit", file_path=".env", old_string="fake", new_string="x"),
         call("Write", file_path=".env", content="TOKEN=other\n")],
        "--permission-mode", "bypass",
    )  # fmt: skip
    assert code == 0
    assert (shop / ".env").read_text() == "TOKEN=fake-do-not-use\n"
    assert [d["reason"] for d in out["denials"]] == [
        "rule Read(**/.env*)",
        "rule Edit(**/.env*)",
        "rule Edit(**/.env*)",
    ]
    results = [e["output"] for e in trace if e["event"] == "tool_result"]
    assert results[0] == "Permission denied: rule Read(**/.env*)"


def test_the_config_cannot_widen_itself(shop: Path, tmp_path: Path) -> None:
    settings(shop, SECRET_RULES)
    before = (shop / ".arnes" / "settings.json").read_text()
    widened = json.dumps({"permissions": {"allow": ["Edit(**)"]}})
    code, out, _ = run_script(
        shop, tmp_path,
        [call("Read", file_path=".arnes/settings.json"),
         call("Edit", file_path=".arnes/settings.json", old_string='"deny"', new_string='"allow"'),
         call("Write", file_path=".arnes/settings.local.json", content=widened)],
        "--permission-mode", "bypass",
    )  # fmt: skip
    assert code == 0
    assert (shop / ".arnes" / "settings.json").read_text() == before
    assert not (shop / ".arnes" / "settings.local.json").exists()
    assert [d["source"] for d in out["denials"]] == ["builtin", "builtin"]


def test_no_terminal_turns_ask_into_deny(shop: Path, tmp_path: Path) -> None:
    before = (shop / "pricing.py").read_text()
    code, out, trace = run_script(
        shop,
        tmp_path,
        [
            call("Read", file_path="pricing.py"),
            call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.15"),
        ],
    )
    assert code == 0 and (shop / "pricing.py").read_text() == before
    (denial,) = out["denials"]
    assert denial["source"] == "no-tty" and denial["reason"].endswith("(no terminal to ask)")
    perm = [e for e in trace if e["event"] == "permission"][-1]
    assert (perm["decision"], perm["source"]) == ("deny", "no-tty")


def test_a_link_does_not_dodge_the_perimeter(shop: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text("data-outside\n")
    (shop / "data").symlink_to(outside)
    code, out, trace = run_script(
        shop, tmp_path, [call("Read", file_path="data/note.txt"), call("Write", file_path="data/x.txt", content="x")],
        "--permission-mode", "acceptEdits",
    )  # fmt: skip
    assert code == 0 and not (outside / "x.txt").exists()
    assert all(d["source"] == "no-tty" for d in out["denials"]) and len(out["denials"]) == 2
    assert str(outside / "note.txt") in out["denials"][0]["reason"]
    assert not any("data-outside" in e.get("output", "") for e in trace)


def test_grep_and_glob_never_show_what_a_read_rule_hides(shop: Path, tmp_path: Path) -> None:
    (shop / ".env").write_text("API_KEY=secret-value\n")
    (shop / "secrets").mkdir()
    (shop / "secrets" / "key.pem").write_text("API_KEY=pem-value\n")
    (shop / "config.py").write_text("API_KEY = None\n")
    (shop / "linked.txt").symlink_to(shop / ".env")
    settings(shop, {"permissions": {"deny": ["Read(**/.env*)", "Read(secrets/**)"]}})
    code, _, trace = run_script(
        shop, tmp_path,
        [call("Grep", pattern="API_KEY", output_mode="content"), call("Grep", pattern="API_KEY"),
         call("Grep", pattern="API_KEY", output_mode="count"), call("Glob", pattern="**/*"),
         call("Glob", pattern="*", path="secrets")],
    )  # fmt: skip
    assert code == 0
    outputs = [e["output"] for e in trace if e["event"] == "tool_result"]
    assert "config.py" in outputs[0] and "API_KEY = None" in outputs[0]
    for output in outputs[:4]:
        assert "secret-value" not in output and "pem-value" not in output
        assert ".env" not in output and "key.pem" not in output and "linked.txt" not in output
    assert outputs[4] == "Permission denied: rule Read(secrets/**)"


def test_permissions_lists_rules_with_their_file(shop: Path) -> None:
    settings(shop, SECRET_RULES)
    run = run_arnes("-w", str(shop), "--allow", "Edit(docs/**)", "permissions")
    assert run.code == 0
    lines = run.out.splitlines()
    assert any("deny" in ln and "Read(**/.env*)" in ln and str(shop / ".arnes" / "settings.json") in ln for ln in lines)
    assert any("allow" in ln and "Edit(docs/**)" in ln and "flag" in ln for ln in lines)


def test_permissions_check_explains_without_running(shop: Path) -> None:
    settings(shop, SECRET_RULES)
    run = run_arnes("-w", str(shop), "permissions", "check", "Read", ".env")
    assert run.code == 0 and "deny: rule Read(**/.env*)" in run.out and "settings.json" in run.out
    run = run_arnes("-w", str(shop), "--permission-mode", "acceptEdits", "permissions", "check", "Edit", "pricing.py")
    assert "allow: acceptEdits: write inside the workspace" in run.out
    run = run_arnes("-w", str(shop), "permissions", "check", "Write", ".git/hooks/pre-commit")
    assert "deny" in run.out and "builtin" in run.out
    assert not (shop / ".arnes" / "traces").exists()
    assert run_arnes("-w", str(shop), "permissions", "check", "Fly", "x").code == 2


def test_permissions_check_judges_commands_as_a_run_would(shop: Path) -> None:
    from arnes.sandbox.bubblewrap import Bubblewrap

    run = run_arnes("-w", str(shop), "--permission-mode", "acceptEdits", "permissions", "check", "Bash", "npm install")
    expected = "allow" if Bubblewrap.unavailable() is None else "ask"
    assert run.out.startswith(expected)
    off = run_arnes("-w", str(shop), "--sandbox", "off", "--permission-mode", "acceptEdits", "permissions", "check",
                    "Bash", "npm install")  # fmt: skip
    assert off.out.startswith("ask")


def test_a_refused_write_shows_only_what_a_read_would_show(shop: Path, tmp_path: Path) -> None:
    """The content in an unread-file refusal must not become a way around a Read deny or the perimeter."""
    (shop / ".env").write_text("TOKEN=fake-secret-in-env\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("fake-secret-outside\n")
    (shop / "notes.txt").symlink_to(outside / "notes.txt")
    settings(shop, {"permissions": {"deny": ["Read(**/.env*)"]}})  # reading is denied, writing is not
    turns = [
        call("Edit", file_path=".env", old_string="TOKEN", new_string="X"),
        call("Write", file_path="notes.txt", content="x\n"),
        call("Edit", file_path="pricing.py", old_string="nothing", new_string="x"),
    ]
    code, _, trace = run_script(shop, tmp_path, turns, "--permission-mode", "bypass")
    assert code == 0
    results = [e["output"] for e in trace if e["event"] == "tool_result"]
    assert results[0] == "File has not been read yet. Read .env before modifying it."
    assert results[1].startswith("File has not been read yet.") and "fake-secret" not in results[1]
    assert "DISCOUNT_RATE" in results[2]  # an ordinary file in the workspace is shown
    assert "fake-secret" not in (tmp_path / "t.jsonl").read_text()
    assert (shop / ".env").read_text() == "TOKEN=fake-secret-in-env\n"


def test_accept_edits_does_not_accept_a_new_mcp_server_definition(shop: Path, tmp_path: Path) -> None:
    """Issue 23.6: the Write tool planted .mcp.json (a server the next trusted run starts) without a
    question in acceptEdits. A grant file asks; with nobody to ask, it is not written."""
    servers = json.dumps({"mcpServers": {"x": {"command": "python3", "args": ["-c", "print(1)"]}}})
    code, out, _ = run_script(
        shop, tmp_path,
        [call("Write", file_path=".mcp.json", content=servers), call("Write", file_path="ok.txt", content="x")],
        "--permission-mode", "acceptEdits",
    )  # fmt: skip
    assert code == 0
    assert not (shop / ".mcp.json").exists() and (shop / "ok.txt").exists()
    assert (
        out["denials"][0]["reason"]
        == ".mcp.json is a grant file (it names programs a trusted run starts) (no terminal to ask)"
    )
