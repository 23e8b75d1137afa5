"""Claude Code's `@path` in the user's message (and `!cmd` at the prompt), with the real `arnes`
(agent/mentions.py): the file goes with the message as Read shows it and counts as read; what a
Read may not show never goes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("RATE = 0.10\n")
    (ws / "my notes.md").write_text("remember the milk\n")
    (ws / ".env").write_text("TOKEN=hunter2-in-dotenv\n")  # a built-in Read deny
    (ws / "private").mkdir()
    (ws / "private" / "keys.txt").write_text("hunter2-in-private\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("hunter2-outside\n")
    os.symlink(outside, ws / "link.txt")
    return ws


def prompt(ws: Path, script: Path, trace: Path | None = None) -> Any:
    """arnes's interactive prompt in a real pseudo-terminal, on the scripted model."""
    import pexpect

    from tests.conftest import ARNES

    argv = ["--provider", "script", "--script", str(script), "-w", str(ws)]
    argv += ["--trace", str(trace)] if trace is not None else []
    env = {**os.environ, "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}
    return pexpect.spawn(ARNES, argv, env=env, encoding="utf-8", timeout=30, dimensions=(40, 160))


def run(tmp_path: Path, ws: Path, turns: list[dict[str, object]], message: str) -> tuple[object, list[dict]]:
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    argv = ["-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace)]
    done = run_arnes(*argv, "--permission-mode", "acceptEdits", "--deny", "Read(private/**)", message)
    return done, read_trace(trace)


def user_text(events: list[dict]) -> str:
    first = next(e for e in events if e["event"] == "message" and e["role"] == "user")
    return "\n".join(b["text"] for b in first["content"] if b["type"] == "text")


def test_a_mentioned_file_goes_with_the_message_and_counts_as_read(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    edit = {"file_path": "src/a.py", "old_string": "RATE = 0.10", "new_string": "RATE = 0.15"}
    done, events = run(
        tmp_path, ws, [{"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "done"}],
        'Raise the rate in @src/a.py, see @"my notes.md". Use the @property decorator; mail me@example.com',
    )  # fmt: skip
    assert done.code == 0, done.err
    said = user_text(events)
    assert "The user attached src/a.py (@src/a.py); as Read shows it:\n     1\tRATE = 0.10" in said
    assert "The user attached my notes.md" in said and "remember the milk" in said
    assert said.count("The user attached") == 2  # @property and the mail address stay text
    assert (ws / "src" / "a.py").read_text() == "RATE = 0.15\n"  # no Read call needed before the Edit
    assert "attached src/a.py (@src/a.py)" in done.out + done.err


def test_what_a_read_may_not_show_is_never_attached(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done, events = run(
        tmp_path, ws, [{"text": "ok"}], "Look at @.env @private/keys.txt @link.txt @../outside.txt @src @/etc/hostname"
    )
    assert done.code == 0, done.err
    said = json.dumps(events)
    assert "hunter2" not in said and "The user attached" not in said


def test_tab_completes_at_names_at_the_prompt_and_the_file_goes_with_the_message(tmp_path: Path) -> None:
    import pexpect

    ws = workspace(tmp_path)
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "seen"}]}))
    child = prompt(ws, script, trace)
    child.expect("arnes>")
    child.send("explain @src/\t")  # the folder's one file
    child.expect("a.py")  # inserted: drawn before Enter is sent
    child.sendline("")
    child.expect("seen")
    child.expect("arnes>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert "The user attached src/a.py (@src/a.py)" in user_text(read_trace(trace))


def test_the_completer_offers_what_a_read_may_show(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from arnes.ui.completion import MentionCompleter

    ws = workspace(tmp_path)
    completer = MentionCompleter(ws, lambda path: "private" in path.parts)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))]

    assert complete("see @") == ["@.env", '@"my notes.md"', "@src/"]  # not private/ (hidden), not the link out
    assert complete("see @src/") == ["@src/a.py"] and complete("see @pri") == [] and complete("see @../") == []
    assert complete("see src") == []


def test_bang_at_the_prompt_runs_the_users_command_and_it_goes_with_the_next_message(tmp_path: Path) -> None:
    """Claude Code's bash mode: `!cmd` runs at once (in the sandbox, no rule asked: the user typed
    it), is a rewind point, and the next message carries it and its output."""
    import pexpect

    ws = workspace(tmp_path)
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "seen"}]}))
    child = prompt(ws, script, trace)
    child.expect("arnes>")
    child.sendline("!echo made > made.txt && echo printed-by-shell")
    child.expect("printed-by-shell")
    child.expect("arnes>")
    child.sendline("what did I do?")
    child.expect("seen")
    child.expect("arnes>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert (ws / "made.txt").read_text() == "made\n"
    events = read_trace(trace)
    said = user_text(events)
    assert "<bash-input>echo made > made.txt && echo printed-by-shell</bash-input>" in said
    assert "printed-by-shell</bash-stdout>" in said and said.endswith("what did I do?")
    assert any(e["event"] == "tool_call" and e.get("by") == "user" for e in events)
    assert any(e["event"] == "turn" and e.get("kind") == "shell" for e in events)  # a point /rewind goes back to


def test_shift_tab_cycles_the_permission_mode_at_the_prompt(tmp_path: Path) -> None:
    """Claude Code's Shift+Tab: default, acceptEdits, plan, default; the write that follows runs in
    the mode it left the session in."""
    import pexpect

    from arnes.ui.repl import next_mode

    assert [next_mode("default"), next_mode("acceptEdits"), next_mode("plan"), next_mode("bypass")] == [
        "acceptEdits", "plan", "default", "default",
    ]  # fmt: skip
    ws = workspace(tmp_path)
    script = tmp_path / "s.json"
    write = {"tool_calls": [{"name": "Write", "input": {"file_path": "new.txt", "content": "x\n"}}]}
    script.write_text(json.dumps({"turns": [write, {"text": "written"}]}))
    child = prompt(ws, script)
    child.expect("arnes>")
    child.send("\x1b[Z")  # Shift+Tab
    child.expect("mode: acceptEdits")
    child.sendline("write it")
    child.expect("written")  # no question: acceptEdits writes in the workspace
    child.expect("arnes>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert (ws / "new.txt").read_text() == "x\n"
