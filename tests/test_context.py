"""Compaction invariants: the task is kept, pairs are never split, the result fits the limit."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.agent.context import (
    CLEARED_NOTE,
    SUMMARY_HEADER,
    Compaction,
    Summarise,
    clear_results,
    compact,
    message_tokens,
    units,
)
from arnes.messages import Message, TextBlock, ToolCall, ToolResultBlock

TASK = "Change the discount to 15 % and keep the tests green."


def turn(i: int, size: int, calls: int = 1) -> list[Message]:
    ids = [f"c{i}_{k}" for k in range(calls)]
    assistant = Message(
        "assistant", [TextBlock(f"step {i}"), *(ToolCall(c, "Read", {"file_path": f"f{i}.py"}) for c in ids)]
    )
    results = Message("user", [ToolResultBlock(c, "x" * size) for c in ids])
    return [assistant, results]


def conversation(sizes: list[int], calls: int = 1) -> list[Message]:
    messages = [Message.user(TASK)]
    for i, size in enumerate(sizes):
        messages += turn(i, size, calls)
    return messages


def assert_pairs_whole(messages: list[Message]) -> None:
    """Every call has its result in the next message, and every result answers a call before it."""
    for i, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            answered = {b.tool_call_id for b in messages[i + 1].content if isinstance(b, ToolResultBlock)}
            assert {c.id for c in message.tool_calls} == answered
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                previous = messages[i - 1]
                assert block.tool_call_id in {c.id for c in previous.tool_calls}


def test_units_keep_a_call_with_its_results() -> None:
    groups = units(conversation([10, 10])[1:])
    assert [len(g) for g in groups] == [2, 2]


def test_summary_replaces_old_turns_and_keeps_task_and_recent_pairs() -> None:
    messages = conversation([2000] * 12)
    seen: list[str] = []
    done = compact(messages, 2000, lambda transcript: seen.append(transcript) or "Read f0..f9; nothing changed yet.")
    assert done is not None and done.method == "summary" and done.removed > 0
    head = done.messages[0]
    assert head.role == "user" and head.content[0] == TextBlock(TASK)
    assert isinstance(head.content[1], TextBlock) and head.content[1].text.startswith(SUMMARY_HEADER)
    assert "step 0" in seen[0]  # the summary call saw the old turns
    assert done.messages[-1] == messages[-1] and done.messages[-2] == messages[-2]
    assert done.messages[1].role == "assistant"
    assert_pairs_whole(done.messages)
    assert message_tokens(done.messages) <= 2000


def test_when_the_model_cannot_summarise_whole_pairs_are_dropped() -> None:
    def broken(_: str) -> str:
        raise RuntimeError("model down")

    done = compact(conversation([2000] * 12), 2000, broken)
    assert done is not None and done.method == "drop"
    assert "earlier messages were dropped" in done.messages[0].content[1].text  # type: ignore[union-attr]
    assert_pairs_whole(done.messages)


def test_nothing_happens_under_the_limit_unless_forced() -> None:
    messages = conversation([10, 10, 10, 10])
    assert compact(messages, 10_000, lambda _: "s") is None
    forced = compact(messages, 10_000, lambda _: "s", force=True)
    assert forced is not None and forced.messages[0].content[0] == TextBlock(TASK)


def test_a_second_compaction_replaces_the_first_summary() -> None:
    first = compact(conversation([2000] * 12), 2000, lambda _: "first summary")
    assert first is not None
    grown = first.messages + turn(50, 2000) + turn(51, 2000) + turn(52, 2000)
    second = compact(grown, 2000, lambda _: "second summary")
    assert second is not None
    texts = [b.text for b in second.messages[0].content if isinstance(b, TextBlock)]
    assert texts[0] == TASK and "second summary" in texts[-1] and not any("first summary" in t for t in texts)


def test_a_single_huge_result_is_cut_not_split() -> None:
    done = compact(conversation([40_000]), 2000, lambda _: "s")
    assert done is not None
    assert_pairs_whole(done.messages)
    assert message_tokens(done.messages) <= 2000
    assert "characters cut to fit the context window" in done.messages[-1].content[0].content  # type: ignore[union-attr]


def test_a_new_task_after_results_survives_compaction() -> None:
    messages = conversation([2000] * 10)
    messages[-1] = Message("user", [*messages[-1].content, TextBlock("Now also update the README.")])
    done = compact(messages, 2000, lambda _: "s")
    assert done is not None
    every_text = [b.text for m in done.messages for b in m.content if isinstance(b, TextBlock)]
    assert "Now also update the README." in every_text


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=6000), min_size=1, max_size=40),
    calls=st.integers(min_value=1, max_value=3),
    budget=st.integers(min_value=600, max_value=6000),
    summary_works=st.booleans(),
)
def test_invariants_hold_for_any_conversation(sizes: list[int], calls: int, budget: int, summary_works: bool) -> None:
    messages = conversation(sizes, calls)

    def summarise(_: str) -> str:
        if not summary_works:
            raise RuntimeError("no")
        return "summary of the earlier work"

    done = compact(messages, budget, summarise)
    result = done.messages if done else messages
    assert result[0].role == "user" and result[0].content[0] == TextBlock(TASK)  # task kept
    assert_pairs_whole(result)  # pairs never split
    assert message_tokens(result) <= max(budget, message_tokens(result[:1]) + 200)  # under the limit
    if done is None:
        assert message_tokens(messages) <= budget
    roles = [m.role for m in result]
    assert all(a != b for a, b in itertools.pairwise(roles))  # turns still alternate


def test_the_newest_user_request_survives_even_when_it_follows_a_long_answer() -> None:
    messages = [Message.user(TASK), Message("assistant", [TextBlock("x" * 20_000)]), Message.user("SECOND: rename foo")]
    for summarise in (lambda _: "summary", None):
        done = compact(messages, 1000, summarise)
        assert done is not None
        texts = [b.text for m in done.messages for b in m.content if isinstance(b, TextBlock)]
        assert texts[0] == TASK and texts[-1] == "SECOND: rename foo"


def make_room(messages: list[Message], budget: int, summarise: Summarise) -> Compaction | None:
    """What the loop does: clear old results first (no model call), else compact."""
    return clear_results(messages, budget) or compact(messages, budget, summarise)


def test_clearing_makes_room_without_a_model_call_and_keeps_pairs_task_and_the_newest_result() -> None:
    messages = conversation([2300] * 8)
    done = clear_results(messages, 2000)
    assert done is not None and done.method == "clear" and done.removed > 0
    result = done.messages
    assert len(result) == len(messages) and result[0] is messages[0]  # the task, untouched
    assert_pairs_whole(result)
    assert result[-2:] == messages[-2:]  # the newest call and its unread result
    contents = [b.content for m in result for b in m.content if isinstance(b, ToolResultBlock)]
    assert contents[: done.removed] == [CLEARED_NOTE] * done.removed  # oldest first
    assert all(c == "x" * 2300 for c in contents[done.removed :])
    texts = [m.text for m in result if m.role == "assistant"]
    assert texts == [m.text for m in messages if m.role == "assistant"]  # the model's own words stay
    assert message_tokens(result) + message_tokens(result[-2:]) <= 2000  # a next turn fits


def test_clearing_gives_way_to_a_compaction_when_it_cannot_free_a_turn() -> None:
    talk = [Message.user(TASK)]
    for i in range(12):  # long answers, short results: nothing worth clearing
        talk += [Message("assistant", [TextBlock("y" * 2000), ToolCall(f"c{i}", "Read", {})])]
        talk += [Message("user", [ToolResultBlock(f"c{i}", "ok")])]
    assert clear_results(talk, 2000) is None
    done = make_room(talk, 2000, lambda _: "earlier work")
    assert done is not None and done.method == "summary"


def test_a_cleared_result_is_not_cleared_again_and_small_results_stay() -> None:
    messages = conversation([2300, 100, 2300, 2300, 2300])
    messages[2] = Message("user", [ToolResultBlock("c0_0", CLEARED_NOTE)])  # cleared by an earlier pass
    done = clear_results(messages, 2000)
    assert done is not None
    contents = [b.content for m in done.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert contents[:2] == [CLEARED_NOTE, "x" * 100]  # too small to be worth a change to the cached prefix
    assert done.removed == contents.count(CLEARED_NOTE) - 1  # only newly cleared ones count
    assert done.messages[2] is messages[2]  # the cached prefix up to the first newly cleared result stays


def test_a_small_window_asks_for_a_summary_every_nine_turns_not_every_third() -> None:
    """200 turns of 2 kB reads in a 4k window, sized as `bench/bench_longrun.py compaction` measures them.

    A 4k window must make room every ~3 turns whatever the method (context.py's docstring has the
    arithmetic). A summary is an extra model call, seconds on a local model; clearing is none, and
    it edits only the tail of the conversation, so a server's cached prefix up to there stays good.
    """
    window, fixed = 4096, 1120  # system prompt and tool schemas
    limit = int(window * 0.8)
    messages = [Message.user(TASK + " " + "context " * 80)]
    passes: list[tuple[str, float]] = []
    for i in range(200):
        messages += turn(i, 2300)
        if fixed + message_tokens(messages) > limit:
            done = make_room(messages, limit - fixed, lambda _: "Read f0..fN; nothing changed yet.")
            assert done is not None and done.method in ("clear", "summary")
            if done.method == "clear":
                assert done.messages[0] is messages[0]  # the head and the cache before the first cleared result stay
            messages = done.messages
            passes.append((done.method, (fixed + message_tokens(messages)) / window))
            assert messages[-1].content[0] == ToolResultBlock(f"c{i}_0", "x" * 2300)  # the unread result stays
            assert_pairs_whole(messages)
    summaries = [after for method, after in passes if method == "summary"]
    clearings = [after for method, after in passes if method == "clear"]
    assert len(summaries) <= 200 // 8, f"{len(summaries)} summaries in 200 turns"
    assert len(clearings) >= 2 * len(summaries)
    assert max(summaries) <= 0.5, f"the window is {max(summaries):.0%} full after a summary"
    assert max(clearings) <= 0.65, f"the window is {max(clearings):.0%} full after a clearing"


def test_a_result_larger_than_the_budget_is_cut_to_half_the_window_not_to_the_brim() -> None:
    """A newest result too large for the whole budget is truncated with a note. Cut only to the
    brim, the very next turn would compact again (an extra model call per turn); cut to the share
    a compaction leaves, normal turns pass before the next one."""
    window, fixed = 4096, 900
    limit = int(window * 0.8)
    messages = [Message.user(TASK)]
    compactions, turns_between = 0, []
    since = 0
    for i in range(12):
        messages += turn(i, 40_000 if i == 3 else 2300)
        since += 1
        if fixed + message_tokens(messages) > limit:
            done = compact(messages, limit - fixed, lambda _: "Read f0..fN; nothing changed yet.")
            assert done is not None
            messages = done.messages
            compactions += 1
            turns_between.append(since)
            since = 0
            assert (fixed + message_tokens(messages)) / window <= 0.5
            assert_pairs_whole(messages)
            if i == 3:
                cut = messages[-1].content[0]
                assert isinstance(cut, ToolResultBlock) and cut.tool_call_id == "c3_0"
                assert "characters cut to fit the context window" in cut.content
    assert turns_between[1:] and min(turns_between[1:]) >= 3, turns_between
