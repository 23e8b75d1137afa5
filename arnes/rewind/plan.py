"""What a rewind to point N would change, worked out before anything is touched.

The files to put back are those the session changed from point N on (each point's "before"
against its "after": the file tools, shell commands, the verify command alike). Each goes back to
what it was before point N. A file also changed *outside* the session since (between two turns,
or after the last one: the user's editor) is a conflict: named, never overwritten silently.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from arnes.rewind.journal import Journal, Point, same
from arnes.rewind.scan import Entry, Manifest
from arnes.rewind.store import Store


class NoSuchPoint(ValueError):
    pass


@dataclass(frozen=True)
class Change:
    rel: str
    target: Entry | None  # None: the path goes away
    current: Entry | None  # None: it is not there now

    @property
    def verb(self) -> str:
        if self.target is None:
            return "remove"
        if self.current is None:
            return "restore"
        return "put back"


@dataclass
class Plan:
    to: int
    changes: list[Change] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # changed outside the session since
    missing: list[str] = field(default_factory=list)  # their content was not kept (too big)

    @property
    def paths(self) -> list[str]:
        return [c.rel for c in self.changes]


def plan(journal: Journal, to: int, current: Manifest, store: Store) -> Plan:
    points = journal.points
    index = next((i for i, p in enumerate(points) if p.n == to), None)
    if index is None:
        known = ", ".join(str(p.n) for p in points) or "none"
        raise NoSuchPoint(f"no checkpoint {to} in this session (checkpoints: {known})")
    later = points[index:]
    touched: set[str] = set()
    outside: set[str] = set()
    since_end = {p for p in journal.final.keys() | current.keys() if not same(journal.final.get(p), current.get(p))}
    for i, point in enumerate(later):
        touched.update(point.changed())
        following = later[i + 1].outside() if i + 1 < len(later) else since_end
        if point.jobs:  # a background shell of the session still ran: what changed next may be its doing
            touched |= following
        if i > 0:
            outside |= point.outside()
    if later[-1].own is None:  # the session stopped inside its last point: its changes and any since are one
        touched |= since_end
    outside |= since_end
    target = journal.state_before(to)
    result = Plan(to)
    for rel in sorted(touched):
        want, now = target.get(rel), current.get(rel)
        if same(want, now):
            continue
        if rel in outside:
            result.conflicts.append(rel)
        if want is not None and want.kind == "f" and (not want.ref or not store.has(want.ref)):
            result.missing.append(rel)
            continue
        result.changes.append(Change(rel, want, now))
    return result


MOST_DIFF_BYTES = 1 << 20


def render_diff(plan_: Plan, store: Store) -> list[tuple[str, str]]:
    """(path, unified diff from now to the checkpoint) for each change; binary files in a line."""
    return [(change.rel, _diff_one(change, store)) for change in plan_.changes]


def _text(entry: Entry | None, store: Store) -> list[str] | str:
    """The entry's lines, or a one-line description when it is not text."""
    if entry is None:
        return []
    if entry.kind == "d":
        return "(folder)"
    if entry.kind == "l":
        return f"(link to {entry.ref})"
    if not entry.ref or entry.size > MOST_DIFF_BYTES:
        return f"({entry.size} bytes)"
    try:
        data = store.get(entry.ref)
    except KeyError:
        return "(content not kept)"
    if b"\0" in data[:8192]:
        return f"(binary, {len(data)} bytes)"
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"(binary, {len(data)} bytes)"


def _diff_one(change: Change, store: Store) -> str:
    now, then = _text(change.current, store), _text(change.target, store)
    if isinstance(now, str) or isinstance(then, str):
        left = now if isinstance(now, str) else ("(absent)" if change.current is None else "(text)")
        right = then if isinstance(then, str) else ("(absent)" if change.target is None else "(text)")
        return f"{change.rel}: {left} -> {right}\n"
    lines = difflib.unified_diff(now, then, f"a/{change.rel} (now)", f"b/{change.rel} (checkpoint)")
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text or f"{change.rel}: mode {change.current.mode if change.current else 0:o} -> " + (
        f"{change.target.mode:o}\n" if change.target else "absent\n"
    )


def line_counts(point: Point, store: Store, most_files: int = 50) -> tuple[int, int]:
    """Lines added and removed by a point (text files, up to `most_files` of them)."""
    own = point.own or {}
    added = removed = 0
    for rel in point.changed()[:most_files]:
        before, after = _text(own[rel][0], store), _text(own[rel][1], store)
        if isinstance(before, str) or isinstance(after, str):
            continue
        for line in difflib.unified_diff(before, after, n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return added, removed
