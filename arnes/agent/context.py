"""Keep the context window healthy: measure it, and make room before a request would overflow it.

Room is made in two steps, the cheap one first.

1. **Clearing** (no model call): the content of old tool results, oldest first, becomes a one-line
   note naming the call, until the conversation is back near half the budget. Every call keeps its
   result block (pairs are never split), the model's own words stay, and the newest results, which
   it has not read yet, are never cleared. The change is at the tail of what a local server has
   cached, so its prefix cache re-reads a few hundred tokens, not the whole window.
2. **Compaction**, when clearing cannot free enough: the original task, the most recent turns and
   their pairs stay; older turns become a summary the model writes in a separate call without
   tools (an extra request, seconds on a local model, and with one server slot it evicts the
   session's cached prefix); when it cannot, whole old pairs are dropped instead.

How often a small window must make room is set by its geometry, not by this code. After a pass
the fixed part F (system prompt and tool schemas), the head H (task, session context, summary) and
the newest unit U (the call and its unread result) stay; each turn adds one unit, and the next pass
comes when the request would pass THRESHOLD of the window W. So at most n = (THRESHOLD*W - F - H)
/ U requests fit between two passes. For W = 4096, F ~ 1,120, H ~ 170 and a 2 kB read U ~ 650
tokens: n = (3,276 - 1,290) / 650 = 3.05. Five turns would need F + H + 5U ~ 4,540 tokens, more
than the whole window, for any trigger. What clearing changes is the price of a pass: a cleared
pair still costs ~100 tokens (the call and the note) instead of ~650, so about three clearings fit
before a summary is needed, and a 4k window writes a summary every ~9-11 turns instead of every 3
(`bench/bench_longrun.py compaction`, numbers in bench/README.md).
A newest result too large for the budget on its own is cut (with a note) to the share a compaction
keeps, not to the brim, or every following turn would compact again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arnes.messages import Block, Message, TextBlock, ToolResultBlock, ToolSpec, estimate_tokens

THRESHOLD = 0.8  # compact before a request passes this share of the window
RECENT_SHARE = 0.35  # how much of the window the kept recent turns may fill
SUMMARY_PROMPT = (
    "You are summarising the earlier part of a coding session so the work can go on in a smaller "
    "context. Write a short summary (at most 200 words): what was asked, what was found (files, "
    "functions, facts), what was changed, what failed, and what remains. Plain text, no preamble."
)
SUMMARY_HEADER = "[Summary of earlier turns]"  # short: a 4k window compacts every 3 turns or every 2 by a few tokens
DROPPED_NOTE = "[{n} earlier messages were dropped to fit the context window; re-read files if you need them]"
CLEARED_NOTE = "[result cleared to save room; make the call again to see it]"  # the call is just above it
CLEAR_MIN_CHARS = 400  # a shorter result is not worth a change to the conversation's cached prefix

Summarise = Callable[[str], str]


def message_tokens(messages: Sequence[Message]) -> int:
    """Each message's estimate is kept on it: this is a sum, not a re-encoding of the conversation."""
    return sum(m.tokens for m in messages)


def fixed_tokens(system: str, tools: Sequence[ToolSpec]) -> int:
    """What every request pays before the conversation: the system prompt and the tool schemas."""
    schemas = json.dumps(
        [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    )
    return estimate_tokens(system + schemas)


@dataclass
class Compaction:
    messages: list[Message]
    method: str  # "clear" | "summary" | "drop" | "trim"
    removed: int  # results cleared, or messages replaced or dropped


def units(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages so a tool call and its results always travel together.

    An assistant message is joined by the user message that answers its tool calls.
    """
    groups: list[list[Message]] = []
    for message in messages:
        answers_calls = (
            message.role == "user"
            and groups
            and groups[-1][-1].role == "assistant"
            and groups[-1][-1].tool_calls
            and any(isinstance(b, ToolResultBlock) for b in message.content)
        )
        if answers_calls:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def compact(
    messages: list[Message], budget: int, summarise: Summarise | None, *, force: bool = False
) -> Compaction | None:
    """Shrink `messages` (task first) to fit `budget` tokens; None when there is nothing to do."""
    if not messages or (not force and message_tokens(messages) <= budget):
        return None
    task, rest = messages[0], units(messages[1:])
    if not rest:
        return None
    recent_budget = max(1, int(budget * RECENT_SHARE / THRESHOLD))
    keep: list[list[Message]] = []
    used = 0
    for unit in reversed(rest):
        size = message_tokens(unit)
        if keep and used + size > recent_budget:
            break
        keep.insert(0, unit)
        used += size
    # After the task an assistant turn comes next: leading user messages move into the head. Their
    # words stay (a newer request from the user must never be lost); results of calls that are
    # being summarised go with them.
    carried: list[TextBlock] = []
    while keep and keep[0][0].role != "assistant":
        carried += [b for m in keep.pop(0) for b in m.content if isinstance(b, TextBlock)]
    old = rest[: len(rest) - len(keep)]
    removed = sum(len(u) for u in old)
    if removed == 0 and not force:
        return _trim_last(messages, budget, recent_budget)
    kept = [m for unit in keep for m in unit]
    summary = _summary(old, summarise) if old and summarise else None
    method = "summary" if summary else "drop"
    note = f"{SUMMARY_HEADER}\n{summary}" if summary else DROPPED_NOTE.format(n=removed)
    head = Message("user", [*_task_blocks(task), TextBlock(note), *carried])
    result = [head, *kept]
    if message_tokens(result) > budget:  # the newest result alone is too large: cut it to the share kept
        trimmed = _trim_last(result, budget, recent_budget)
        result = trimmed.messages if trimmed else result
    return Compaction(result, method, removed)


def clear_results(messages: list[Message], budget: int) -> Compaction | None:
    """Make room without a model call: clear old tool results, oldest first, down to the share a
    compaction keeps. None when that leaves no room for one more turn like the newest, so that a
    compaction is needed instead.

    The task and the newest unit (its results are unread) are never touched; each cleared result
    keeps its block and its call id, so the pair stays whole.
    """
    target = max(1, int(budget * RECENT_SHARE / THRESHOLD))
    groups = units(messages[1:]) if messages else []
    if len(groups) < 2:
        return None
    out = list(messages)
    size, cleared = message_tokens(out), 0
    last = len(messages) - len(groups[-1])  # the newest unit starts here
    for i in range(1, last):
        if size <= target:
            break
        message = out[i]
        if message.role != "user" or not any(_clearable(b) for b in message.content):
            continue
        blocks: list[Block] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and _clearable(block):
                block = ToolResultBlock(block.tool_call_id, CLEARED_NOTE, block.is_error)
                cleared += 1
            blocks.append(block)
        out[i] = Message(message.role, blocks)
        size += out[i].tokens - message.tokens
    if not cleared or size + message_tokens(groups[-1]) > budget:  # not even one more turn like the last
        return None
    return Compaction(out, "clear", cleared)


def _clearable(block: Block) -> bool:
    return (
        isinstance(block, ToolResultBlock) and len(block.content) >= CLEAR_MIN_CHARS and block.content != CLEARED_NOTE
    )


def _task_blocks(task: Message) -> list[TextBlock]:
    """The original task, without any earlier summary (a new one replaces it)."""
    blocks = [b for b in task.content if isinstance(b, TextBlock)]
    return [b for b in blocks if not b.text.startswith((SUMMARY_HEADER, "[")) or b is blocks[0]]


def _summary(old: list[list[Message]], summarise: Summarise) -> str | None:
    transcript = render([m for unit in old for m in unit])
    try:
        text = summarise(transcript).strip()
    except Exception:  # any failure of the summary call falls back to dropping pairs
        return None
    return text or None


def _trim_last(messages: list[Message], budget: int, target: int) -> Compaction | None:
    """Last resort when the newest turns alone overflow `budget`: cut long tool results down to
    `target` (what a compaction keeps), keep the pairs. Cut only to the brim, the next turn would
    compact again, an extra model call per turn."""
    if message_tokens(messages) <= budget:
        return None
    result = messages
    for _ in range(10):
        over = message_tokens(result) - target
        if over <= 0:
            break
        shorter = _cut_results(result, over * 4 + 200)
        if shorter == result:
            break  # nothing left to cut
        result = shorter
    return Compaction(result, "trim", 0)


def _cut_results(messages: list[Message], chars: int) -> list[Message]:
    """Remove about `chars` characters from the newest long tool results."""
    out: list[Message] = []
    for message in reversed(messages):
        blocks = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and chars > 0 and len(block.content) > 300:
                cut = min(chars, len(block.content) - 200)
                chars -= cut
                kept = block.content[: len(block.content) - cut].rsplit("\n... [", 1)[0]
                note = f"\n... [{len(block.content) - len(kept)} characters cut to fit the context window]"
                block = ToolResultBlock(block.tool_call_id, kept + note, block.is_error)
            blocks.append(block)
        out.insert(0, Message(message.role, blocks))
    return out


def render(messages: Sequence[Message], cap: int = 1500) -> str:
    """A plain transcript of turns for the summary call; long outputs are clipped."""
    lines = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                lines.append(f"{message.role}: {block.text[:cap]}")
            elif isinstance(block, ToolResultBlock):
                lines.append(f"result{' (error)' if block.is_error else ''}: {block.content[:cap]}")
            else:
                lines.append(f"call: {block.name} {json.dumps(block.input)[:cap]}")  # type: ignore[union-attr]
    return "\n".join(lines)
