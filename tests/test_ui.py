"""The terminal's small parts: visible(), result previews, the spinner, the context meter."""

from __future__ import annotations

import io
import json
from pathlib import Path

from arnes.agent.events import CompactionEvent, MessageEvent, ModelRequest, SessionEnd, ToolCallEvent, ToolResultEvent
from arnes.messages import Message, ToolCall
from arnes.safe import one_line, terminal_console, visible
from arnes.ui.preview import preview
from arnes.ui.render import TerminalRenderer
from arnes.ui.spinner import Spinner
from arnes.workflow.teams.timeline import Timeline


def test_visible_writes_out_every_control_and_invisible_character() -> None:
    hostile = "\x1b[2J\x1b]52;c;aGk=\x07\r\b\x00\x7f\x9b\u202e\u2066\u200b\u200d\ufeff\u2028\U000e0041"
    shown = visible(hostile)
    assert shown.isprintable() and shown.isascii()
    assert shown == (
        "\\x1b[2J\\x1b]52;c;aGk=\\x07\\r\\b\\0\\x7f\\x9b\\u202e\\u2066\\u200b\\u200d\\ufeff\\u2028\\U000e0041"
    )
    assert visible("naïve ✓ 日本\n\tx") == "naïve ✓ 日本\n\tx"  # printable text, newlines and tabs stay
    assert one_line("a\nb\tc") == "a\\nb\\tc"
    assert visible("dos\r\n") == "dos\\r\n"  # a CRLF line end is shown, as git diff shows ^M


def test_previews_say_what_the_tool_returned() -> None:
    bash = preview("Bash", {}, "exit code: 1\n[stdout]\na\nb\nc\nd\ne\n[stderr]\nboom")
    assert bash.summary == "exit 1 · 6 lines" and bash.lines == ["a", "b", "… 3 more lines", "boom"]
    grep = preview("Grep", {"output_mode": "count"}, "a.py:3\nb.py:2")
    assert grep.summary == "5 matches in 2 files"
    files = preview("Glob", {}, "a.py\nb.py\n... (7 more; use a narrower pattern or path)")
    assert files.summary == "9 files"
    edit = preview("Edit", {"old_string": "x = 1", "new_string": "x = 2\ny = 3"}, "Edited a.py: replaced 1 occurrence.")
    assert edit.lines == ["-x = 1", "+x = 2", "+y = 3"] and edit.diff
    read = preview("Read", {}, "     1\ta\n     2\tb")
    assert read.summary == "2 lines (lines 1-2)"


def test_the_spinner_draws_then_erases_its_line() -> None:
    out = io.StringIO()
    spinner = Spinner(out)
    spinner.start()
    spinner.show()
    spinner.stop()
    assert out.getvalue().startswith("\r⠋ thinking 0s") and out.getvalue().endswith("\r\x1b[2K")


def test_the_context_meter_never_goes_down_between_compactions() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(terminal_console(out))
    for tokens in (1500, 1300):  # an estimate that overshot, then the provider's smaller count
        renderer(ModelRequest(1, tokens, 10_000))
    renderer(CompactionEvent(9000, 1000, "summary", 3, []))
    renderer(ModelRequest(2, 1000, 10_000))
    meters = [line for line in out.getvalue().splitlines() if line.startswith("ctx ")]
    assert meters == ["ctx 1.5k/10.0k (15%)", "ctx 1.5k/10.0k (15%)", "ctx 1.0k/10.0k (10%)"]


def test_a_clearing_says_how_many_results_went_and_a_summary_says_it_compacted() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(terminal_console(out))
    renderer(CompactionEvent(3900, 2000, "clear", 4, []))
    renderer(CompactionEvent(3800, 1800, "summary", 18, []))
    lines = out.getvalue().splitlines()
    assert lines == [
        "cleared 4 old tool results to make room: 3.9k -> 2.0k tokens",
        "context compacted (summary): 3.8k -> 1.8k tokens",
    ]


def test_parallel_results_are_labelled_and_the_closing_line_has_cost_and_time() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(terminal_console(out))
    message = Message("assistant", [ToolCall("1", "Read", {}), ToolCall("2", "Grep", {})])
    renderer(MessageEvent("assistant", message.to_json()["content"]))
    renderer(ToolCallEvent("1", "Read", {"file_path": "a.py"}))
    renderer(ToolCallEvent("2", "Grep", {"pattern": "def"}))
    renderer(ToolResultEvent("2", "Grep", False, 3, "a.py"))  # right after its call: labelled all the same
    renderer(ToolResultEvent("1", "Read", False, 1, "     1\tx"))
    renderer(SessionEnd("end_turn", 1, 2, 1000, 10, cost=0.0123))
    text = out.getvalue()
    assert "[Grep 'def'] ok · 1 file" in text and "[Read a.py] ok · 1 line" in text
    last = text.splitlines()[-1]
    assert last.startswith("[end_turn] 1 turns, 2 calls") and ", $0.0123, " in last and last.endswith("s")


def test_the_team_timeline_writes_reasons_escaped_under_the_verdict(tmp_path: Path) -> None:
    out = io.StringIO()
    timeline = Timeline(tmp_path, "run", terminal_console(out))
    timeline.record("node_end", "check ends: FAIL", "red", detail="a.py:3 \x1b]0;pwned\x07 wrong\n\nVERDICT: FAIL")
    runs = tmp_path / ".arnes" / "teams" / "runs"  # the timeline takes the workspace and keeps its files there
    readable = (runs / "run.md").read_text()
    assert (
        "- " in readable
        and "check ends: FAIL\n  > a.py:3 \\x1b]0;pwned\\x07 wrong\n  >\n  > VERDICT: FAIL\n" in readable
    )
    assert "\x1b" not in out.getvalue() and "       a.py:3 \\x1b]0;pwned\\x07 wrong" in out.getvalue()
    assert json.loads((runs / "run.jsonl").read_text())["event"] == "node_end"
