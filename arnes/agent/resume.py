"""Resume a session from its trace: the same messages, the same id, the same trace file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from arnes.errors import ConfigError
from arnes.host.files import HostFiles, Refused
from arnes.messages import Message, ToolResultBlock
from arnes.nesting import json_loads

UNRECORDED = "No result was recorded for this call (the session stopped); check before relying on it."


TRACES = ".arnes/traces"


def traces_dir(workspace: Path) -> Path:
    return workspace / TRACES


def find_trace(files: HostFiles, session: str | None, refused: Callable[[Path], str | None] = lambda _: None) -> Path:
    """The session's trace (or the newest that `refused` lets through): a regular file in a real
    .arnes/traces, never a link."""
    folder = traces_dir(files.root)
    traces = files.entries(TRACES, ".jsonl")
    if session:
        if not any(name == f"{session}.jsonl" for name, _ in traces):
            raise ConfigError(f"no session {session} in {folder}")
        if (why := refused(folder / f"{session}.jsonl")) is not None:
            raise ConfigError(why)
        return folder / f"{session}.jsonl"
    if not traces:
        raise ConfigError(f"no session to resume in {folder}")
    for name, _ in sorted(traces, key=lambda entry: entry[1].st_mtime_ns, reverse=True):
        if refused(folder / name) is None:
            return folder / name
    newest = folder / max(traces, key=lambda entry: entry[1].st_mtime_ns)[0]
    raise ConfigError(refused(newest) or f"no session to resume in {folder}")


def read_history(files: HostFiles, trace: Path, at: str | None = None, drops: str | None = None) -> list[Message]:
    """The conversation in a trace under the workspace, read through no link and past the rules;
    with `at`, up to and including that message (`--resume-session-at`), checked against `drops`."""
    try:
        text = files.read_text(str(trace.relative_to(files.root)))
    except (Refused, ValueError) as exc:
        raise ConfigError(f"cannot resume from {trace}: {exc}") from exc
    if text is None:
        raise ConfigError(f"cannot resume from {trace}: it is gone")
    if drops is not None:
        check_drops(text, at, drops)
    return parse_history(text, at=at)


def load_history(trace: Path) -> list[Message]:
    return parse_history(trace.read_text(encoding="utf-8"))


def parse_history(text: str, before: int | None = None, at: str | None = None) -> list[Message]:
    """Replay the top-level `message` and `compaction` events into the conversation; a `rewind` of
    the conversation goes back to what it was at its `turn` mark, a fresh draw (`steered`,
    action `redraw`) to its first `keep` messages, a `resumed_at` to what it was after that
    message. With `before`, the conversation as it stood when point `before` began; with `at`, as
    it stood after the message named `at`."""
    messages: list[Message] = []
    marks: dict[int, list[Message]] = {}
    named: dict[str, list[Message]] = {}  # message uuid -> the conversation just after it
    redrawn = False
    for line in text.split("\n"):  # not splitlines(): a U+2028 inside a JSON string is not a line end
        if not line.strip():
            continue
        try:
            event = json_loads(line)
            if not isinstance(event, dict) or "parent" in event:
                continue  # not an event, or a sub-agent's: not part of this conversation
            if event.get("event") == "message":
                message = Message.from_json({"role": event["role"], "content": event["content"]})
                if messages and messages[-1].role == message.role == "user" and not redrawn:  # a task added to results
                    messages[-1] = Message("user", [*messages[-1].content, *message.content])
                else:
                    messages.append(message)
                redrawn = False
                if isinstance(event.get("uuid"), str):
                    named[event["uuid"]] = list(messages)
                    if event["uuid"] == at:
                        return _repair(messages)
            elif event.get("event") == "resumed_at" and event.get("at") in named:
                messages = list(named[event["at"]])
            elif event.get("event") == "compaction":
                messages = [Message.from_json(m) for m in event["messages"]]
            elif event.get("event") == "turn" and isinstance(event.get("n"), int):
                if event["n"] == before:
                    return _repair(messages)
                marks[event["n"]] = list(messages)
            elif event.get("event") == "steered" and event.get("action") == "redraw":
                messages = messages[: int(event["keep"])]  # a fresh draw: back to before the first attempt
                redrawn = True  # a message after it stands alone, as in the loop (Redraw.then)
            elif event.get("event") == "rewind" and event.get("what") in ("both", "conversation"):
                messages = list(marks.get(event["to"], messages))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue  # a line cut by a crash or edited by hand: what came before is still good
    if before is not None:
        raise ConfigError(f"the trace has no mark for checkpoint {before}")
    if at is not None:
        raise ConfigError(
            f"--resume-session-at {at}: the session has no message with that uuid (it takes the uuid of a "
            "message as stream-json showed it, or of a user message you sent with one)"
        )
    return _repair(messages)


DROPS_REFUSED = "Resume rejected by --resume-drops-turn:"


def check_drops(text: str, at: str | None, drops: str) -> None:
    """Claude Code's guard on a cut: everything after message `at` is the turn of the user
    message `drops`, and nothing else (a tool result of the kept turn, a later message). The
    refusal starts with the words the Agent SDK tells callers to match."""
    if at is None:
        raise ConfigError("--resume-drops-turn goes with --resume-session-at: it names the turn that cut drops")
    after: list[tuple[str, str]] = []  # (event, uuid or kind) after the cut, in order
    cut = False
    for line in text.split("\n"):
        try:
            event = json_loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict) or "parent" in event:
            continue
        if event.get("event") == "message" and event.get("uuid") == at:
            cut, after = True, []
        elif cut and event.get("event") == "message":
            after.append(("message", str(event.get("uuid", ""))))
        elif cut and event.get("event") == "turn" and event.get("kind") == "turn":
            after.append(("turn", ""))
    messages = [name for kind, name in after if kind == "message"]
    turns = sum(1 for kind, _ in after if kind == "turn")
    if not messages:
        return  # nothing after the cut: nothing dropped
    if messages[0] != drops:
        raise ConfigError(
            f"{DROPS_REFUSED} message {messages[0]} comes after {at} and is not the user message {drops} "
            "(the cut would drop more than that turn); resume without --resume-session-at, or cut at the "
            "last message of the turn you keep"
        )
    if turns > 1:
        raise ConfigError(f"{DROPS_REFUSED} more turns than {drops}'s come after {at}")


def _repair(messages: list[Message]) -> list[Message]:
    """A run cut mid-turn (a crash, a kill) may leave calls without results, anywhere: answer
    each, so every call has its pair and the provider accepts the conversation."""
    out: list[Message] = []
    for i, message in enumerate(messages):
        out.append(message)
        if message.role != "assistant" or not message.tool_calls:
            continue
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = (
            {b.tool_call_id for b in following.content if isinstance(b, ToolResultBlock)}
            if following is not None and following.role == "user"
            else set()
        )
        missing = [ToolResultBlock(c.id, UNRECORDED, True) for c in message.tool_calls if c.id not in answered]
        if not missing:
            continue
        if following is not None and following.role == "user":
            messages[i + 1] = Message("user", [*missing, *following.content])
        else:
            out.append(Message("user", list(missing)))
    return out
