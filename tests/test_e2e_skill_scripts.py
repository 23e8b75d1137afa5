"""A skill of the user's runs the scripts it ships (survey 4, K4-01): the anthropics/skills pdf, docx
and webapp-testing skills tell the model to run `python scripts/x.py` from their folder. The sandbox
hides the home folder; the user's own skill folders stay readable (read-only), their secrets hidden."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import scripted_run

needs_bwrap = pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")


def bash(command: str) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command}}


def outputs(trace: Path) -> list[str]:
    return [str(e["output"]) for e in read_trace(trace) if e["event"] == "tool_result"]


@needs_bwrap
def test_a_users_skill_runs_its_own_script_and_its_secrets_stay_hidden(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    claude = home / ".claude" / "skills" / "report"
    (claude / "scripts").mkdir(parents=True)
    (claude / "SKILL.md").write_text("---\ndescription: Build the weekly report\n---\nRun scripts/make_report.py\n")
    (claude / "scripts" / "make_report.py").write_text('print("REPORT-SCRIPT-RAN")\n')
    (claude / ".env").write_text("TOKEN=SKILL-FOLDER-SECRET\n")
    (home / ".claude" / "notes.txt").write_text("NOT-A-SKILL-FILE\n")  # beside the skills: still hidden
    peek = (
        "import os\n"
        "for f in ['~/.claude/skills/report/.env', '~/.claude/notes.txt', '~/.claude/settings.json']:\n"
        "    try:\n        print(open(os.path.expanduser(f)).read())\n"
        "    except OSError as e:\n        print('hidden', e.errno)\n"
    )
    (claude / "scripts" / "peek.py").write_text(peek)
    (home / ".claude" / "settings.json").write_text('{"model": "SETTINGS-TEXT"}')
    ws = tmp_path / "ws"
    ws.mkdir()
    turns: list[dict[str, object]] = [
        {"tool_calls": [{"name": "Skill", "input": {"skill": "report"}}]},
        {"tool_calls": [bash("python3 ~/.claude/skills/report/scripts/make_report.py")]},
        {"tool_calls": [bash("python3 ~/.claude/skills/report/scripts/peek.py")]},
        {"text": "done"},
    ]
    trace, printed = scripted_run(tmp_path, ws, turns, "--permission-mode", "bypassPermissions")
    loaded, ran, peeked = outputs(trace)
    assert "Run scripts/make_report.py" in loaded, printed
    assert "REPORT-SCRIPT-RAN" in ran, printed
    assert "SKILL-FOLDER-SECRET" not in peeked and "NOT-A-SKILL-FILE" not in peeked, peeked
    assert "SETTINGS-TEXT" not in peeked and peeked.count("hidden") == 3, peeked
    assert not (claude / "scripts" / "x").exists()
    trace, _ = scripted_run(tmp_path, ws, [{"tool_calls": [bash("touch ~/.claude/skills/report/scripts/x")]},
                                           {"text": "done"}], "--permission-mode", "bypassPermissions")  # fmt: skip
    assert not (claude / "scripts" / "x").exists()  # read-only
