"""Context, sub-agents, limits, resume, PROGRESS.md and model roles through the `arnes` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.agent.context import CLEARED_NOTE
from arnes.agent.named import HEADER as NAMED_HEADER
from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test"}


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"name": name, "input": inp}


def write_script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "s.json", **extra: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns, **extra}))
    return str(path)


def scripted(
    ws: Path, tmp_path: Path, turns: list[dict[str, Any]], *flags: str, trace: bool = True
) -> tuple[Any, list[dict[str, Any]]]:
    script = write_script(tmp_path, turns)
    trace_file = tmp_path / "t.jsonl"
    extra = ["--trace", str(trace_file)] if trace else []
    run = run_arnes("--provider", "script", "--script", script, "-w", str(ws), *extra, *flags, "task")
    return run, read_trace(trace_file) if trace else []


# -- context ---------------------------------------------------------------------------------


def test_sixty_turns_of_2kb_reads_fit_a_4k_window(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("".join(f"line {i:04d} " + "x" * 40 + "\n" for i in range(40)))  # ~2 kB
    assert 1900 < len((ws / "data.txt").read_text()) < 2300
    # Each read asks differently (the limit is past the end anyway), so the loop guard sees no repeat.
    turns = [{"text": f"read {i}", "tool_calls": [call("Read", file_path="data.txt", limit=99 + i)]} for i in range(60)]
    flags = ("--context-window", "4096", "--output-format", "json", "--max-turns", "99")
    run, trace = scripted(ws, tmp_path, turns, *flags)
    assert run.code == 0, run.err
    requests = [e for e in trace if e["event"] == "model_request"]
    responses = [e for e in trace if e["event"] == "model_response"]
    assert len(requests) == 61
    assert all(r["ctx_tokens"] <= 4096 for r in requests)
    assert all(r["input_tokens"] <= 4096 for r in responses)  # what the model was really sent
    compactions = [e for e in trace if e["event"] == "compaction"]
    assert compactions and all(c["tokens_after"] < c["tokens_before"] for c in compactions)
    methods = [c["method"] for c in compactions]
    assert set(methods) == {"clear", "summary"}, methods  # clearing first; a summary when it is not enough
    out = json.loads(run.out)
    assert out["compactions"] == methods.count("summary") and out["clearings"] == methods.count("clear")


def test_large_outputs_are_cut_with_a_note(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("".join(f"line {i} " + "z" * 50 + "\n" for i in range(400)))
    run, trace = scripted(
        ws, tmp_path, [{"tool_calls": [call("Read", file_path="big.txt")]}], "--context-window", "4096"
    )
    assert run.code == 0
    sent = [e for e in trace if e["event"] == "message" and e["role"] == "user"][-1]  # what the model got
    output = sent["content"][0]["content"]
    assert output.endswith("characters cut; ask for less, e.g. Read with offset/limit]")
    assert len(output) < 4500 and output.startswith("     1\tline 0 ")


# -- sub-agents ------------------------------------------------------------------------------


def test_delegate_returns_only_the_conclusion_and_nests_its_trace(shop: Path, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [call("Delegate", task="Find where the discount is defined.")]},
        {"tool_calls": [call("Grep", pattern="DISCOUNT_RATE =")]},  # the sub-agent's turns
        {"text": "It is DISCOUNT_RATE in pricing.py, line 4."},
        {"text": "The sub-agent found it."},
    ]
    run, trace = scripted(shop, tmp_path, turns)
    assert run.code == 0, run.err
    delegate_id = next(e["id"] for e in trace if e["event"] == "tool_call" and e["name"] == "Delegate")
    result = next(e for e in trace if e["event"] == "tool_result" and e["id"] == delegate_id)
    assert result["output"] == "It is DISCOUNT_RATE in pricing.py, line 4."
    nested = [e for e in trace if e.get("parent") == delegate_id]
    assert [e["event"] for e in nested if e["event"] in ("tool_call", "session_start", "session_end")] == [
        "session_start", "tool_call", "session_end",
    ]  # fmt: skip
    assert "  │ > Grep" in run.out


def test_read_only_delegate_cannot_write(shop: Path, tmp_path: Path) -> None:
    before = (shop / "pricing.py").read_text()
    turns = [
        {"tool_calls": [call("Delegate", task="Review pricing.py", read_only=True)]},
        {"tool_calls": [call("Read", file_path="pricing.py")]},
        {"tool_calls": [call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.99")]},
        {"tool_calls": [call("Write", file_path="new.py", content="x")]},
        {"tool_calls": [call("Bash", command="echo hacked > pricing.py")]},
        {"tool_calls": [call("Bash", command="sed -i s/0.10/0.99/ pricing.py")]},
        {"tool_calls": [call("Bash", command="cat pricing.py | head -2")]},
        {"text": "pricing.py:4 should use 0.15 (the task says 15 %)."},
        {"text": "done"},
    ]
    run, trace = scripted(shop, tmp_path, turns, "--permission-mode", "bypass")
    assert run.code == 0, run.err
    assert (shop / "pricing.py").read_text() == before and not (shop / "new.py").exists()
    child = [e for e in trace if "parent" in e and e["event"] == "tool_result"]
    outputs = [e["output"] for e in child]
    assert "Unknown tool 'Edit'" in outputs[1] and "Unknown tool 'Write'" in outputs[2]
    assert "read-only" in outputs[3] and "read-only" in outputs[4]
    assert "Order pricing" in outputs[5]
    delegate = next(e for e in trace if e["event"] == "tool_result" and "parent" not in e)
    assert delegate["output"].startswith("pricing.py:4 should use 0.15")


def test_a_sub_agent_cannot_delegate_further(shop: Path, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [call("Delegate", task="look")]},
        {"tool_calls": [call("Delegate", task="deeper")]},
        {"text": "no deeper"},
        {"text": "ok"},
    ]
    run, trace = scripted(shop, tmp_path, turns)
    assert run.code == 0
    inner = next(e for e in trace if "parent" in e and e["event"] == "tool_result")
    assert "Unknown tool 'Delegate'" in inner["output"]


# -- limits ----------------------------------------------------------------------------------


def test_max_tokens_stops_with_exit_3_and_names_the_limit(shop: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [call("Read", file_path="pricing.py")]}] * 10
    run, trace = scripted(shop, tmp_path, turns, "--max-tokens", "3000", "--output-format", "json")
    assert run.code == 3
    data = json.loads(run.out)
    assert data["limit"] == "tokens" and "--max-tokens 3000" in data["error"]
    assert trace[-1]["stop_reason"] == "budget"


def test_max_cost_uses_the_price_table(shop: Path) -> None:
    turns = [{"tool_calls": [call("Read", file_path="pricing.py")]}] * 10
    with FakeLLMServer(turns, input_tokens=100_000) as server:
        run = run_arnes(
            "--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5", "-w", str(shop),
            "--max-cost", "0.5", "--output-format", "json", "x", env=KEYS,
        )  # fmt: skip
        requests = len(server.requests)
    assert run.code == 3
    data = json.loads(run.out)
    assert data["limit"] == "cost" and data["cost"] >= 0.5 and requests == 2  # $0.30 a turn at $3/M input


def test_max_cost_for_an_unpriced_model_refuses_to_start(shop: Path) -> None:
    run = run_arnes("--provider", "openai", "--model", "mystery-1", "-w", str(shop), "--max-cost", "1", "x", env=KEYS)
    assert run.code == 2 and "mystery-1" in run.err and "pricing" in run.err


def test_settings_can_price_a_model(shop: Path) -> None:
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(
        json.dumps({"pricing": {"mystery-1": {"input": 1000.0, "output": 0}}, "limits": {"max_cost": 0.01}})
    )
    with FakeLLMServer([{"tool_calls": [call("Glob", pattern="*")]}] * 5, input_tokens=100) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "mystery-1", "-w", str(shop),
            "--output-format", "json", "--trust", "x", env=KEYS,
        )  # fmt: skip
    assert run.code == 3 and json.loads(run.out)["limit"] == "cost"


# -- sessions --------------------------------------------------------------------------------


def test_resume_continues_with_the_same_messages(shop: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "reading", "tool_calls": [call("Read", file_path="pricing.py")]}] * 3)
    first = run_arnes("--provider", "script", "--script", script, "-w", str(shop), "--max-turns", "2", "first task")
    assert first.code == 3
    (trace,) = (shop / ".arnes" / "traces").glob("*.jsonl")
    with FakeLLMServer([{"text": "finished"}]) as server:
        second = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "--model", "m", "-w", str(shop), "--resume",
            env=KEYS,
        )  # fmt: skip
        sent = server.requests[0][1]["messages"]
    assert second.code == 0, second.err
    assert "resuming session" in second.out
    assert sent[1]["role"] == "user" and sent[1]["content"].endswith(f"The workspace is {shop}.\n\nfirst task")
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "tool", "user"]
    assert "DISCOUNT_RATE" in sent[3]["content"]
    assert sent[-1]["content"] == "Continue with the task where you left off."
    assert list((shop / ".arnes" / "traces").glob("*.jsonl")) == [trace]  # the same session, the same trace
    assert [e["event"] for e in read_trace(trace)].count("session_start") == 2


def test_resume_by_id_and_with_a_new_task(shop: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "one"}])
    run_arnes("--provider", "script", "--script", script, "-w", str(shop), "alpha")
    (trace,) = (shop / ".arnes" / "traces").glob("*.jsonl")
    script2 = write_script(tmp_path, [{"text": "two"}], name="s2.json")
    again = run_arnes("--provider", "script", "--script", script2, "-w", str(shop), "--resume", trace.stem, "beta")
    assert again.code == 0
    messages = [e for e in read_trace(trace) if e["event"] == "message"]
    assert [m["content"][-1]["text"] for m in messages if m["role"] == "user"] == ["alpha", "beta"]
    assert run_arnes("-w", str(shop), "--resume", "20200101-000000-abcdef", "x").code == 2


def test_progress_md_is_loaded_and_updated(shop: Path, tmp_path: Path) -> None:
    (shop / "PROGRESS.md").write_text("# Progress\n\n## Next\n- add a coupon code\n")
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes(
            "--provider", "openai", "--base-url", server.url + "/v1", "-w", str(shop), "fix the discount", env=KEYS
        )
        first = server.requests[0][1]["messages"][1]["content"]
    assert run.code == 0
    assert "add a coupon code" in first
    text = (shop / "PROGRESS.md").read_text()
    assert "## Done\n- fix the discount (" in text and "## Next\n- add a coupon code" in text
    script = write_script(tmp_path, [{"tool_calls": [call("Glob", pattern="*")]}] * 3)
    run_arnes("--provider", "script", "--script", script, "-w", str(shop), "--max-turns", "1", "write the docs")
    assert "## In progress\n- write the docs (" in (shop / "PROGRESS.md").read_text()


def test_no_progress_file_is_created_unless_asked(shop: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "ok"}])
    run_arnes("--provider", "script", "--script", script, "-w", str(shop), "x")
    assert not (shop / "PROGRESS.md").exists()
    run_arnes("--provider", "script", "--script", script, "-w", str(shop), "--progress", "y")
    assert "- y (" in (shop / "PROGRESS.md").read_text()


# -- model routing ---------------------------------------------------------------------------


def test_roles_route_to_their_own_models(shop: Path, tmp_path: Path) -> None:
    main_turns = [{"tool_calls": [call("Delegate", task="count files")]}, {"text": "main done"}]
    with FakeLLMServer(main_turns) as main, FakeLLMServer([{"text": "3 files"}]) as sub:
        (shop / ".arnes").mkdir()
        settings = {
            "model": {"provider": "openai", "name": "big", "base_url": main.url + "/v1"},
            "models": {"subagent": {"provider": "anthropic", "name": "small", "base_url": sub.url}},
        }
        (shop / ".arnes" / "settings.json").write_text(json.dumps(settings))
        run = run_arnes("-w", str(shop), "--trust", "--output-format", "json", "go", env=KEYS)
        main_models = {body["model"] for _, body in main.requests}
        sub_models = {(path, body["model"]) for path, body in sub.requests}
    assert run.code == 0, run.err
    assert main_models == {"big"} and sub_models == {("/v1/messages", "small")}
    assert json.loads(run.out)["result"] == "main done"


def test_compaction_role_gets_the_summary_call(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("z" * 2000 + "\n")
    # 24 reads: in a 4k window old results are cleared first, a summary comes later
    reads = [{"tool_calls": [call("Read", file_path="data.txt", limit=10 + i)]} for i in range(24)]
    with FakeLLMServer(reads) as main, FakeLLMServer([{"text": "SUMMARY: read data.txt many times"}] * 20) as cheap:
        (ws / ".arnes").mkdir()
        settings = {
            "model": {"provider": "openai", "name": "big", "base_url": main.url + "/v1", "context_window": 4096},
            "models": {"compaction": {"provider": "openai", "name": "cheap", "base_url": cheap.url + "/v1"}},
        }
        (ws / ".arnes" / "settings.json").write_text(json.dumps(settings))
        run = run_arnes("-w", str(ws), "--trust", "go", env=KEYS)
        summary_calls = [body for _, body in cheap.requests]
        later = [body for _, body in main.requests][-1]
    assert run.code == 0, run.err
    assert summary_calls and all("tools" not in body for body in summary_calls)
    assert any("SUMMARY: read data.txt many times" in json.dumps(m) for m in later["messages"])


def test_a_4k_window_clears_old_results_and_asks_for_few_summaries(tmp_path: Path) -> None:
    """The real command in a 4k window, 2 kB reads (the Read tool caps a larger file itself; the
    cut of an oversized result is tests/test_context.py's). Old results are cleared first, which
    costs no model call; a summary (an extra call to the compaction model) comes only when that is
    not enough, and leaves the window at most half full."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(("x" * 63 + "\n") * 32)
    reads = [{"tool_calls": [call("Read", file_path="a.txt", limit=1000 + i)]} for i in range(18)]
    summaries = [{"text": "SUMMARY: read a.txt; nothing changed."}] * 20
    with FakeLLMServer([*reads, {"text": "done."}]) as main, FakeLLMServer(summaries) as cheap:
        (ws / ".arnes").mkdir()
        settings = {
            "model": {"provider": "openai", "name": "big", "base_url": main.url + "/v1", "context_window": 4096},
            "models": {"compaction": {"provider": "openai", "name": "cheap", "base_url": cheap.url + "/v1"}},
        }
        (ws / ".arnes" / "settings.json").write_text(json.dumps(settings))
        run = run_arnes("-w", str(ws), "--trust", "--output-format", "json", "go", env=KEYS)
        bodies = [body for _, body in main.requests]
        summary_calls = len(cheap.requests)
    assert run.code == 0, run.err
    out = json.loads(run.out)
    passes = [e for e in read_trace(Path(out["trace"])) if e["event"] == "compaction"]
    assert out["tool_calls"] == len(reads)
    cleared = [e for e in passes if e["method"] == "clear"]
    summarised = [e for e in passes if e["method"] == "summary"]
    assert cleared and out["clearings"] == len(cleared) and out["compactions"] == len(summarised) == summary_calls
    assert summary_calls <= len(reads) // 6, f"{summary_calls} summary calls in {len(reads)} turns"
    assert all(e["tokens_after"] <= 4096 // 2 for e in summarised), summarised
    assert all(e["tokens_after"] < e["tokens_before"] for e in passes)
    # What the server was sent: old results are the note, the newest is whole, every call answered.
    for body in bodies:
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        if tool_messages:
            assert tool_messages[-1]["content"] != CLEARED_NOTE
        asked = {c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        assert asked == {m["tool_call_id"] for m in tool_messages}
    assert any(m.get("content") == CLEARED_NOTE for body in bodies for m in body["messages"])


def test_a_sub_agent_starts_from_a_clean_context_with_its_own_turn_limit(shop: Path) -> None:
    turns = [
        {"text": "parent thinking", "tool_calls": [call("Read", file_path="pricing.py")]},
        {"tool_calls": [call("Delegate", task="Count the test methods in test_pricing.py.")]},
        *[{"tool_calls": [call("Read", file_path="pricing.py", limit=100 + i)]} for i in range(40)],  # never stops
        {"text": "parent done"},
    ]
    with FakeLLMServer(turns) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--steering", "small", "-w",
                        str(shop),
                        "--output-format", "json", "x", env=KEYS)  # fmt: skip
        bodies = [body for _, body in server.requests]
    child_first = bodies[2]["messages"]
    assert [m["role"] for m in child_first] == ["system", "user"]  # nothing of the parent's conversation
    first = child_first[1]["content"]
    assert f"is {shop}.\n\n{NAMED_HEADER}\n\ntest_pricing.py:\n     1\t" in first  # the file its task names
    assert first.endswith("\n\nCount the test methods in test_pricing.py.")
    assert "Delegate" not in {t["function"]["name"] for t in bodies[2]["tools"]}
    assert run.code == 0, run.err
    outputs = json.loads(run.out)
    assert outputs["result"] != ""  # the parent went on after the sub-agent hit its limit
    task = "Count the test methods in test_pricing.py."
    child_requests = [b for b in bodies if b["messages"][1].get("content", "").endswith(task)]
    assert len(child_requests) == 30  # the sub-agent's own turn limit, then back to the parent


def test_a_read_only_sub_agent_gets_a_read_only_sandbox_and_is_told_so(tmp_path: Path) -> None:
    from arnes.llm.script import ScriptProvider
    from arnes.sandbox.bubblewrap import Bubblewrap
    from arnes.session import Session

    parent = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]), sandbox_mode="auto")
    child = parent.child(read_only=True, parent_call="c1")
    assert {"Write", "Edit", "KillShell", "Delegate"}.isdisjoint(child.tools.names())
    assert "You are read-only" in child.system_prompt() and "file, line and reason" in child.system_prompt()
    if Bubblewrap.unavailable() is None:
        assert child.sandbox.name == "bubblewrap" and "a private /tmp" in child.sandbox.describe()
        with child.sandbox.wrap(["true"], tmp_path) as cmd:
            assert cmd.argv[cmd.argv.index(str(tmp_path)) - 1] == "--ro-bind"


def test_a_lone_surrogate_and_a_line_separator_in_a_call_keep_the_trace_and_resume_whole(tmp_path: Path) -> None:
    """Red team round 3 (a helper's finding): a model's Bash `echo \\udcff` (valid JSON) crashed the
    trace writer with a traceback; a U+2028 in a call cut the trace line for read_trace and --resume."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write = call("Write", file_path="a\u2028b.txt", content="x\u2028y")
    turns = [{"tool_calls": [call("Bash", command="echo '\udcff'")]}, {"tool_calls": [write]}, {"text": "done"}]
    run, trace = scripted(ws, tmp_path, turns, "--permission-mode", "acceptEdits", "--sandbox", "off")
    assert run.code == 0 and "Traceback" not in run.err, run.err
    calls = [e for e in trace if e["event"] == "tool_call"]
    assert calls[0]["input"]["command"] == "echo '\udcff'" and calls[1]["input"]["file_path"] == "a\u2028b.txt"
    from arnes.agent.resume import load_history

    history = load_history(tmp_path / "t.jsonl")  # what --resume would send again
    said = [c for m in history for c in m.tool_calls]
    assert [c.input.get("file_path") for c in said] == [None, "a\u2028b.txt"] and len(history) == 6
