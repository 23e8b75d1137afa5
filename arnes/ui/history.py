"""The prompt history in `.arnes/history`, kept like prompt_toolkit's FileHistory but read and
written through host/files.py: a repository that ships `.arnes/history -> ~/.bashrc` gets no
prompt appended to the user's shell setup (the history is then kept in memory only)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from prompt_toolkit.history import History

from arnes.host.files import HostFiles

FILE = ".arnes/history"
HISTORY_CAP = 64 << 20  # bytes


class WorkspaceHistory(History):
    def __init__(self, files: HostFiles, rel: str = FILE):
        self._files, self._rel = files, rel
        super().__init__()

    def load_history_strings(self) -> Iterable[str]:
        """Newest first, from FileHistory's format: `# time` lines, then `+`-prefixed lines."""
        try:
            text = self._files.read_text(self._rel, HISTORY_CAP + 1) or ""
        except OSError:
            return []
        if len(text) > HISTORY_CAP:  # a planted sparse file: kept in memory only, as for a link out
            return []
        strings: list[str] = []
        lines: list[str] = []
        for line in text.splitlines(keepends=True):
            if line.startswith("+"):
                lines.append(line[1:])
            elif lines:
                strings.append("".join(lines)[:-1])
                lines = []
        if lines:
            strings.append("".join(lines)[:-1])
        return list(reversed(strings))

    def store_string(self, string: str) -> None:
        entry = f"\n# {datetime.now()}\n" + "".join(f"+{line}\n" for line in string.split("\n"))
        try:
            with self._files.append(self._rel) as out:
                out.write(entry)
        except OSError:
            pass  # a link or an unwritable folder: this session's history stays in memory
