"""End to end: the real `arnes` against a fake server behaving as llama.cpp and Ollama do.

What a scripted model never does and a real local one does: prints its calls as text, cuts a
reply at the token cap in the middle of a call, refuses a request longer than its window with
HTTP 400, reads a long prompt for minutes before the first byte.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 2048, "params": {}}, "total_slots": 1}
TOO_LONG = {
    "status": 400,
    "body": {
        "error": {
            "code": 400,
            "message": "request (5048 tokens) exceeds the available context size (2048 tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5048,
            "n_ctx": 2048,
        }
    },
}


def llama(server: FakeLLMServer, *more: str) -> list[str]:
    return [
        "--provider",
        "openai",
        "--base-url",
        server.url + "/v1",
        "--model",
        "qwen2.5-coder-1.5b",
        "--edit-format",
        "tools",
        *more,
    ]


def write_call(path: str, content: str) -> str:
    """How Qwen2.5-Coder prints a call on llama.cpp: Hermes tags in the message content."""
    args = json.dumps({"file_path": path, "content": content})
    return f'<tool_call>\n{{"name": "Write", "arguments": {args}}}\n</tool_call>'


def events(trace: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in read_trace(trace) if e["event"] == name]


def test_request_settings_and_the_servers_window(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer([{"text": "Hello."}], props=LLAMA_PROPS) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(trace), "say hello")
        plain = server.requests[-1][1]
        run2 = run_arnes(
            *llama(server, "--max-output-tokens", "300", "--temperature", "0.6", "--context-window", "4096"),
            "-w", str(tmp_path), "say hello",
        )  # fmt: skip
        chosen = server.requests[-1][1]
    assert run.code == 0, run.err
    assert plain["max_tokens"] == 2048 and plain["temperature"] == 0.0  # the qwen2.5 row of the table
    assert chosen["max_tokens"] == 300 and chosen["temperature"] == 0.6
    assert "context window: 2048 tokens (server /props)" in run.out
    assert "context window: 4096 tokens (flag)" in run2.out
    assert events(trace, "session_start")[0]["context_window"] == 2048


def test_text_calls_in_each_format_run_with_their_own_ids_and_raw_text_kept(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    turns = [
        {"text": "I'll create both files.\n" + write_call("a.txt", "one") + "\n" + write_call("b.txt", "two")},
        {"text": '{{"name": "Write", "arguments": {"file_path": "c.txt", "content": "three"}}}\nThat creates c.txt.'},
        {"text": '```json\n{"name": "write_file", "arguments": {"path": "d.txt"}}\n```'},
        {"text": '<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.txt"}\n"oops"}\n</tool_call>'},
        {"text": "All three files are created."},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes(
            *llama(server), "-w", str(tmp_path), "--permission-mode", "acceptEdits", "--trace", str(trace),
            "create a.txt, b.txt and c.txt",
        )  # fmt: skip
    assert run.code == 0, run.err
    assert [(tmp_path / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == ["one", "two", "three"]
    calls = events(trace, "tool_call")
    assert len({c["id"] for c in calls}) == len(calls) == 5
    results = {r["id"]: r for r in events(trace, "tool_result")}
    unknown, unreadable = results[calls[3]["id"]], results[calls[4]["id"]]
    assert unknown["is_error"] and "Unknown tool 'write_file'. Available tools: Read," in unknown["output"]
    assert unreadable["is_error"] and "Your tool call could not be read" in unreadable["output"]
    assert "call it again with valid json" in unreadable["output"].lower()
    responses = events(trace, "model_response")
    assert responses[0]["raw_text"] == turns[0]["text"] and responses[0]["text"] == "I'll create both files."
    assert "raw_text" not in responses[-1]  # nothing recovered there: no key
    assert "All three files are created." in run.out


def test_a_reply_cut_in_the_middle_of_a_call_is_asked_again_not_taken_as_the_end(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    cut = write_call("hello.txt", "hi")[:60]  # `"content": "h` and no more: the token cap fell there
    turns = [
        {"text": cut, "finish": "length"},
        {"text": "The file is", "finish": "length"},
        {"text": write_call("hello.txt", "hi")},
        {"text": "Created hello.txt, it holds", "finish": "length"},
        {"text": " the word hi."},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes(
            *llama(server), "-w", str(tmp_path), "--permission-mode", "acceptEdits", "--trace", str(trace),
            "--output-format", "json", "create hello.txt containing hi",
        )  # fmt: skip
        third = server.requests[2][1]
    assert run.code == 0, run.err
    assert (tmp_path / "hello.txt").read_text() == "hi"
    first = events(trace, "tool_result")[0]
    assert first["is_error"] and "cut off at the output limit (2048 tokens)" in first["output"]
    assert "Continue exactly where it stopped" in third["messages"][-1]["content"]  # the prose cut
    assert [e["stop_reason"] for e in events(trace, "model_response")][:2] == ["max_tokens", "max_tokens"]
    assert json.loads(run.out)["result"] == "Created hello.txt, it holds the word hi."  # continued across the cut


def test_replies_cut_again_and_again_stop_with_max_tokens_exit_3(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    turns = [{"text": "Let me think about this step by step", "finish": "length"}] * 5
    with FakeLLMServer(turns) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(trace), "explain")
    assert run.code == 3
    assert "[max_tokens]" in run.out and "--max-output-tokens" in run.out
    assert events(trace, "session_end")[0]["stop_reason"] == "max_tokens"
    assert len(server.requests) == 2  # the same cut text twice is a loop: no third 2,048 tokens
    assert "began with the same text again" in run.out
    turns = [{"text": f"Part {n} of a long answer", "finish": "length"} for n in range(5)]
    with FakeLLMServer(turns) as server:  # each continuation new: the cap of four stands
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(tmp_path / "u.jsonl"), "explain")
    assert run.code == 3 and len(server.requests) == 4 and "4 times in a row" in run.out


def test_the_servers_context_refusal_compacts_and_retries_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n" * 50)
    trace = tmp_path / "t.jsonl"
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"error": TOO_LONG},
        {"text": "a.txt holds 50 lines."},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(trace), "how long is a.txt?")
    assert run.code == 0, run.err
    assert "compacting to 2048 tokens and trying once more" in run.out
    assert events(trace, "compaction") and "a.txt holds 50 lines." in run.out


def test_a_refusal_that_persists_is_an_error_without_the_configure_a_model_help(tmp_path: Path) -> None:
    with FakeLLMServer([{"error": TOO_LONG}] * 3) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "hi")
    assert run.code == 1
    assert "exceeds the available context size (2048 tokens)" in run.out
    assert "To configure a model" not in run.err


def test_no_first_byte_within_the_timeout_is_reported_once(tmp_path: Path) -> None:
    stall = threading.Event()
    with FakeLLMServer([{"text": "late"}], stall=stall) as server:
        try:
            run = run_arnes(*llama(server, "--timeout", "0.5"), "-w", str(tmp_path), "hi")
        finally:
            stall.set()
        posts = len(server.requests)
    assert run.code == 1 and posts == 1
    assert "within 0.5 s" in run.out and "--timeout" in run.out
    assert "To configure a model" not in run.err


def test_ollama_native_chat_holds_num_ctx_fixed_for_the_session(tmp_path: Path) -> None:
    show = {"parameters": "stop <|im_end|>", "model_info": {"qwen2.context_length": 32768}}
    turns = [
        {"tool_calls": [{"name": "Write", "input": {"file_path": "hello.txt", "content": "hi"}}]},
        {"text": write_call("bye.txt", "bye")},
        {"text": "Done."},
    ]
    with FakeLLMServer(turns, show=show, text_tool_calls=False) as server:
        run = run_arnes(
            "--provider", "ollama", "--base-url", server.url + "/v1", "-w", str(tmp_path), "--edit-format", "tools",
            "--permission-mode", "acceptEdits", "create hello.txt",
        )  # fmt: skip
        bodies = [(path, body) for path, body in server.requests]
    assert run.code == 0, run.err
    assert (tmp_path / "hello.txt").read_text() == "hi" and (tmp_path / "bye.txt").read_text() == "bye"
    assert {path for path, _ in bodies} == {"/api/chat"}
    assert [b["options"]["num_ctx"] for _, b in bodies] == [8192, 8192, 8192]
    assert bodies[0][1]["options"]["temperature"] == 0.0 and bodies[0][1]["options"]["num_predict"] == 2048
    assert "context window: 8192 tokens (server /api/show (trained for 32768, capped))" in run.out
    tool_msg = next(m for m in bodies[1][1]["messages"] if m["role"] == "tool")
    assert tool_msg["tool_name"] == "Write"


def test_a_reply_that_runs_on_after_its_call_is_cut_at_the_call(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B: a Read call, then 2,048 tokens of a Read result it made
    up (minutes on a CPU). The stream is left once the call is followed by a long text that starts
    no other call: the call runs, and the made-up result is neither kept nor sent back."""
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    call = '```json\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n```\n'
    fake = "".join(f"{n}   def made_up_{n}(a, b):\n" for n in range(1, 80))
    turns = [{"text": call + fake}, {"text": "add subtracts."}]
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(turns) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(trace), "what is wrong in calc.py?")
        second = server.requests[1][1]
    assert run.code == 0, run.err
    assert events(trace, "tool_result")[0]["output"].startswith("     1\tdef add(a, b):")
    sent = json.dumps(second["messages"])
    assert "made_up" not in sent and "calc.py" in sent
    assert "made_up" not in json.dumps(events(trace, "model_response"))


def test_the_same_whole_call_printed_until_the_cap_runs_once_and_is_not_called_cut(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B: the Edit it meant, printed as a bare JSON line 52 times
    until the 2,048-token cap, the last copy cut. The whole one runs once; none comes back as
    "cut off" (before, the only recovered call was marked cut and nothing ran)."""
    (tmp_path / "cart.py").write_text("from totals import calc_total\n")
    line = json.dumps({"name": "Edit", "arguments": {"file_path": "cart.py", "old_string": "import calc_total",
                                                     "new_string": "import order_total"}})  # fmt: skip
    reply = (line + "\n") * 52 + '{"name": "Edit", "arguments'
    trace = tmp_path / "t.jsonl"
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "cart.py"}}]},
             {"text": reply, "finish": "length"}, {"text": "Renamed."}]  # fmt: skip
    with FakeLLMServer(turns) as server:
        run = run_arnes(*llama(server), "-w", str(tmp_path), "--trace", str(trace), "--permission-mode",
                        "acceptEdits", "rename calc_total", env={"OPENAI_API_KEY": "x"})  # fmt: skip
    assert run.code == 0, run.err
    results = events(trace, "tool_result")
    assert [r["is_error"] for r in results] == [False, False], results
    assert (tmp_path / "cart.py").read_text() == "from totals import order_total\n"


def test_in_whole_a_small_model_is_offered_only_bash(tmp_path: Path) -> None:
    """The small profile's `whole` format: the task's files are shown and the reply changes them,
    so the model gets no Read, Glob or Grep to wander with (aider's protocol offers no tools); in
    the `tools` format it keeps them, and Write and Edit still run the format's own changes."""
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    reply = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    with FakeLLMServer([{"text": reply}, {"text": "Fixed."}]) as server:
        args = ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b"]
        run = run_arnes(*args, "--no-self-check", "--permission-mode", "acceptEdits", "-w", str(tmp_path),
                        "Fix add() in calc.py.")  # fmt: skip
        whole = [t["function"]["name"] for t in server.requests[0][1].get("tools", [])]
        run2 = run_arnes(*args, "--edit-format", "tools", "-w", str(tmp_path), "say hello")
        tools = [t["function"]["name"] for t in server.requests[-1][1].get("tools", [])]
    assert run.code == 0 and run2.code == 0, run.err + run2.err
    assert whole == ["Bash"]
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert {"Read", "Glob", "Grep", "Write", "Edit"} <= set(tools)


PYPROJECT = '[project]\nname = "calc"\nversion = "0.1"\n\n[tool.pytest.ini_options]\ntestpaths = ["."]\n'


def test_a_whole_block_never_changes_pytests_settings_for_the_model(tmp_path: Path) -> None:
    """The judge's part of pyproject.toml: a `whole` reply that adds `addopts = "--deselect ..."`
    would turn the failing suite green, so it is refused like a test file; a change to the rest of
    the file (the project's own version) is made."""
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    deselect = PYPROJECT + 'addopts = "--deselect test_calc.py::test_add"\n'
    version = PYPROJECT.replace('version = "0.1"', 'version = "0.2"')
    trace = tmp_path / "t.jsonl"
    turns = [{"text": f"pyproject.toml\n```toml\n{text}```\n"} for text in (deselect, version)] + [{"text": "Done."}]
    with FakeLLMServer(turns) as server:
        args = ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "qwen2.5-coder-1.5b"]
        run = run_arnes(*args, "--no-self-check", "--permission-mode", "acceptEdits", "-w", str(tmp_path),
                        "--trace", str(trace), "Fix add() in calc.py; see pyproject.toml.")  # fmt: skip
        told = json.dumps(server.requests[1][1]["messages"][-1])
    assert run.code == 0, run.err
    assert "NOT applied: arnes did not make this Write for you: it changes pytest's settings in pyproject.toml" in told
    assert [e["output"] for e in events(trace, "tool_result")] == ["Overwrote pyproject.toml (6 lines)."]
    assert (tmp_path / "pyproject.toml").read_text() == version
