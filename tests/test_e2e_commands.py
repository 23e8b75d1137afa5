"""Custom slash commands end to end: the real `arnes`, a scripted model or a real local HTTP server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pexpect

from arnes.agent.trace import read_trace
from tests.conftest import ARNES, run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test"}


def workspace(tmp_path: Path, commands: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    folder = ws / ".arnes" / "commands"
    folder.mkdir(parents=True)
    for name, text in commands.items():
        (folder / f"{name}.md").write_text(text)
    return ws


def user_commands() -> Path:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "commands"  # conftest's isolated home
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def openai(server: FakeLLMServer, ws: Path, *args: str) -> list[str]:
    return ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model", "-w", str(ws), *args]


def first_user_text(body: dict[str, Any]) -> str:
    return json.dumps(next(m for m in body["messages"] if m["role"] == "user"))


REVIEW = "---\nmodel: project-model\n---\nReview $1 for bugs; the whole request: $ARGUMENTS\n"


def test_print_run_expands_the_command_and_a_projects_model_waits_for_trust(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"review": REVIEW})
    (user_commands() / "explain.md").write_text("---\nmodel: user-model\n---\nExplain the code.\n")
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([{"text": "looks fine"}, {"text": "explained"}]) as server:
        review = run_arnes(*openai(server, ws, "-p", '/review src/a.py "and the tests"'), env=KEYS)
        explain = run_arnes(*openai(server, ws, "--trace", str(trace), "-p", "/explain", "src/a.py"), env=KEYS)
        bodies = [body for _, body in server.requests]
    assert review.code == 0 and explain.code == 0, review.err + explain.err
    said = first_user_text(bodies[0])
    assert 'Review src/a.py for bugs; the whole request: src/a.py \\"and the tests\\"' in said
    assert "$1" not in said and "$ARGUMENTS" not in said
    assert bodies[0]["model"] == "fake-model"  # untrusted folder: the repository may not choose the model
    assert "model 'project-model' ignored until you trust this folder" in review.out
    assert bodies[1]["model"] == "user-model"  # the user's own command may
    assert "Explain the code.\\n\\nARGUMENTS: src/a.py" in first_user_text(bodies[1])  # no $ARGUMENTS: appended
    start = next(e for e in read_trace(trace) if e["event"] == "session_start")
    assert start["model"] == "user-model"
    with FakeLLMServer([{"text": "ok"}]) as server:
        trusted = run_arnes(*openai(server, ws, "--trust", "-p", "/review src/a.py"), env=KEYS)
        assert trusted.code == 0, trusted.err
        assert server.requests[0][1]["model"] == "project-model"


def test_allowed_tools_narrows_and_never_grants(tmp_path: Path) -> None:
    fix = "---\nallowed-tools: Read, Write, Bash(git diff:*)\n---\nFix $1 using $2.\n"
    ws = workspace(tmp_path, {"fix": fix})
    (ws / "secret.txt").write_text("s3cret\n")
    script = tmp_path / "s.json"
    calls = [
        {"name": "Bash", "input": {"command": "cat secret.txt"}},
        {"name": "Bash", "input": {"command": "git diff && rm -f src/a.py"}},
        {"name": "Write", "input": {"file_path": "src/new.py", "content": "x = 1\n"}},
        {"name": "Read", "input": {"file_path": "src/a.py"}},
    ]
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "-p", '/fix src/a.py "the off-by-one"')  # fmt: skip
    assert run.code == 0, run.err
    events = read_trace(trace)
    task = next(e for e in events if e["event"] == "message" and e["role"] == "user")["content"][-1]["text"]
    assert task == "Fix src/a.py using the off-by-one."
    decisions = [(e["name"], e["decision"], e["reason"]) for e in events if e["event"] == "permission"]
    fenced = "the /fix command allows only: Read, Write, Bash(git diff:*)"
    assert decisions[0] == ("Bash", "deny", fenced)
    assert decisions[1] == ("Bash", "deny", fenced)  # every part of a compound command must be covered
    assert decisions[2][:2] == ("Write", "deny") and "no terminal" in decisions[2][2]  # listed, still asked
    assert decisions[3][:2] == ("Read", "allow")
    assert (ws / "src" / "a.py").exists() and not (ws / "src" / "new.py").exists()
    results = " ".join(e["output"] for e in events if e["event"] == "tool_result")
    assert "s3cret" not in results


def test_shell_lines_run_through_the_gate_and_only_your_commands_allowed_tools_grant(
    tmp_path: Path,
) -> None:
    """Claude Code's `` !`cmd` ``: run before the prompt, output in its place; the command's own
    allowed-tools answer an ask for a command of yours, never a repository's (trusted or not)."""
    body = ("---\nallowed-tools: Bash(touch:*), Bash(cat:*)\n---\n"
            "Seen: !`cat src/a.py`\nMade: !`touch made.txt && echo made`\nOff: !`rm -f src/a.py`\nGo.\n")  # fmt: skip
    ws = workspace(tmp_path, {"ctx": body})
    (user_commands() / "mine.md").write_text(body)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))

    def task(name: str, *flags: str, arguments: str = "") -> str:
        trace = tmp_path / f"{name}-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"  # a trace per run
        run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                        *flags, "-p", f"/{name} {arguments}".strip())  # fmt: skip
        assert run.code == 0, run.err
        first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
        return str(first["content"][-1]["text"]) + run.out + run.err

    said = task("ctx")  # the project's command, untrusted: reads run, its grant grants nothing
    assert "Seen: exit code: 0\nprint('a')" in said and "Go." in said
    assert "Made: [not run: " in said and "no terminal" in said and not (ws / "made.txt").exists()
    assert "Off: [not run: " in said and (ws / "src" / "a.py").exists()
    said = task("mine", arguments="from the issue !`touch pwned`")  # yours: its allowed-tools allow touch, never rm
    assert (ws / "made.txt").exists() and "Made: exit code: 0\nmade" in said
    assert not (ws / "pwned").exists() and "from the issue !`touch pwned`" in said  # arguments are text
    assert "Off: [not run: " in said and (ws / "src" / "a.py").exists()
    (ws / "made.txt").unlink()
    task("ctx", "--trust")  # the project's, trusted: trust does not cover its command files
    assert not (ws / "made.txt").exists()
    guard = {"type": "command", "command": "grep -q 'touch made' && { echo 'no touching' >&2; exit 2; }; exit 0"}
    settings = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]}}))
    said = task("mine")  # your guard hook sees the lines too
    assert "Made: [not run: a PreToolUse hook blocked it: no touching]" in said and not (ws / "made.txt").exists()


def test_unknown_command_is_a_usage_error_listing_the_commands(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"review": REVIEW, "help": "shadowed"})
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": []}))
    base = ("--provider", "script", "--script", str(script), "-w", str(ws))
    unknown = run_arnes(*base, "-p", "/reveiw src/a.py")
    assert unknown.code == 2
    assert unknown.err.strip().splitlines() == [
        "arnes: unknown command /reveiw; custom commands: /review; skills: /features-json, /verify"  # skills run so too
    ]
    built_in = run_arnes(*base, "-p", "/help")  # the built-in wins over help.md, and is interactive only
    assert built_in.code == 2 and "interactive prompt" in built_in.err
    path = run_arnes(*base, "-p", "/usr/bin/env is missing")  # a path starts a task, not a command
    assert path.code == 0, path.err
    doctor = run_arnes(*base, "doctor")
    assert "commands: /review (project)" in doctor.out
    assert "shadowed: " in doctor.out and "help.md: /help is a built-in command" in doctor.out


def test_a_commands_model_needs_a_price_under_max_cost(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {})
    (user_commands() / "cheap.md").write_text("---\nmodel: unpriced-model\n---\nDo it.\n")
    settings = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    settings.write_text(json.dumps({"pricing": {"fake-model": {"input": 1.0, "output": 1.0}}}))
    with FakeLLMServer([{"text": "never"}]) as server:
        run = run_arnes(*openai(server, ws, "--max-cost", "0.01", "-p", "/cheap"), env=KEYS)
        assert not server.requests  # nothing ran: its turns would have cost nothing against the limit
    assert run.code == 2 and "--max-cost needs a price for model 'unpriced-model'" in run.err


def test_a_command_file_linked_to_a_host_file_is_never_expanded(tmp_path: Path) -> None:
    """A hostile clone ships `.arnes/commands/leak.md -> ~/notes.md` and `.claude/commands -> ~/x`."""
    ws = workspace(tmp_path, {})
    home = Path(os.environ["HOME"])
    (home / "notes.md").write_text("TOPSECRET-FILE $ARGUMENTS\n")
    (home / "x").mkdir()
    (home / "x" / "steal.md").write_text("TOPSECRET-FOLDER\n")
    (ws / ".arnes" / "commands" / "leak.md").symlink_to(home / "notes.md")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "commands").symlink_to(home / "x")
    with FakeLLMServer([{"text": "never"}]) as server:
        leak = run_arnes(*openai(server, ws, "-p", "/leak now"), env=KEYS)
        steal = run_arnes(*openai(server, ws, "-p", "/steal"), env=KEYS)
        doctor = run_arnes(*openai(server, ws, "doctor"), env=KEYS)
        sent = json.dumps([body for _, body in server.requests])
    assert "TOPSECRET" not in sent
    assert leak.code == 2 and "leak.md is a link" in leak.err and "TOPSECRET" not in leak.err
    assert steal.code == 2 and "unknown command /steal" in steal.err
    assert "refused: .arnes/commands/leak.md is a link" in doctor.out
    assert "refused: .claude/commands is a link" in doctor.out
    assert "TOPSECRET" not in doctor.out


def test_repl_help_completion_and_a_command_turn_that_narrows_only_itself(tmp_path: Path) -> None:
    review = "---\ndescription: Review a file\nargument-hint: '[file]'\nallowed-tools: Read\n---\nReview $1.\n"
    ws = workspace(tmp_path, {"review": review})
    script = tmp_path / "s.json"
    ls = {"tool_calls": [{"name": "Bash", "input": {"command": "ls src"}}]}
    script.write_text(json.dumps({"turns": [ls, {"text": "reviewed"}, ls, {"text": "listed"}]}))
    trace = tmp_path / "t.jsonl"
    child = pexpect.spawn(
        ARNES, ["--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace)],
        env={**os.environ, "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}, encoding="utf-8", timeout=30,
        dimensions=(40, 160),
    )  # fmt: skip
    child.expect("arnes>")
    child.sendline("/help")
    child.expect(r"/review \[file\]\s+Review a file \(project\)")
    child.expect("arnes>")
    child.sendline("/nope")
    child.expect("unknown command /nope; custom commands: /review")
    child.expect("arnes>")
    child.send("/rev\t")  # Tab completes the name
    child.expect("/review")
    child.sendline(" src/a.py")
    child.expect("reviewed")
    child.expect("arnes>")
    child.sendline("list the sources")
    child.expect("listed")
    child.expect("arnes>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    events = read_trace(trace)
    users = [e["content"][-1].get("text") for e in events if e["event"] == "message" and e["role"] == "user"]
    assert "Review src/a.py." in users and "list the sources" in users
    decisions = [(e["decision"], e["reason"]) for e in events if e["event"] == "permission"]
    assert decisions[0] == ("deny", "the /review command allows only: Read")
    assert decisions[1][0] == "allow"  # the next plain turn has the session's tools back


def test_codex_custom_prompts_run_as_prompts_commands(tmp_path: Path) -> None:
    """~/.codex/prompts/NAME.md is Codex's `/prompts:NAME` (it was an unknown command)."""
    ws = workspace(tmp_path, {})
    prompts = Path(os.environ["HOME"]) / ".codex" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "draftpr.md").write_text("---\ndescription: Draft a PR\n---\nDraft a PR for $1; notes: $ARGUMENTS\n")
    with FakeLLMServer([{"text": "drafted"}]) as server:
        done = run_arnes(*openai(server, ws, "-p", "/prompts:draftpr feature-x quickly"), env=KEYS)
        said = first_user_text(server.requests[0][1])
    assert done.code == 0, done.err
    assert "Draft a PR for feature-x; notes: feature-x quickly" in said
