"""A session's checkpoints, replayed from its journal: one `Point` per user turn (or rewind, or
verify round), with the workspace before it and after it.

A journal line records the manifest as a change from the line before it (`set`, `gone`), the
session's first line in `full`: a turn that changed ten files writes ten entries. Phases:
`before` opens point n, `after` closes it, `amend` adds to point n's "before" a file the session's
tools were about to write where a scan does not look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arnes.rewind.scan import Entry, Manifest


@dataclass
class Point:
    n: int
    kind: str  # turn | rewind | verify
    label: str  # the prompt's first line, or what the rewind did
    time: str
    before: Manifest
    after: Manifest | None = None
    to: int | None = None  # a rewind's target
    what: str = ""  # a rewind's: both | code | conversation
    restored: list[str] = field(default_factory=list)  # a rewind's files

    def changed(self) -> list[str]:
        """The paths this point changed (nothing known when it never closed: a crash)."""
        if self.after is None:
            return []
        after = self.after
        return sorted(p for p in self.before.keys() | after.keys() if not _same(self.before.get(p), after.get(p)))


def _same(a: Entry | None, b: Entry | None) -> bool:
    return (a is None and b is None) or (a is not None and a.same(b))


def _parse(raw: Any) -> Manifest:
    out: Manifest = {}
    if isinstance(raw, dict):
        for rel, value in raw.items():
            entry = Entry.from_json(value)
            if isinstance(rel, str) and entry is not None:
                out[rel] = entry
    return out


def delta(old: Manifest, new: Manifest) -> dict[str, Any]:
    """`new` as a change from `old`, for a journal line."""
    changed = {rel: e.to_json() for rel, e in new.items() if old.get(rel) != e}
    gone = sorted(rel for rel in old if rel not in new)
    return {"set": changed, "gone": gone}


def replay(records: list[dict[str, Any]]) -> tuple[list[Point], Manifest]:
    """The points of a journal, and the manifest its last line left (the next line's base)."""
    points: dict[int, Point] = {}
    running: Manifest = {}
    for record in records:
        n, phase = record.get("n"), record.get("phase")
        if not isinstance(n, int) or phase not in ("before", "after", "amend"):
            continue
        if "full" in record:
            running = _parse(record["full"])
        else:
            running = dict(running)
            running.update(_parse(record.get("set")))
            for rel in record.get("gone") or []:
                running.pop(rel, None)
        if phase == "before":
            to = record.get("to")
            points[n] = Point(
                n,
                str(record.get("kind", "turn")),
                str(record.get("label", "")),
                str(record.get("time", "")),
                running,
                to=to if isinstance(to, int) else None,
                what=str(record.get("what", "")),
            )
        elif n in points and phase == "after":
            points[n].after = running
            restored = record.get("restored")
            if isinstance(restored, list):
                points[n].restored = [str(r) for r in restored]
        elif n in points and phase == "amend":
            for rel, entry in _parse(record.get("set")).items():
                points[n].before.setdefault(rel, entry)
    return [points[n] for n in sorted(points)], running
