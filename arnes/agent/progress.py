"""PROGRESS.md: memory across sessions (done, in progress, blocked, next), kept in the repository.

Loaded into the system prompt at start; after each task the harness records how the task ended,
from facts it knows (stop reason, files changed), not from the model's word.
"""

from __future__ import annotations

import errno
import re
from datetime import date

from arnes.host.files import HostFiles, Refused

FILE = "PROGRESS.md"
SECTIONS = ("Done", "In progress", "Blocked", "Next")
PROMPT_CAP = 4000
RECORD_CAP = 4 << 20  # bytes: past it, a file is not a progress list to rewrite whole
_HEADING = re.compile(r"^##\s+(.+?)\s*$")


def load(files: HostFiles) -> str:
    """The file for the prompt; Refused when it is a link out or a rule keeps it from Read."""
    text = (files.read_text(FILE, limit=PROMPT_CAP * 4 + 1) or "").strip()
    return text[:PROMPT_CAP] + ("\n[PROGRESS.md cut here; Read it for the rest]" if len(text) > PROMPT_CAP else "")


def parse(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: str | None = None
    for line in text.splitlines():
        match = _HEADING.match(line)
        if match:
            title = match.group(1).strip()
            current = next((s for s in SECTIONS if s.lower() == title.lower()), None)
            if current is None:
                current = title
                sections.setdefault(title, [])
            continue
        if current is not None and line.strip():
            sections[current].append(line.rstrip())
    return sections


def render(sections: dict[str, list[str]]) -> str:
    out = ["# Progress", ""]
    for name, lines in sections.items():
        out += [f"## {name}", *(lines or ["- (none)"]), ""]
    return "\n".join(out).rstrip() + "\n"


def record(files: HostFiles, task: str, stop_reason: str, detail: str, changed: list[str], session: str) -> None:
    """Move the task to the section its ending puts it in; the other sections are kept as they are.

    Refused (nothing written) when PROGRESS.md is a link out or a rule covers reading or writing it.
    """
    text = files.read_text(FILE, RECORD_CAP + 1) or ""
    if len(text) > RECORD_CAP:
        raise Refused(errno.EFBIG, f"{FILE} is over {RECORD_CAP >> 20} MiB; arnes does not rewrite it")
    sections = parse(text)
    title = " ".join(task.split())[:120]
    for name in sections:
        sections[name] = [line for line in sections[name] if title not in line and line != "- (none)"]
    touched = f"; changed {', '.join(changed[:8])}" if changed else ""
    stamp = f"{date.today().isoformat()}, session {session}"
    if stop_reason == "end_turn":
        sections["Done"].append(f"- {title} ({stamp}{touched})")
    elif stop_reason in ("error",):
        sections["Blocked"].append(f"- {title} ({stamp}): {detail or stop_reason}")
    else:
        sections["In progress"].append(f"- {title} ({stamp}): stopped by {detail or stop_reason}{touched}")
    files.write(FILE, render(sections).encode("utf-8"))
