"""Which traces arnes wrote, recorded outside the workspace: `-c` and `--resume` continue only those.

A trace is the conversation: its "user" turns reach the model as the user's words when a session
is continued. A repository can plant a file in `.arnes/traces/` (or change one arnes wrote), so a
trace is resumed only when the user's own state folder holds its name and the hash of its content
as arnes last wrote it (DESIGN §17 keeps rewind's checkpoints there for the same reason).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from arnes.host.atomic import atomic_write
from arnes.host.nofollow import read_regular
from arnes.host.paths import resolve_real
from arnes.nesting import json_loads
from arnes.permissions.protected import user_state_dir

MOST = 200  # sessions remembered per workspace: the newest
HASHED = 256 << 20  # bytes of a trace hashed; a bigger one is not resumed


def _record(workspace: Path) -> Path:
    key = hashlib.sha256(str(resolve_real(workspace)).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return user_state_dir() / "sessions" / f"{key}.json"


def _digest(trace: Path) -> str | None:
    try:
        data, st = read_regular(resolve_real(trace), limit=HASHED + 1)
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if st.st_size <= HASHED else None


def _known(workspace: Path) -> dict[str, str]:
    try:
        data = json_loads(_record(workspace).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def remember(workspace: Path, trace: Path) -> None:
    """After a session: its trace's name and hash, as arnes wrote it."""
    digest = _digest(trace)
    if digest is None:
        return
    known = _known(workspace)
    known.pop(trace.name, None)
    known[trace.name] = digest
    kept = dict(list(known.items())[-MOST:])
    path = _record(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(kept, indent=1).encode())


def refusal(workspace: Path, trace: Path) -> str | None:
    """Why this trace is not continued, or None when arnes wrote it and it is as arnes left it."""
    want = _known(workspace).get(trace.name)
    if want is None:
        return f"{trace} was not written by arnes for you (a repository can plant traces); it is not continued"
    if _digest(trace) != want:
        return f"{trace} changed since arnes wrote it; it is not continued"
    return None
