"""What a rewind to point N would change, worked out before anything is touched.

The files to put back are those the session changed from point N on (each point's "before"
against its "after": the file tools, shell commands, the verify command alike). Each goes back to
what it was before point N. A file also changed *outside* the session since (between two turns,
or after the last one: the user's editor) is a conflict: named, never overwritten silently.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from arnes.rewind.journal import Point
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


def _same(a: Entry | None, b: Entry | None) -> bool:
    return (a is None and b is None) or (a is not None and a.same(b))


def plan(points: list[Point], to: int, current: Manifest, store: Store) -> Plan:
    index = next((i for i, p in enumerate(points) if p.n == to), None)
    if index is None:
        known = ", ".join(str(p.n) for p in points) or "none"
        raise NoSuchPoint(f"no checkpoint {to} in this session (checkpoints: {known})")
    later = points[index:]
    afters: list[Manifest] = []
    for i, point in enumerate(later):
        if point.after is not None:
            afters.append(point.after)
        else:  # never closed (a crash, a kill): its end is the next point's start, or now
            afters.append(later[i + 1].before if i + 1 < len(later) else current)
    touched: set[str] = set()
    outside: set[str] = set()
    for i, point in enumerate(later):
        after = afters[i]
        touched |= {p for p in point.before.keys() | after.keys() if not _same(point.before.get(p), after.get(p))}
        following = later[i + 1].before if i + 1 < len(later) else current
        outside |= {p for p in after.keys() | following.keys() if not _same(after.get(p), following.get(p))}
    target = later[0].before
    result = Plan(to)
    for rel in sorted(touched):
        want, now = target.get(rel), current.get(rel)
        if _same(want, now):
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
    if point.after is None:
        return 0, 0
    added = removed = 0
    for rel in point.changed()[:most_files]:
        before, after = _text(point.before.get(rel), store), _text(point.after.get(rel), store)
        if isinstance(before, str) or isinstance(after, str):
            continue
        for line in difflib.unified_diff(before, after, n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return added, removed
