"""A Claude Code collection copied whole (DESIGN §16, issue 24.8), through the real `arnes`.

Commands in folders are namespaced, front matter strict YAML refuses still loads, a `Task` call is
Delegate's, a skill runs as `/name` and loads by the Skill tool's `skill` key, Claude model names
are left out (with a note) on another provider, and the files that are not used make one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes

REVIEW = """---
description: Review a file. Use when: a change is ready
argument-hint: [file]
allowed-tools: Read, Grep, Task, Skill
model: sonnet
---
Review $ARGUMENTS for bugs (REVIEW-BODY).
"""
SCOUT = """---
name: scout
description: Finds code fast. Examples:
<example>
Context: the user asks where a rate is set
user: "where is the discount?"
assistant: "I'll use the scout agent"
</example>
tools: Read, Grep, Glob
model: opus
color:\tblue
---
You are the scout (SCOUT-BODY).
"""
SKILL = """---
name: tidy
description: Tidy a file: imports first, then the rest
allowed-tools: Read
---
Put imports first (TIDY-BODY) in $ARGUMENTS.
"""

RECORD = "cat >> task-hook.jsonl; echo >> task-hook.jsonl"
TASK_HOOK = {"matcher": "Task", "hooks": [{"type": "command", "command": RECORD}]}  # Claude Code's name


def collection(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {
        ".claude/commands/tools/review.md": REVIEW,
        ".claude/agents/scout.md": SCOUT,
        ".claude/skills/tidy/SKILL.md": SKILL,
        ".claude/agents/broken.md": "---\n{oops\n---\nbody\n",
        ".claude/agents/nameless.md": "---\nname: no spaces allowed\n---\nbody\n",
        ".claude/settings.json": json.dumps({"hooks": {"PreToolUse": [TASK_HOOK]}}),
        "src/a.py": "RATE = 0.1\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def run(tmp_path: Path, ws: Path, turns: list[dict[str, Any]], task: str) -> tuple[Any, list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--trust", task)  # fmt: skip
    return done, read_trace(trace) if trace.exists() else []


def user_texts(events: list[dict[str, Any]], child: bool = False) -> list[str]:
    return [
        "\n".join(b.get("text", "") for b in e["content"])
        for e in events
        if e["event"] == "message" and e["role"] == "user" and ("parent" in e) == child
    ]


def test_a_copied_collection_loads_whole_and_runs(tmp_path: Path) -> None:
    ws = collection(tmp_path)
    turns = [
        {
            "tool_calls": [
                {
                    "name": "Task",
                    "input": {"description": "find the rate", "prompt": "Where is RATE set?", "subagent_type": "scout"},
                }
            ]
        },
        {"tool_calls": [{"name": "Grep", "input": {"pattern": "RATE"}}]},
        {"text": "src/a.py"},
        {"tool_calls": [{"name": "Bash", "input": {"command": "touch made"}}]},
        {"tool_calls": [{"name": "Skill", "input": {"skill": "tidy", "args": "src/a.py"}}]},
        {"text": "reviewed"},
    ]
    done, events = run(tmp_path, ws, turns, "/tools:review src/a.py")
    assert done.code == 0, done.err
    said = done.out + done.err
    assert "Review src/a.py for bugs (REVIEW-BODY)." in user_texts(events)[0]
    assert "model 'sonnet' is a Claude model, which the script provider does not serve" in said
    assert "'Skill' names no arnes tool" not in said  # a fence always lets the Skill tool through
    bash = next(e for e in events if e["event"] == "tool_result" and e["name"] == "Bash")
    assert bash["is_error"] and "the /tools:review command allows only: Read, Grep, Delegate" in bash["output"]
    assert not (ws / "made").exists()
    # `Task` ran as Delegate with the scout definition, whose front matter strict YAML refuses.
    results = {e["name"]: e for e in events if e["event"] == "tool_result" and "parent" not in e}
    assert results["Delegate"]["output"] == "src/a.py" and not results["Delegate"]["is_error"]
    assert "SCOUT-BODY" in user_texts(events, child=True)[0]
    assert "model 'opus' is a Claude model" in said
    hooked = json.loads((ws / "task-hook.jsonl").read_text().splitlines()[0])  # as Claude Code's hooks see it
    assert hooked["tool_name"] == "Task" and hooked["tool_input"]["subagent_type"] == "scout"
    assert hooked["tool_input"]["prompt"] == "Where is RATE set?"
    # The Skill tool's `skill` key and its `args`.
    skill = results["Skill"]
    assert not skill["is_error"] and "(TIDY-BODY) in src/a.py." in skill["output"]  # its $ARGUMENTS filled in
    # Two agent files are not used: one line says so, not one each.
    unused = [line for line in said.splitlines() if "agent definition files not used" in line]
    assert len(unused) == 1 and "2 agent definition files" in unused[0]
    assert "broken.md" not in said and "nameless.md" not in said
    doctor = run_arnes("doctor", "-w", str(ws), "--trust")
    assert "broken.md" in doctor.out and "nameless.md" in doctor.out  # where each is named with why
    assert "/tools:review" in doctor.out


def test_a_skill_runs_as_a_slash_command_and_a_namespaced_one_by_its_last_name(tmp_path: Path) -> None:
    ws = collection(tmp_path)
    write = {"name": "Write", "input": {"file_path": "src/a.py", "content": "x = 1\n"}}
    done, events = run(tmp_path, ws, [{"tool_calls": [write]}, {"text": "tidied"}], "/tidy src/a.py")
    assert done.code == 0, done.err
    first = user_texts(events)[0]
    assert "Put imports first (TIDY-BODY) in src/a.py." in first and "$ARGUMENTS" not in first
    refused = next(e for e in events if e["event"] == "tool_result")  # the skill's allowed-tools fence the prompt
    assert refused["is_error"] and "allows only: Read" in refused["output"]
    assert (ws / "src/a.py").read_text() == "RATE = 0.1\n"
    done, events = run(tmp_path, ws, [{"text": "ok"}], "/review src/b.py")  # unique: /tools:review
    assert done.code == 0, done.err
    assert "Review src/b.py for bugs (REVIEW-BODY)." in user_texts(events)[-1]
    done, _ = run(tmp_path, ws, [{"text": "ok"}], "/nothing here")
    assert done.code == 2 and "custom commands: /tools:review; skills:" in done.err and "/tidy" in done.err


def test_your_own_skill_or_command_is_not_taken_over_by_a_projects_of_the_same_name(tmp_path: Path) -> None:
    """A cloned repository's `.claude/commands/tidy.md` must not run instead of your own `tidy`
    skill (nor its looser fence); the name clash is said."""
    ws = collection(tmp_path)
    (ws / ".claude" / "skills" / "tidy").rename(tmp_path / "moved")  # the skill is the user's now
    home_skills = Path(os.environ["HOME"]) / ".claude" / "skills"
    home_skills.mkdir(parents=True, exist_ok=True)
    (tmp_path / "moved").rename(home_skills / "tidy")
    project = "---\ndescription: the project's\n---\nPROJECT-TIDY $ARGUMENTS\n"
    (ws / ".claude" / "commands" / "tidy.md").write_text(project)
    done, events = run(tmp_path, ws, [{"text": "ok"}], "/tidy src/a.py")
    assert done.code == 0, done.err
    assert "TIDY-BODY" in user_texts(events)[0] and "PROJECT-TIDY" not in user_texts(events)[0]
    said = done.out + done.err
    assert "/tidy runs " in said and "also named so: " in said and "tidy.md" in said
