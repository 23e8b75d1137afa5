"""The files a task names, shown with it: the first edit is then made on what is really there.

Given "fix `page()` in paging.py", a small model's first call is an Edit of a line it imagines
(`old_string: "page(items, number, size)"`); the refusal shows the file, and it repeats the
imagined line. With the named file's content beside the task, as Read would show it, its first
call can copy a real line. aider adds the files a request names to the chat for the same reason.

Only what a Read would show without asking: files of the workspace's listing (so `.gitignore`,
links out and Read deny or ask rules already keep theirs out), read through HostFiles, small,
within a share of the window. A file shown here counts as read, as after a Read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from arnes.agent.madecalls import left_alone
from arnes.host.files import HostFiles, Refused
from arnes.tools.files import split_lines
from arnes.tools.readformat import numbered

FILE_CAP = 8_000  # characters: a larger file is named, not shown (Read it)
SHARE = 0.12  # of the window, in characters at 4 a token, for all the files of one task
HEADER = "The files this task names, as Read shows them (they count as read: Edit them directly):"
# In an edit format the model answers with files (or exact SEARCH text): it is shown them in that
# same shape, without Read's line numbers, which it would otherwise copy into its answer.
PLAIN_HEADER = "The files this task names, as they are now:"
_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".rs": "rust", ".go": "go", ".sh": "bash"}


@dataclass(frozen=True)
class Shown:
    text: str  # "" when no file was shown
    files: list[tuple[Path, bytes, os.stat_result]]  # what was shown, for the read-before-edit snapshots


def mentioned(task: str, names: list[str]) -> list[str]:
    """The workspace files (relative paths) the task names, by path or by a name only one file has.

    The task's words are looked up in the names, not each name searched in the task: a repository
    of 100,000 files would otherwise cost a regular expression per file at every start."""
    by_base: dict[str, list[str]] = {}
    for name in names:
        by_base.setdefault(name.rsplit("/", 1)[-1], []).append(name)
    words = {token.rstrip(".") for token in _TOKEN.findall(task)}  # "util.py." ends a sentence
    found: list[str] = []
    for name in names:
        base = name.rsplit("/", 1)[-1]
        candidates = [name] + ([base] if by_base[base] == [name] and base != name else [])
        if any(w in words if _TOKEN.fullmatch(w) else _names(task, w) for w in candidates):
            found.append(name)
    return found


_TOKEN = re.compile(r"[\w./-]+")


# A path the task may name before it exists ("create notes.md", "add src/cli.py"): a name and a
# suffix files have (not "3.11", "e.g." or "order.total").
_SUFFIXES = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|json|md|rst|txt|toml|yaml|yml|cfg|ini|env|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|"
    "php|swift|sh|bash|html|css|scss|sql|xml|csv|lock|mk|dockerfile|gradle|vue|svelte|lua|ex|exs|zig|nim"
)
_NEW_PATH = re.compile(rf"(?<![\w./-])[\w-]+(?:/[\w.-]+)*\.(?:{_SUFFIXES})(?![\w/-]|\.\w)", re.IGNORECASE)


def names_a_file(task: str, names: list[str]) -> bool:
    """Whether `task` names a file: one of the workspace's (`names`), or a path it may create."""
    return bool(mentioned(task, names)) or _NEW_PATH.search(task) is not None


def _names(task: str, word: str) -> bool:
    """`word` stands in the task as a name of its own: not inside a longer name or path."""
    return re.search(rf"(?<![\w./-]){re.escape(word)}(?![\w/-]|\.\w)", task) is not None


def named_files(
    files: HostFiles,
    task: str,
    names: list[str],
    window: int,
    seen: set[Path],
    *,
    plain: bool = False,
    spare_kept: bool = False,
) -> Shown:
    """The named files' numbered content (`plain`: each in a fenced block under its path, as the
    edit formats write files), within a budget, none already seen.

    `spare_kept` (with `plain`): a file the task says to leave as it is ("the tests in x_test.py
    are correct, don't change them") is named, not shown. In an edit format every file shown is
    one the reply may write whole, and a small model shown a test file tends to send it back,
    spending its output on a file it must not change."""
    budget = int(window * 4 * SHARE)
    parts: list[str] = []
    shown: list[tuple[Path, bytes, os.stat_result]] = []
    kept = _kept(task) if plain and spare_kept else set()
    spared: list[str] = []
    for rel in mentioned(task, names):
        if rel in kept or rel.rsplit("/", 1)[-1] in kept:
            spared.append(rel)
            continue
        try:
            found = files.read_stat(rel, FILE_CAP + 1)
        except (Refused, OSError):
            continue
        if found is None:
            continue
        data, st = found
        real = Path(os.path.realpath(files.root / rel))
        if real in seen or len(data) > FILE_CAP or b"\0" in data[:8192]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        block = fenced(rel, text) if plain else _numbered(rel, text)
        if len(block) > budget:
            continue
        budget -= len(block)
        parts.append(block)
        shown.append((real, data, st))
    header = PLAIN_HEADER if plain else HEADER
    text = f"{header}\n\n" + "\n\n".join(parts) if parts else ""
    if spared:
        it = "it as it is" if len(spared) == 1 else "them as they are"
        note = f"Not shown, as the task says to leave {it}: {', '.join(spared)}."
        text = f"{text}\n\n{note}" if text else note
    return Shown(text, shown)


def _kept(task: str) -> set[str]:
    """The names the task says to leave alone, without a leading `./`."""
    return {name.removeprefix("./") for name in left_alone(task)}


def _numbered(rel: str, text: str) -> str:
    lines = split_lines(text)
    return f"{rel}:\n{numbered(lines) if lines else '(the file is empty)'}"


def fenced(rel: str, text: str, *, path: bool = True) -> str:
    """`rel` on its line (`path`), then the text in a fence longer than any run of backticks inside
    it, marked with the language of `rel`'s suffix."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    block = f"{fence}{_LANGUAGES.get(Path(rel).suffix, '')}\n{body}{fence}"
    return f"{rel}\n{block}" if path else block
