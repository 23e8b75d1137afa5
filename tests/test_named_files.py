"""The files a task names are shown with it, as Read would show them, and count as read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from arnes.agent.loop import Agent
from arnes.agent.named import HEADER, PLAIN_HEADER, mentioned
from arnes.llm.script import ScriptProvider
from arnes.session import Session
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test"}
PAGING = "def page(items, number, size):\n    start = (number - 1) * size + 1\n    return items[start : start + size]\n"


def test_a_file_counts_as_named_by_its_path_or_by_a_name_only_it_has() -> None:
    names = ["paging.py", "src/app.py", "a/util.py", "b/util.py", "mytext.py", "text.py"]
    assert mentioned("Fix page() in paging.py.", names) == ["paging.py"]
    assert mentioned("see app.py, then src/app.py", names) == ["src/app.py"]
    assert mentioned("util.py is broken", names) == []  # two files have that name: which one is unsaid
    assert mentioned("a/util.py is broken", names) == ["a/util.py"]
    assert mentioned("Add slugify to text.py: lower-case", names) == ["text.py"]  # not mytext.py
    assert mentioned("text.pyc and text.py_old and pretext.py", names) == []


def first_user_message(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in messages if m["role"] == "user"))


def test_the_named_file_is_shown_and_its_first_edit_needs_no_read(tmp_path: Path) -> None:
    (tmp_path / "paging.py").write_text(PAGING)
    (tmp_path / "other.py").write_text("SECRET_OF_OTHER = 1\n")
    edit = {"file_path": "paging.py", "old_string": "* size + 1", "new_string": "* size"}
    turns = [{"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "Fixed."}]
    with FakeLLMServer(turns) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--steering", "small", "-w",
                        str(tmp_path),
                        "--permission-mode", "acceptEdits", "--output-format", "json",
                        "page() in paging.py skips the first item. Fix it.", env=KEYS)  # fmt: skip
        bodies = [body for _, body in server.requests]
    assert run.code == 0, run.err
    first = first_user_message(bodies[0])
    assert f"{HEADER}\n\npaging.py:\n     1\tdef page(items, number, size):\n     2\t    start = " in first
    assert first.endswith("page() in paging.py skips the first item. Fix it.")
    assert "SECRET_OF_OTHER" not in first  # only what the task names
    assert (tmp_path / "paging.py").read_text() == PAGING.replace("* size + 1", "* size")
    results = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert "has not been read" not in results[0]["content"]


def test_what_a_read_would_not_show_is_not_shown(tmp_path: Path) -> None:
    """A rule, .gitignore, a link out, a large file: named in the task, still not in the prompt."""
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE_MARKER\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("ignored.txt\n")
    (ws / "ignored.txt").write_text("IGNORED_MARKER\n")
    (ws / "secret.txt").write_text("DENIED_MARKER\n")
    (ws / "big.py").write_text("BIG_MARKER = 1\n" * 2000)
    os.symlink(outside, ws / "link.txt")
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(secret.txt)"]}}))
    task = "Look at ignored.txt, secret.txt, big.py and link.txt."
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--steering", "small", "-w",
                        str(ws), "--trust", task,
                        env=KEYS)  # fmt: skip
        first = first_user_message(server.requests[0][1])
    assert run.code == 0, run.err
    for marker in ("OUTSIDE_MARKER", "IGNORED_MARKER", "DENIED_MARKER", "BIG_MARKER"):
        assert marker not in first, marker
    assert HEADER not in first


def test_a_file_already_seen_is_not_shown_again_for_a_later_task(tmp_path: Path) -> None:
    """The REPL's second task names the file again: its content is in the conversation already."""
    (tmp_path / "paging.py").write_text(PAGING)
    provider = ScriptProvider.from_turns([{"text": "one"}, {"text": "two"}])
    agent = Agent(Session(workspace=tmp_path, provider=provider, steering_set="small"))
    agent.start()
    try:
        agent.turn("explain paging.py")
        agent.turn("and paging.py once more")
    finally:
        agent.finish()
    shown = [m.text.count("def page(items, number, size)") for m in agent.messages if m.role == "user"]
    assert shown == [1, 0]


def test_a_read_hook_keeps_the_files_it_guards_out_of_the_named_files(tmp_path: Path) -> None:
    """Red team round 3: the user's own PreToolUse hook blocks Read of production files; the named
    files were read past it. With a PreToolUse hook, no file is shown with the task."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes"
    config.mkdir(parents=True)
    hook = {"type": "command", "command": "if grep -q prod.cfg; then echo 'no prod files' >&2; exit 2; fi"}
    (config / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [hook]}]}}))
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / "prod.cfg").write_text("api_key = HOOK_CANARY\n")
    read = {"name": "Read", "input": {"file_path": "config/prod.cfg"}}
    with FakeLLMServer([{"tool_calls": [read]}, {"text": "ok"}]) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--steering", "small", "-w", str(ws),
                        "Compare config/prod.cfg with the defaults.", env=KEYS)  # fmt: skip
        bodies = [json.dumps(body) for _, body in server.requests]
    assert run.code == 0, run.err
    assert "HOOK_CANARY" not in bodies[-1], "control: the hook did not block Read"
    assert "HOOK_CANARY" not in bodies[0] and HEADER not in bodies[0]


def test_in_an_edit_format_the_file_is_shown_as_the_reply_writes_it(tmp_path: Path) -> None:
    """With `whole`, the named file comes as a fenced block under its path, without Read's line
    numbers (the model would copy them into the file it sends back), and the system prompt says
    one way to change files: the reply's, not Write and Edit."""
    (tmp_path / "paging.py").write_text(PAGING)
    fixed = PAGING.replace("* size + 1", "* size")
    turns = [{"text": f"paging.py\n```python\n{fixed}```\n"}, {"text": "Fixed."}]
    with FakeLLMServer(turns) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--steering", "small",
                        "--edit-format", "whole", "--no-self-check", "-w", str(tmp_path),
                        "--permission-mode", "acceptEdits", "page() in paging.py skips the first item. Fix it.",
                        env=KEYS)  # fmt: skip
        body = server.requests[0][1]
    assert run.code == 0, run.err
    first = first_user_message(body)
    assert f"{PLAIN_HEADER}\n\npaging.py\n```python\n{PAGING}```" in first
    assert "     1\t" not in first and HEADER not in first
    messages = body["messages"]
    assert isinstance(messages, list)
    system = str(messages[0]["content"])
    assert "How to change files" in system and "call Write or Edit" not in system
    assert (tmp_path / "paging.py").read_text() == fixed


def test_a_fence_inside_the_file_does_not_close_the_block() -> None:
    from arnes.agent.named import fenced

    shown = fenced("README.md", "Run:\n```sh\nmake\n```\n")
    assert shown == "README.md\n````\nRun:\n```sh\nmake\n```\n````"


STUB = "def two_fer(name='you'):\n    pass\n"
TESTS = (
    "import unittest\nfrom two_fer import two_fer\n\nclass T(unittest.TestCase):\n"
    "    def test_x(self):\n        self.assertEqual(two_fer(), 'TESTS_BODY_MARKER')\n"
)
KEPT_TASK = (
    "Use the instructions to change two_fer.py.\nThe tests are in two_fer_test.py; they are correct, don't change them."
)


def first_message_of(tmp_path: Path, *steering_and_format: str) -> str:
    (tmp_path / "two_fer.py").write_text(STUB)
    (tmp_path / "two_fer_test.py").write_text(TESTS)
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", *steering_and_format, "-w",
                        str(tmp_path), "--output-format", "json", KEPT_TASK, env=KEYS)  # fmt: skip
        first = first_user_message(server.requests[0][1])
    assert run.code == 0, run.err
    return first


def test_spare_kept_names_a_file_the_task_says_to_keep_instead_of_showing_it(tmp_path: Path) -> None:
    """In an edit format the reply may write every file shown whole: with spare-kept, the test file
    the task says not to change is named, its content left out; the stub is shown."""
    first = first_message_of(tmp_path, "--steering", "small", "--edit-format", "whole")
    assert f"{PLAIN_HEADER}\n\ntwo_fer.py\n```python\n{STUB}```" in first
    assert "TESTS_BODY_MARKER" not in first
    assert "Not shown, as the task says to leave it as it is: two_fer_test.py." in first


def test_without_spare_kept_or_with_native_calls_the_kept_file_is_shown(tmp_path: Path) -> None:
    """Without the piece both files are shown; with tool calls nothing is written whole, so
    spare-kept leaves the Read-shaped view as it was."""
    assert "TESTS_BODY_MARKER" in first_message_of(
        tmp_path, "--steering", "small,-spare-kept", "--edit-format", "whole"
    )
    tools = first_message_of(tmp_path, "--steering", "small", "--edit-format", "tools")
    assert "TESTS_BODY_MARKER" in tools and "Not shown" not in tools
