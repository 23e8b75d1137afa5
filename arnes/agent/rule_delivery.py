"""Path-scoped rules reach the model with the result of the first file tool call that touches a match.

Claude Code loads a `.claude/rules/` file with `paths:` when a file it names is read or edited,
and a sub-folder's CLAUDE.md when a file below it is; so does arnes, for every model: after a
Read, Write or Edit that worked, each rule whose globs match the file's path relative to the
workspace, and each sub-folder's instruction files on the way to it, are appended to the result
once, under a header naming them. When the conversation is compacted or rewound the rules said so
far may be gone, so they are forgotten and said again at the next match (`forget`). One per
loop: a sub-agent has its own. A rule is an extra: its globs were compiled when it was read
(agent/rules.py) and match in linear time (agent/rule_globs.py), and should finding or matching
the rules fail all the same, the result says so once and the run goes on without them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from arnes.agent.rules import Rule
from arnes.host.paths import is_inside

FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit"})


def workspace_relative(path: Path, workspace: Path) -> str | None:
    """The path as a rule's glob sees it (`src/a.ts`), or None outside the workspace."""
    if not is_inside(workspace, path) or path == workspace:
        return None
    return path.relative_to(workspace).as_posix()


class RuleDelivery:
    """Which scoped rules and sub-folder instructions this conversation has been given.

    The rules are found on first need; a sub-folder's instruction files (`folder`) are looked for
    when a file below it is first touched, each folder once.
    """

    def __init__(self, load: Callable[[], list[Rule]], folder: Callable[[str], str] | None = None) -> None:
        self._load = load
        self._folder = folder
        self._rules: list[Rule] | None = None
        self._folders: dict[str, str] = {}  # a sub-folder -> its instructions ("" for none)
        self._sent: set[str] = set()
        self._lock = threading.Lock()  # reads run in parallel

    def after(self, rel: str | None) -> str:
        """What to append to the result of a file tool call on `rel`: the rules not sent yet."""
        if rel is None:
            return ""
        with self._lock:
            try:
                if self._rules is None:
                    self._rules = self._load()
                due = [r for r in self._rules if r.shown not in self._sent and _applies(r, rel)]
            except Exception as exc:  # a fault here must not end the run: the rules are left out
                self._rules = []
                return f"\n\n[arnes could not check the path-scoped rules ({type(exc).__name__}); none is applied]"
            self._sent.update(r.shown for r in due)
            folders = self._folders_due(rel)
        return "".join(_block(rule, rel) for rule in due) + "".join(
            f"\n\n[Instructions for the files under {folder}/, which {rel} is one of; follow them:]\n{text}"
            for folder, text in folders
        )

    def _folders_due(self, rel: str) -> list[tuple[str, str]]:
        """The sub-folders on the way to `rel` (outermost first) whose instructions were not sent."""
        if self._folder is None:
            return []
        due: list[tuple[str, str]] = []
        for parent in reversed(PurePosixPath(rel).parents[:-1]):  # without the workspace itself
            folder = parent.as_posix()
            key = f"folder:{folder}"
            if key in self._sent:
                continue
            if folder not in self._folders:
                try:
                    self._folders[folder] = self._folder(folder)
                except Exception:  # an extra, like the rules: a fault leaves this folder's files out
                    self._folders[folder] = ""
            self._sent.add(key)
            if self._folders[folder]:
                due.append((folder, self._folders[folder]))
        return due

    def forget(self) -> None:
        """The conversation lost what was said (compacted, rewound): say each rule again when due."""
        with self._lock:
            self._sent.clear()


def _applies(rule: Rule, rel: str) -> bool:
    return rule.paths is not None and rule.paths.match(rel)


def _block(rule: Rule, rel: str) -> str:
    whose = "Your own rule" if rule.loaded.user else "The project's rule"
    globs = ", ".join(rule.globs)
    return f"\n\n[{whose} {rule.shown} applies to {rel} (paths: {globs}); follow it:]\n{rule.loaded.text}"
