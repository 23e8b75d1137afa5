"""Rewind end to end (DESIGN §17): the real `arnes`, real bash, a scripted model.

A turn changes files every way a session can (the file tools, `sed -i`, creating, deleting and
renaming, a binary file, a link, a file in an ignored folder); `arnes rewind` takes each back,
refuses over an outside change, can itself be taken back, and a conversation rewind is what
`-c` continues from.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pexpect
import pytest

from tests.conftest import ARNES, run_arnes

SHELL_WORK = (
    "sed -i s/keep/changed/ old.txt && mv old.txt renamed.txt && rm gone.txt && echo new > new.txt "
    "&& echo more >> logs/x.log && printf '\\0\\1\\2' > made.bin && rm data.bin && ln -s app.py link.py "
    "&& chmod +x app.py"
)


def _turns(shell: str = SHELL_WORK) -> list[dict[str, object]]:
    return [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]},
        {
            "tool_calls": [
                {"name": "Edit", "input": {"file_path": "app.py", "old_string": "a = 1", "new_string": "a=2"}}
            ]
        },
        {"tool_calls": [{"name": "Write", "input": {"file_path": "written.py", "content": "w = 1\n"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": shell}}]},
        {"text": "all done"},
    ]


def _workspace(root: Path, git: bool) -> Path:
    ws = root / ("with-git" if git else "no-git")
    (ws / "logs").mkdir(parents=True)
    (ws / "app.py").write_text("a = 1\n")
    (ws / "old.txt").write_text("keep\n")
    (ws / "gone.txt").write_text("to be deleted\n")
    (ws / "data.bin").write_bytes(bytes(range(256)))
    (ws / "logs" / "x.log").write_text("first\n")
    (ws / ".gitignore").write_text("logs/\n")
    if git:
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        subprocess.run(["git", "add", "app.py", "old.txt", ".gitignore"], cwd=ws, check=True)
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=ws, check=True
        )
    return ws


def _state(ws: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in (".arnes",)]
        for name in dirs + files:
            path = Path(folder) / name
            st = path.lstat()
            rel = path.relative_to(ws).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = (stat.S_IMODE(st.st_mode), path.read_bytes())
            else:
                out[rel] = "dir"
    return out


def _run(tmp_path: Path, ws: Path, turns: list[dict[str, object]], *extra: str, task: str = "change things") -> str:
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), "--permission-mode", "bypass",
        "--no-self-check", *extra, task,
    )  # fmt: skip
    assert done.code == 0, done.err
    return done.out + done.err


@pytest.mark.parametrize("git", [False, True], ids=["no-git", "git"])
def test_a_turn_of_every_kind_of_change_is_rewound_and_the_rewind_undone(tmp_path: Path, git: bool) -> None:
    ws = _workspace(tmp_path, git)
    before = _state(ws)
    _run(tmp_path, ws, _turns())
    after = _state(ws)
    assert after != before and (ws / "link.py").is_symlink() and not (ws / "gone.txt").exists()
    listed = run_arnes("-w", str(ws), "rewind", "--list")
    assert listed.code == 0 and "change things" in listed.out and "  1  " in listed.out
    dry = run_arnes("-w", str(ws), "rewind", "1", "--dry-run")
    assert dry.code == 0 and "-a=2" in dry.out and "+a = 1" in dry.out and _state(ws) == after
    done = run_arnes("-w", str(ws), "rewind", "1", "--code-only")
    assert done.code == 0, done.err
    assert _state(ws) == before  # contents, the mode, no link, the ignored log, the deleted and renamed files
    assert "checkpoint 2" in done.out
    again = run_arnes("-w", str(ws), "rewind", "2", "--code-only")  # the rewind taken back
    assert again.code == 0, again.err
    assert _state(ws) == after
    if git:
        status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True, check=True)
        assert "app.py" in status.stdout  # the repository is git's own: only the files changed


def test_an_outside_change_is_refused_headless_unless_forced(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, git=False)
    _run(tmp_path, ws, _turns())
    (ws / "app.py").write_text("a = 2\nmine = True\n")  # the user's editor, after the session
    refused = run_arnes("-w", str(ws), "rewind", "1")
    assert refused.code == 2 and "app.py" in refused.err and "--force" in refused.err
    assert (ws / "app.py").read_text() == "a = 2\nmine = True\n" and (ws / "new.txt").exists()
    forced = run_arnes("-w", str(ws), "rewind", "1", "--force", "--output-format", "json")
    assert forced.code == 0, forced.err
    report = json.loads(forced.out[forced.out.index("{") :])
    assert report["rewound"] is True and "app.py" in report["files"] and report["to"] == 1
    assert (ws / "app.py").read_text() == "a = 1\n"


def test_a_conversation_rewind_is_what_resume_continues(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, git=False)
    _run(tmp_path, ws, [{"text": "first answer"}], task="first task")
    _run(tmp_path, ws, [{"text": "second answer"}], "-c", task="second task")
    listed = run_arnes("-w", str(ws), "rewind", "--list", "--output-format", "json")
    points = json.loads(listed.out)["checkpoints"]
    assert [p["label"] for p in points] == ["first task", "second task"]
    done = run_arnes("-w", str(ws), "rewind", "2", "--conversation-only", "--output-format", "stream-json")
    assert done.code == 0, done.err
    line = json.loads(done.out.strip().splitlines()[-1])
    assert line["type"] == "system" and line["subtype"] == "rewind" and line["what"] == "conversation"
    out = _run(tmp_path, ws, [{"text": "third answer"}], "-c", task="third task")
    assert "(2 messages)" in out  # the first task and its answer; the second is gone
    trace = next((ws / ".arnes" / "traces").glob("*.jsonl"))
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any(e["event"] == "rewind" and e["to"] == 2 for e in events)


def test_rewind_names_what_is_missing_in_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "empty"
    ws.mkdir()
    none = run_arnes("-w", str(ws), "rewind", "--list")
    assert none.code == 2 and none.err.count("\n") == 1 and "no checkpoints" in none.err
    _run(tmp_path, ws, [{"text": "ok"}])
    wrong = run_arnes("-w", str(ws), "rewind", "9")
    assert wrong.code == 2 and "no checkpoint 9" in wrong.err and "Traceback" not in wrong.err
    for args in (["--list"], ["--dry-run"]):  # `| head -1`: the reader gone before the first line
        read, write = os.pipe()
        os.close(read)
        done = subprocess.run([ARNES, "-w", str(ws), "rewind", *args], stdout=write, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, check=False)  # fmt: skip
        os.close(write)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
        closed = subprocess.run(["bash", "-c", f'"{ARNES}" -w "{ws}" rewind {args[0]} >&-'], capture_output=True,
                                text=True, check=False)  # fmt: skip
        assert "Traceback" not in closed.stderr and closed.returncode == 0, closed.stderr  # stdout closed: said nowhere


def test_rewind_and_undo_at_the_prompt(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, git=False)
    before = _state(ws)
    script = tmp_path / "repl.json"
    second = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo later > later.txt"}}]},
        {"text": "second done"},
    ]
    script.write_text(json.dumps({"turns": [*_turns(), *second]}))
    child = pexpect.spawn(
        ARNES,
        ["--provider", "script", "--script", str(script), "-w", str(ws), "--permission-mode", "bypass",
         "--no-self-check"],
        env={**os.environ, "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 160),
    )  # fmt: skip
    child.expect("arnes>")
    child.sendline("change things")
    child.expect("all done")
    child.expect("arnes>")
    child.sendline("write later")
    child.expect("second done")
    child.expect("arnes>")
    child.sendline("/undo")  # the last turn's code: later.txt goes
    child.expect("restored: later.txt")
    child.expect("arnes>")
    assert not (ws / "later.txt").exists() and (ws / "new.txt").exists()
    child.sendline("/rewind")
    child.expect("rewind to which checkpoint")
    child.sendline("1")
    child.expect("code only")
    child.sendline("2")
    child.expect(r"\+a = 1")  # the diff, before anything is written
    child.expect(r"\[y/N\]")
    assert (ws / "new.txt").exists()
    child.sendline("y")
    child.expect("restored: ")
    child.expect("arnes>")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert _state(ws) == before  # (after the session: its sandbox's stand-ins are gone)
