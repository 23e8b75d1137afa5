"""Hooks as Claude Code runs them (DESIGN §16, issue 24.6): the real `arnes`, real bash hook scripts.

Exit codes other than 0 and 2 do not block; `tool_response` has Claude Code's shape per tool;
`updatedInput` is what runs, judged again by the gate; `transcript_path` leads to a transcript in
Claude Code's shape.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

from tests.test_e2e_hooks import bash, hook, hook_runs, results, run, workspace

RECORD = '{ cat; echo; } >> "$ARNES_PROJECT_DIR/$0.jsonl"'  # bash -c's $0: the file each event goes to


def recorded(ws: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (ws / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def user_settings(settings: dict[str, Any]) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"  # conftest's isolated home
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


def test_a_hook_that_fails_is_shown_and_does_not_block_unless_hooks_fail_is_closed(tmp_path: Path) -> None:
    """A hook set whose runner is missing (exit 127) must not stop every call, as in Claude Code;
    exit 1 neither. `hooks_fail: "closed"` in the user's settings makes such a failure block."""
    ws = workspace(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [
        hook("no-such-hook-runner check.py"), hook("echo 'lint found 3 problems' >&2; exit 1"),
    ]}]})  # fmt: skip
    done, events = run(tmp_path, ws, [{"tool_calls": [bash("touch ran")]}], "--trust", "--allow", "Bash(touch:*)")
    assert done.code == 0, done.err
    assert (ws / "ran").exists()
    said = done.out + done.err
    assert "PreToolUse hook `no-such-hook-runner check.py` failed: exited with 127" in said
    assert "failed: exited with 1: lint found 3 problems; the call goes on" in said
    assert [r["decision"] for r in hook_runs(events, "PreToolUse")] == ["failed", "failed"]
    (ws / "ran").unlink()
    user_settings({"hooks_fail": "closed"})
    done, events = run(tmp_path, ws, [{"tool_calls": [bash("touch ran")]}], "--trust", "--allow", "Bash(touch:*)")
    assert done.code == 0, done.err
    assert not (ws / "ran").exists()
    assert (
        results(events)[-1][0] and 'the call is blocked (hooks_fail is "closed")' in results(events)[-1][1]
    )  # the same trace


def test_post_tool_use_gets_claude_codes_tool_response_and_transcript(tmp_path: Path) -> None:
    post = hook(RECORD.replace("$0", "post"))
    stop = hook(
        'python3 -c \'import json, sys, shutil; shutil.copy(json.load(sys.stdin)["transcript_path"], "copy.jsonl")\''
    )
    ws = workspace(tmp_path, {"PostToolUse": [{"matcher": "", "hooks": [post]}], "Stop": [{"hooks": [stop]}]})
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    turns = [
        {"tool_calls": [bash("echo out; echo err >&2")]},
        {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt", "offset": 2, "limit": 1}}]},
        {
            "tool_calls": [
                {"name": "Edit", "input": {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}}
            ]
        },
        {"tool_calls": [{"name": "Write", "input": {"file_path": "new.txt", "content": "one\n"}}]},
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.txt"}}]},
        {"tool_calls": [{"name": "Grep", "input": {"pattern": "BETA", "glob": "*.txt", "output_mode": "content"}}]},
        {"text": "all done"},
    ]
    done, _ = run(tmp_path, ws, turns, "--trust", "--permission-mode", "acceptEdits", "--allow", "Bash(echo:*)")
    assert done.code == 0, done.err
    got = {r["tool_name"]: r for r in recorded(ws, "post")}
    root = ws.resolve()
    assert got["Bash"]["tool_response"] == {
        "stdout": "out\n",
        "stderr": "err\n",
        "interrupted": False,
        "isImage": False,
    }
    assert got["Read"]["tool_response"] == {
        "type": "text",
        "file": {"filePath": str(root / "notes.txt"), "content": "beta", "numLines": 1, "startLine": 2,
                 "totalLines": 3},
    }  # fmt: skip
    edit = got["Edit"]["tool_response"]
    assert edit["filePath"] == str(root / "notes.txt") and edit["originalFile"] == "alpha\nbeta\ngamma\n"
    assert (edit["oldString"], edit["newString"], edit["replaceAll"], edit["userModified"]) == (
        "beta",
        "BETA",
        False,
        False,
    )
    assert edit["structuredPatch"] == [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                                        "lines": [" alpha", "-beta", "+BETA", " gamma"]}]  # fmt: skip
    write = got["Write"]["tool_response"]
    assert (write["type"], write["filePath"], write["content"]) == ("create", str(root / "new.txt"), "one\n")
    assert write["originalFile"] is None and write["structuredPatch"][0]["lines"] == ["+one"]
    glob = got["Glob"]["tool_response"]
    assert sorted(glob["filenames"]) == [str(root / "new.txt"), str(root / "notes.txt")]
    assert glob["numFiles"] == 2 and glob["truncated"] is False
    grep = got["Grep"]["tool_response"]
    assert grep["mode"] == "content" and grep["content"] == "notes.txt:2:BETA" and grep["numLines"] == 1
    # The Stop hook read the conversation where transcript_path said, in Claude Code's shape.
    lines = [json.loads(line) for line in (ws / "copy.jsonl").read_text().splitlines()]
    assert [m["type"] for m in lines[:3]] == ["user", "assistant", "user"]
    assert lines[-1]["type"] == "assistant" and lines[-1]["message"]["content"] == [
        {"type": "text", "text": "all done"}
    ]
    use = lines[1]["message"]["content"][0]
    assert use["type"] == "tool_use" and use["name"] == "Bash" and use["input"] == {"command": "echo out; echo err >&2"}
    result = lines[2]["message"]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use["id"]
    assert all(b["parentUuid"] == a["uuid"] for a, b in itertools.pairwise(lines))
    assert {m["sessionId"] for m in lines} == {lines[0]["sessionId"]} and lines[0]["cwd"] == str(root)


REWRITE = """python3 -c '
import json, sys
call = json.load(sys.stdin)
new = {"touch a": {"command": "touch b"}, "touch c": {"command": "rm -rf keep"}, "touch d": {"cmd": "x"}}
command = call["tool_input"].get("command")
if command in new:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                             "updatedInput": new[command]}}))
'"""


def test_updated_input_is_what_runs_and_the_gate_judges_it_again(tmp_path: Path) -> None:
    """A hook that rewrites a call into a denied one does not get it run, its allow notwithstanding."""
    post = hook(RECORD.replace("$0", "post"))
    ws = workspace(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(REWRITE)]}],
                              "PostToolUse": [{"matcher": "Bash", "hooks": [post]}]})  # fmt: skip
    (ws / "keep").mkdir()
    calls = [bash("touch a"), bash("touch c"), bash("touch d")]
    done, events = run(tmp_path, ws, [{"tool_calls": calls}], "--trust", "--sandbox", "off", "--deny", "Bash(rm:*)")
    assert done.code == 0, done.err
    assert (ws / "b").exists() and not (ws / "a").exists()
    assert (ws / "keep").is_dir() and not (ws / "c").exists()
    (ran, ran_out), (denied, denied_out), (bad, bad_out) = results(events)
    assert not ran and 'a PreToolUse hook changed this call\'s input to {"command": "touch b"}' in ran_out
    assert denied and "Permission denied" in denied_out and "rm" in denied_out
    assert bad and "A PreToolUse hook changed this call's input, and the new input is not valid" in bad_out
    perms = [(e["decision"], e["source"]) for e in events if e["event"] == "permission"]
    assert perms == [("allow", "hook"), ("deny", "rule")]
    assert [r["tool_input"] for r in recorded(ws, "post")] == [{"command": "touch b"}]  # what ran, as it ran
    assert "a PreToolUse hook changed the Bash call to Bash" in done.out + done.err


def test_a_task_call_reaches_hooks_in_claude_codes_shape_and_their_rewrite_is_honoured(tmp_path: Path) -> None:
    """A guard hook written for Claude Code matches `Task` and reads `tool_input.prompt`; its
    `updatedInput` is in that shape too (`subagent_type: Explore`: a read-only sub-agent)."""
    guard = hook(
        "python3 -c 'import json, sys; c = json.load(sys.stdin); "
        'sys.exit(2 if c["tool_name"] == "Task" and "deploy" in c["tool_input"]["prompt"] else 0)\''
    )
    rewrite = (
        'i = dict(c["tool_input"], subagent_type="Explore"); o = {"hookEventName": "PreToolUse", "updatedInput": i}'
    )
    explore = hook(f"python3 -c 'import json, sys; c = json.load(sys.stdin); {rewrite}; "
                   "print(json.dumps({\"hookSpecificOutput\": o}))'")  # fmt: skip
    ws = workspace(tmp_path, {"PreToolUse": [{"matcher": "Task", "hooks": [guard, explore]}]})
    task = {"name": "Task", "input": {"prompt": "deploy to prod now", "subagent_type": "general-purpose"}}
    done, events = run(tmp_path, ws, [{"tool_calls": [task]}, {"text": "ok"}], "--trust")
    assert done.code == 0, done.err
    assert results(events)[0][0] and "Blocked by a PreToolUse hook" in results(events)[0][1]
    write = {"name": "Write", "input": {"file_path": "p.txt", "content": "x"}}
    task = {"name": "Task", "input": {"prompt": "write p.txt", "subagent_type": "general-purpose"}}
    turns = [{"tool_calls": [task]}, {"tool_calls": [write]}, {"text": "sub done"}, {"text": "ok"}]
    done, events = run(tmp_path, ws, turns, "--trust", "--permission-mode", "bypass")
    assert done.code == 0, done.err
    assert not (ws / "p.txt").exists()  # the rewritten call made a read-only sub-agent


def test_a_users_hook_kept_in_claude_hooks_runs_and_sees_absolute_file_paths(tmp_path: Path) -> None:
    """Claude Code's habit: the guard script lives in ~/.claude/hooks/ and tests `tool_input.file_path`,
    always absolute there, against the project folder. In the sandbox that hides home, the script's
    folder is readable to it; the model's relative `src/app.py` reaches it absolute, `..` folded."""
    home = Path(os.environ["HOME"])
    scripts = home / ".claude" / "hooks"
    scripts.mkdir(parents=True)
    (scripts / "inside.sh").write_text(
        "#!/bin/bash\n"
        'f=$(python3 -c \'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])\')\n'
        'echo "$f" >> "$CLAUDE_PROJECT_DIR/seen.txt"\n'
        'case "$f" in */secrets/*) echo "secrets are off limits: $f" >&2; exit 2;; esac\n'
        'case "$f" in "$CLAUDE_PROJECT_DIR"/*) exit 0;; esac\n'
        'echo "Refusing to write outside the project: $f" >&2; exit 2\n'
    )
    (scripts / "inside.sh").chmod(0o755)
    (home / ".claude" / "secret.txt").write_text("NOT-FOR-HOOKS\n")
    (scripts / ".env").write_text("SLACK=HOOK-FOLDER-SECRET\n")  # beside the script: hidden all the same
    (home / ".claude" / "bash-command-log.txt").write_text("")  # the hooks guide's logging example names it
    log = hook("cat >> ~/.claude/bash-command-log.txt")  # a file it writes opens nothing (it fails: read-only)
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Write", "hooks": [hook("~/.claude/hooks/inside.sh")]},
                {"matcher": "Bash", "hooks": [log]},
            ]
        },
        "env": {"MY_STAGE": "staging", "DEPLOY_TOKEN": "tok-4711"},  # Claude Code's `env`: set for the session
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"env": {"PATH": "/tmp/evil"}}))  # a project's: no
    writes = [
        {"name": "Write", "input": {"file_path": "src/app.py", "content": "x = 1\n"}},
        {"name": "Write", "input": {"file_path": "src/../../outside.txt", "content": "y\n"}},
        # The file the tool opens, not another: `..` folds on the text (past the link), `~` expands.
        {"name": "Write", "input": {"file_path": "lnk/../secrets/token", "content": "z\n"}},
        {"name": "Write", "input": {"file_path": f"~/{os.path.relpath(ws, home)}/secrets/token", "content": "z\n"}},
    ]
    (ws / "docs" / "deep").mkdir(parents=True)
    (ws / "lnk").symlink_to(ws / "docs" / "deep")
    bash_call = bash("cat ~/.claude/secret.txt; ls ~/.claude/hooks; echo stage=$MY_STAGE token=$DEPLOY_TOKEN; "
                     "grep -rh SECRET ~/.claude/hooks")  # fmt: skip
    done, events = run(
        tmp_path,
        ws,
        [{"tool_calls": writes}, {"tool_calls": [bash_call]}],
        "--allow",
        "Bash",
        "--permission-mode",
        "acceptEdits",
    )
    assert done.code == 0, done.err
    root = os.path.realpath(ws)
    assert (ws / "src" / "app.py").read_text() == "x = 1\n"
    outside = os.path.dirname(root)
    assert (ws / "seen.txt").read_text().splitlines() == [
        f"{root}/src/app.py", f"{outside}/outside.txt", f"{root}/secrets/token", f"{root}/secrets/token"
    ]  # fmt: skip
    got = results(events)
    assert got[1][0] and "Refusing to write outside the project" in got[1][1]
    assert all(r[0] and "secrets are off limits" in r[1] for r in got[2:4]) and not (ws / "secrets").exists()
    listed = got[4][1]
    assert "NOT-FOR-HOOKS" not in listed and "inside.sh" in listed and "HOOK-FOLDER-SECRET" not in listed
    assert "stage=staging token=\n" in listed  # a secret's name stays arnes's
    assert ".claude/settings.json: env ignored: only your user settings set variables" in done.out + done.err


def test_a_hooks_system_message_is_shown_to_the_user_and_not_sent_to_the_model(tmp_path: Path) -> None:
    """Claude Code's common JSON field `systemMessage`: a note for the user (it was dropped)."""
    answer = json.dumps({"systemMessage": "formatter ran on 1 file"})
    ws = workspace(tmp_path, {"PostToolUse": [{"matcher": "Bash", "hooks": [hook(f"echo '{answer}'")]}]})
    done, events = run(tmp_path, ws, [{"tool_calls": [bash("echo hi")]}], "--trust", "--allow", "Bash(echo:*)")
    assert done.code == 0, done.err
    assert "warning: PostToolUse hook: formatter ran on 1 file" in done.out + done.err
    assert "formatter ran" not in json.dumps([e for e in events if e["event"] in ("tool_result", "message")])


def test_a_hook_that_cannot_reach_the_network_in_the_sandbox_fails_and_does_not_block(tmp_path: Path) -> None:
    """A trusted project's `uv run` hook fetches its dependencies; in the sandbox there is no network
    and uv exits 2, which blocked every prompt (survey 2, H2-01). A hook that could not run is a
    failure, said with the cause; a hook's own exit 2 still blocks."""
    uv = "echo 'error: Failed to fetch: `https://pypi.org/simple/python-dotenv/`' >&2; " \
         "echo '  Caused by: dns error: failed to lookup address information' >&2; exit 2"  # fmt: skip
    ws = workspace(tmp_path, {"UserPromptSubmit": [{"hooks": [hook(uv)]}]})
    done, events = run(tmp_path, ws, [{"text": "hi"}], "--trust")
    said = done.out + done.err
    assert done.code == 0, said
    assert "it needed the network, which the sandbox does not give hooks" in said and "uv sync" in said
    assert [e for e in events if e["event"] == "message"]  # the prompt went to the model
    ws2 = workspace(tmp_path / "own", {"UserPromptSubmit": [{"hooks": [hook("echo 'not today' >&2; exit 2")]}]})
    blocked, _ = run(tmp_path / "own", ws2, [{"text": "hi"}], "--trust")
    assert blocked.code == 1 and "blocked the prompt: not today" in blocked.out + blocked.err


def test_a_guards_block_that_quotes_network_words_still_blocks(tmp_path: Path) -> None:
    """The other side of the network rule: the model puts "dns error" in its command, the user's
    guard quotes the command in its block reason. A PreToolUse block stays a block."""
    guard = 'cmd=$(python3 -c "import json,sys; print(json.load(sys.stdin)[\'tool_input\'][\'command\'])"); ' \
            'echo "blocked: $cmd" >&2; exit 2'  # fmt: skip
    ws = workspace(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(guard)]}]})
    done, events = run(tmp_path, ws, [{"tool_calls": [bash("touch ran # dns error")]}], "--trust",
                       "--allow", "Bash(touch:*)")  # fmt: skip
    assert done.code == 0, done.err
    assert not (ws / "ran").exists()
    assert results(events)[0][0] and "blocked: touch ran # dns error" in results(events)[0][1]
