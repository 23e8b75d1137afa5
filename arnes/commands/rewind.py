"""`arnes rewind` and the prompt's `/rewind`: a session back to how it was before one of its points.

A point is a user turn (or a rewind, or a verify round); rewinding to N restores the files the
session changed from N on (any tool or command) and/or the conversation as it stood when N began.
The diff is shown before anything is written; a file changed outside the session since is never
overwritten silently (headless: exit 2 unless --force). A rewind is a point itself: undo it by
rewinding to its number.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arnes.agent.events import Rewound, TurnStart
from arnes.cliargs import parse_subcommand, workspace_of
from arnes.errors import EXIT_FAIL, EXIT_OK, EXIT_USAGE, ConfigError
from arnes.rewind.apply import Applied, apply
from arnes.rewind.checkpoints import Checkpoints, first_line
from arnes.rewind.journal import Point
from arnes.rewind.plan import NoSuchPoint, Plan, line_counts, plan, render_diff
from arnes.rewind.store import Store, store_for
from arnes.safe import visible

if TYPE_CHECKING:
    from arnes.agent.loop import Agent
    from arnes.session import Session

WHAT = {"both": "code and conversation", "code": "code only", "conversation": "conversation only"}


@dataclass
class Prepared:
    to: int
    what: str  # both | code | conversation
    plan: Plan | None  # None: the conversation alone

    @property
    def conflicts(self) -> list[str]:
        return self.plan.conflicts if self.plan else []


def prepare(checkpoints: Checkpoints, to: int, what: str) -> Prepared:
    """What rewinding to `to` would do, worked out from a fresh scan; nothing is written."""
    journal = checkpoints.journal()
    points = journal.points
    if not any(p.n == to for p in points):
        known = ", ".join(str(p.n) for p in points) or "none yet"
        raise NoSuchPoint(f"no checkpoint {to} in session {checkpoints.session} (checkpoints: {known})")
    if what == "conversation":
        return Prepared(to, what, None)
    current = checkpoints.current()
    if current is None:
        raise ConfigError(checkpoints.problem or "the workspace could not be scanned")
    return Prepared(to, what, plan(journal, to, current, checkpoints.store))


def carry_out(
    checkpoints: Checkpoints,
    prepared: Prepared,
    mark: Callable[[str, str, dict[str, Any]], int],
    emit: Callable[[Rewound], None],
    conversation: Callable[[int], None] | None,
) -> Rewound:
    """Apply a prepared rewind as a point of its own (so it can be undone), then say so."""
    label = f"rewind to {prepared.to} ({WHAT[prepared.what]})"
    n = mark("rewind", label, {"to": prepared.to, "what": prepared.what})
    applied = apply(prepared.plan, checkpoints.workspace, checkpoints.store) if prepared.plan else Applied()
    if conversation is not None and prepared.what != "code":
        conversation(prepared.to)
    checkpoints.end(restored=applied.done)
    event = Rewound(n, prepared.to, prepared.what, applied.done, applied.failed)
    emit(event)
    return event


def diff_text(prepared: Prepared, store: Store) -> str:
    if prepared.plan is None:
        return ""
    return "".join(diff for _, diff in render_diff(prepared.plan, store))


def point_lines(points: list[Point], store: Store) -> list[str]:
    """One line per point: number, time, kind, what it changed, the prompt's first line."""
    lines = []
    for point in points:
        changed = point.changed()
        added, removed = line_counts(point, store)
        counts = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
        if added or removed:
            counts += f" +{added} -{removed}"
        clock = point.time[11:19] if len(point.time) >= 19 else point.time
        label = visible(first_line(point.label), newlines=False)
        lines.append(f"{point.n:>3}  {clock:<8}  {point.kind:<6}  {counts:<18}  {label}")
    return lines


# -- the command line ------------------------------------------------------------------------------
def run(args: argparse.Namespace, rest: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="arnes rewind",
        description="Take the workspace (and/or the conversation) back to how it was before checkpoint N "
        "of a session. Without N: the checkpoints.",
    )
    parser.add_argument("n", nargs="?", type=int, help="the checkpoint (see --list)")
    parser.add_argument("--list", action="store_true", help="the session's checkpoints")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--code-only", action="store_true", help="the files only; the conversation stays")
    only.add_argument("--conversation-only", action="store_true", help="the conversation only; the files stay")
    parser.add_argument("--session", help="the session (default: the latest here)")
    parser.add_argument("--force", action="store_true", help="overwrite files changed outside arnes since")
    parser.add_argument("--dry-run", action="store_true", help="show what would change; change nothing")
    opts = parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    store = store_for(ws)
    session = opts.session or next(reversed(store.sessions()), None)
    if session is None:
        raise ConfigError(f"no checkpoints for {ws} yet: arnes makes one before every user turn")
    if session.replace("/", "_") not in store.sessions():
        raise ConfigError(f"no checkpoints of session {session} for {ws} (arnes rewind --list shows the latest)")
    checkpoints = Checkpoints(ws, session, store)
    out = Output(args.output_format, session)
    if opts.list or opts.n is None:
        return out.listing(checkpoints.points(), store)
    what = "code" if opts.code_only else "conversation" if opts.conversation_only else "both"
    try:
        prepared = prepare(checkpoints, opts.n, what)
    except NoSuchPoint as exc:
        raise ConfigError(str(exc)) from exc
    out.diff(diff_text(prepared, store))
    if prepared.plan is not None and prepared.plan.missing:
        out.note(f"not kept, so not restored: {', '.join(prepared.plan.missing)}")
    if prepared.conflicts and not opts.force:
        return out.refused(prepared)
    if opts.dry_run:
        return out.done(None, prepared)
    trace = _trace(ws, session) if what != "code" else None
    with _TraceWriter(ws, trace) as writer:

        def mark(kind: str, label: str, extra: dict[str, Any]) -> int:
            n = checkpoints.begin(kind, label, **extra)
            writer.write(TurnStart(n, kind, label))
            return n

        event = carry_out(checkpoints, prepared, mark, writer.write, None)
    return out.done(event, prepared)


def _trace(ws: Path, session: str) -> Path:
    """The session's trace, as arnes wrote it: a conversation rewind is recorded there."""
    from arnes.agent.resume import find_trace
    from arnes.agent.sessions import refusal
    from arnes.host.files import HostFiles

    return find_trace(HostFiles(ws), session, lambda path: refusal(ws, path))


class _TraceWriter:
    """Appends the rewind's events to the session's trace (and records its new hash for -c)."""

    def __init__(self, ws: Path, path: Path | None):
        self.ws, self.path = ws, path
        self._trace: Any = None

    def __enter__(self) -> _TraceWriter:
        if self.path is not None:
            from arnes.agent.trace import JsonlTrace
            from arnes.host.files import open_log

            self._trace = JsonlTrace(self.path, open_log(self.path, self.ws))
        return self

    def write(self, event: TurnStart | Rewound) -> None:
        if self._trace is not None:
            self._trace(event)

    def __exit__(self, *exc: object) -> None:
        if self._trace is not None and self.path is not None:
            from arnes.agent.sessions import remember

            self._trace.close()
            remember(self.ws, self.path)


class Output:
    """What `arnes rewind` prints, in the global --output-format (text, json, stream-json)."""

    def __init__(self, output_format: str, session: str):
        self.format = output_format
        self.session = session

    def listing(self, points: list[Point], store: Store) -> int:
        if self.format != "text":
            rows = [
                {"n": p.n, "kind": p.kind, "time": p.time, "label": p.label, "files": p.changed(), "to": p.to}
                for p in points
            ]
            self._json({"session_id": self.session, "checkpoints": rows}, "checkpoints")
            return EXIT_OK
        print(f"session {self.session}: rewind N restores the state before checkpoint N")
        for line in point_lines(points, store) or ["  (no checkpoints yet)"]:
            print(line)
        return EXIT_OK

    def diff(self, text: str) -> None:
        if self.format == "text" and text:
            print(visible(text), end="")

    def note(self, text: str) -> None:
        print(f"arnes rewind: {visible(text)}", file=sys.stderr)

    def refused(self, prepared: Prepared) -> int:
        names = ", ".join(prepared.conflicts)
        why = (
            f"not rewound: changed outside arnes since checkpoint {prepared.to}: {names} "
            "(look at them; --force overwrites them)"
        )
        if self.format == "text":
            print(f"arnes rewind: {visible(why)}", file=sys.stderr)
        else:
            self._json({"rewound": False, "to": prepared.to, "conflicts": prepared.conflicts, "error": why}, "rewind")
        return EXIT_USAGE

    def done(self, event: Rewound | None, prepared: Prepared) -> int:
        files = event.files if event else (prepared.plan.paths if prepared.plan else [])
        failed = event.failed if event else []
        if self.format != "text":
            self._json(
                {
                    "rewound": event is not None,
                    "n": event.n if event else None,
                    "to": prepared.to,
                    "what": prepared.what,
                    "files": files,
                    "failed": failed,
                    "missing": prepared.plan.missing if prepared.plan else [],
                },
                "rewind",
            )
        elif event is None:
            print(f"dry run: {len(files)} file(s) would change; nothing was written")
        else:
            shown = visible(", ".join(files)) or "no files"
            print(f"rewound to before checkpoint {prepared.to} ({WHAT[prepared.what]}): {shown}")
            print(f"this rewind is checkpoint {event.n}: `arnes rewind {event.n}` takes it back")
        for problem in failed:
            print(f"arnes rewind: not restored: {visible(problem)}", file=sys.stderr)
        return EXIT_FAIL if failed else EXIT_OK

    def _json(self, data: dict[str, Any], subtype: str) -> None:
        if self.format == "stream-json":
            print(json.dumps({"type": "system", "subtype": subtype, "session_id": self.session, **data}))
        else:
            print(json.dumps(data, indent=2))


# -- the interactive prompt ------------------------------------------------------------------------
def at_the_prompt(
    session: Session, agent: Agent, say: Callable[[str], None], ask: Callable[[str], str], rest: str
) -> None:
    """`/rewind [N]` (and Esc Esc): pick a point, then what to take back; the diff before it is applied."""
    checkpoints = session.checkpoints
    if checkpoints is None:
        say("rewind is off in this session (rewind.enabled in your settings, or plan mode)")
        return
    points = checkpoints.points()
    if not points:
        say("no checkpoints yet: one is made before every message you send")
        return
    if not rest:
        say("checkpoints (rewinding to N restores the state before N):")
        for line in point_lines(points, checkpoints.store):
            say(line)
        rest = ask("rewind to which checkpoint? (number; Enter cancels) ").strip()
        if not rest:
            return
    if not rest.isdigit():
        say(f"not a checkpoint number: {visible(rest)}")
        return
    choice = ask("1) code and conversation  2) code only  3) conversation only  [1] ").strip() or "1"
    what = {"1": "both", "2": "code", "3": "conversation"}.get(choice)
    if what is None:
        say("cancelled")
        return
    _rewind_here(session, agent, say, ask, int(rest), what, confirm=True)


def undo_at_the_prompt(session: Session, agent: Agent, say: Callable[[str], None], ask: Callable[[str], str]) -> None:
    """`/undo`: the code of the last user turn that changed files, taken back."""
    checkpoints = session.checkpoints
    turns = [p for p in checkpoints.points() if p.kind == "turn" and p.changed()] if checkpoints else []
    if not turns:
        say("nothing to undo" if checkpoints else "rewind is off in this session, so /undo is too")
        return
    _rewind_here(session, agent, say, ask, turns[-1].n, "code", confirm=False)


def _rewind_here(
    session: Session,
    agent: Agent,
    say: Callable[[str], None],
    ask: Callable[[str], str],
    to: int,
    what: str,
    confirm: bool,
) -> None:
    from arnes.agent.resume import parse_history

    checkpoints = session.checkpoints
    assert checkpoints is not None
    try:
        prepared = prepare(checkpoints, to, what)
    except (NoSuchPoint, ConfigError) as exc:
        say(str(exc))
        return
    text = diff_text(prepared, checkpoints.store)
    if text:
        say(text.rstrip("\n"))
    elif what != "conversation":
        say("no file differs from that checkpoint")
    if prepared.plan is not None and prepared.plan.missing:
        say(f"not kept, so not restored: {', '.join(prepared.plan.missing)}")
    if prepared.conflicts:
        say(f"changed outside arnes since checkpoint {to}: {', '.join(prepared.conflicts)}")
        if ask("overwrite them too? [y/N] ").strip().lower() not in ("y", "yes"):
            say("not rewound")
            return
    elif confirm and ask(f"rewind to before {to} ({WHAT[what]})? [y/N] ").strip().lower() not in ("y", "yes"):
        say("not rewound")
        return
    trace = session.trace_path

    def conversation(n: int) -> None:
        if trace is None:
            return
        agent.rewind_conversation(parse_history(trace.read_text(encoding="utf-8"), before=n))

    event = carry_out(
        checkpoints,
        prepared,
        lambda kind, label, extra: agent.mark(kind, label, **extra),
        session.bus.emit,
        conversation,
    )
    files = ", ".join(event.files) or "no files"
    say(f"restored: {files} (the state before {to}, {WHAT[what]}; /rewind {event.n} takes this back)")
    for problem in event.failed:
        say(f"not restored: {problem}")
