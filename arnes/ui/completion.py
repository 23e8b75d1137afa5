"""Tab completion at the interactive prompt: slash commands (the built-in ones and the command
files', with their argument hints) while the first word is being typed, and `@` file names
(agent/mentions.py attaches them) anywhere in the line."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from arnes.extensions.commands import Catalog
from arnes.host.paths import is_inside
from arnes.safe import visible


class SlashCompleter(Completer):
    """`/re<Tab>` -> `/review`; the menu shows each command's hint and description."""

    def __init__(self, catalog: Callable[[], Catalog], builtins: Mapping[str, str]):
        self._catalog = catalog  # read at each completion: the prompt reloads the files before each line
        self._builtins = builtins  # usage ("/mode [MODE]") -> what it does

    def choices(self) -> list[tuple[str, str]]:
        """(name with slash, what the menu says), built-in first, then the command files'."""
        out = []
        for usage, what in self._builtins.items():
            name, _, hint = usage.partition(" ")
            out.append((name, f"{hint} {what}".strip()))
        for command in self._catalog().commands.values():
            meta = f"{command.hint} {command.description}".strip()
            out.append((f"/{command.name}", visible(meta, newlines=False)))
        return out

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        typed = document.text_before_cursor
        if not typed.startswith("/") or any(ch.isspace() for ch in typed):
            return
        for name, meta in self.choices():
            if name.startswith(typed):
                yield Completion(name, start_position=-len(typed), display_meta=meta)


MOST_NAMES = 200  # shown for one folder


class MentionCompleter(Completer):
    """`@src/ma<Tab>` -> `@src/main.py`: the workspace's files and folders, never what a Read rule
    hides nor anything through a link out of the workspace (what `@` could not attach anyway)."""

    def __init__(self, workspace: Path, hidden: Callable[[Path], bool]):
        self._workspace = workspace.resolve()
        self._hidden = hidden

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@") or word.startswith('@"'):
            return
        folder, _, stem = word[1:].rpartition("/")
        base = Path(os.path.realpath(self._workspace / folder))
        if not is_inside(self._workspace, base):
            return
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            path = base / entry.name
            if not entry.name.startswith(stem) or entry.name == ".git" or self._hidden(path):
                continue
            if not is_inside(self._workspace, Path(os.path.realpath(path))):  # a link out: never attached
                continue
            name = f"{folder}/{entry.name}" if folder else entry.name
            name += "/" if entry.is_dir(follow_symlinks=False) else ""
            text = f'@"{name}"' if any(ch.isspace() for ch in name) else f"@{name}"
            yield Completion(text, start_position=-len(word), display=visible(name, newlines=False))
            shown += 1
            if shown == MOST_NAMES:
                return
