"""Tab completion of slash commands at the interactive prompt: the built-in ones and the command
files' (with their argument hints), while the first word is being typed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from arnes.extensions.commands import Catalog
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
