"""A session's checkpoints, replayed from its journal: one `Point` per user turn (or rewind, or
verify round), with what it changed and what changed before it began.

A journal line records the manifest as a change from the line before it (`set`, `gone`), the
session's first line in `full`: a turn that changed ten files writes ten entries. Phases:
`before` opens point n, `after` closes it, `amend` adds to point n's "before" a file the session's
tools were about to write where a scan does not look. Replaying keeps one manifest in memory and
each point's changes, never a copy of the tree per point (a long session on a big tree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arnes.rewind.scan import Entry, Manifest

Pairs = dict[str, tuple[Entry | None, Entry | None]]  # path -> (what it was, what it became)


def same(a: Entry | None, b: Entry | None) -> bool:
    return (a is None and b is None) or (a is not None and a.same(b))


@dataclass
class Point:
    n: int
    kind: str  # turn | rewind | verify | node
    label: str  # the prompt's first line, or what the rewind did
    time: str
    gap: Pairs = field(default_factory=dict)  # changed since the point before it ended: not the session's doing
    own: Pairs | None = None  # what the point changed (None: it never closed, a crash or a kill)
    to: int | None = None  # a rewind's target
    what: str = ""  # a rewind's: both | code | conversation
    restored: list[str] = field(default_factory=list)  # a rewind's files
    jobs: bool = False  # background shells of the session still ran when it closed: what follows may be theirs

    def changed(self) -> list[str]:
        """The paths this point changed (nothing known when it never closed)."""
        return sorted(p for p, (was, now) in (self.own or {}).items() if not same(was, now))

    def outside(self) -> set[str]:
        """Paths changed between the point before this one and this one's start."""
        return {p for p, (was, now) in self.gap.items() if not same(was, now)}


@dataclass
class Journal:
    points: list[Point]
    final: Manifest  # the workspace as the last line left it
    records: list[dict[str, Any]]

    def state_before(self, n: int) -> Manifest:
        """The workspace as it was when point n began (with the files its tools' writes kept first)."""
        running: Manifest = {}
        opened = False
        for record in self.records:
            if record.get("n") == n and record.get("phase") == "after":
                break
            if opened and record.get("phase") != "amend":
                break
            _apply(running, record)
            if record.get("n") == n and record.get("phase") == "before":
                opened = True
        if not opened:
            raise KeyError(n)
        return running


def _parse(raw: Any) -> Manifest:
    out: Manifest = {}
    if isinstance(raw, dict):
        for rel, value in raw.items():
            entry = Entry.from_json(value)
            if isinstance(rel, str) and entry is not None:
                out[rel] = entry
    return out


def _apply(running: Manifest, record: dict[str, Any], pairs: Pairs | None = None) -> None:
    """Apply one record to `running` in place; what changed goes into `pairs` (was, now)."""
    if "full" in record:
        new = _parse(record["full"])
        if pairs is not None:
            for rel in running.keys() | new.keys():
                pairs[rel] = (running.get(rel), new.get(rel))
        running.clear()
        running.update(new)
        return
    changes: dict[str, Entry | None] = dict(_parse(record.get("set")))
    for rel in record.get("gone") or []:
        if isinstance(rel, str):
            changes[rel] = None
    for rel, entry in changes.items():
        if pairs is not None:
            was = running.get(rel)
            first = pairs.get(rel, (was, None))[0]
            pairs[rel] = (first, entry)
        if entry is None:
            running.pop(rel, None)
        elif record.get("phase") == "amend":
            running.setdefault(rel, entry)
        else:
            running[rel] = entry


def delta(old: Manifest, new: Manifest) -> dict[str, Any]:
    """`new` as a change from `old`, for a journal line."""
    changed = {rel: e.to_json() for rel, e in new.items() if (was := old.get(rel)) is not e and was != e}
    gone = sorted(rel for rel in old if rel not in new)
    return {"set": changed, "gone": gone}


def replay(records: list[dict[str, Any]]) -> Journal:
    """The points of a journal, and the manifest its last line left (the next line's base)."""
    points: dict[int, Point] = {}
    running: Manifest = {}
    kept: list[dict[str, Any]] = []
    for record in records:
        n, phase = record.get("n"), record.get("phase")
        if not isinstance(n, int) or phase not in ("before", "after", "amend"):
            continue
        if phase != "before" and n not in points:
            continue
        kept.append(record)
        pairs: Pairs = {}
        _apply(running, record, pairs)
        if phase == "before":
            to = record.get("to")
            points[n] = Point(
                n,
                str(record.get("kind", "turn")),
                str(record.get("label", "")),
                str(record.get("time", "")),
                gap=pairs,
                to=to if isinstance(to, int) else None,
                what=str(record.get("what", "")),
            )
        elif phase == "after":
            points[n].own = pairs
            points[n].jobs = record.get("jobs") is True
            restored = record.get("restored")
            if isinstance(restored, list):
                points[n].restored = [str(r) for r in restored]
    return Journal([points[n] for n in sorted(points)], running, kept)
