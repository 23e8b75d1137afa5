"""Jupyter notebooks (nbformat 4) as plain JSON: Read shows them cell by cell, NotebookEdit changes one cell.

No nbformat package: a notebook is JSON whose shape Claude Code's tools rely on in four keys
(`cells`, `cell_type`, `source`, `id`). Everything else (metadata, outputs of other cells, keys
a newer Jupyter adds) is carried through untouched, and the file is written back with the indent
it had, so a one-cell edit is a one-cell diff.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from arnes.nesting import json_loads
from arnes.tools.base import ToolError

CellType = Literal["code", "markdown"]
OUTPUT_CHARS = 2000  # of one cell's outputs in a Read: a notebook's outputs can be megabytes of tables
_INDEX = re.compile(r"cell-(\d+)")  # how Read names a cell that has no id (nbformat before 4.5)


@dataclass
class Notebook:
    data: dict[str, Any]
    indent: int  # as the file was written (Jupyter writes 1)
    newline_at_end: bool

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells = self.data["cells"]
        assert isinstance(cells, list)
        return cells

    @property
    def has_ids(self) -> bool:
        """nbformat 4.5 and later give every cell an id (a new cell needs one)."""
        return (self.data.get("nbformat"), self.data.get("nbformat_minor", 0)) >= (4, 5)

    @property
    def language(self) -> str:
        info = self.data.get("metadata", {}).get("language_info", {})
        kernel = self.data.get("metadata", {}).get("kernelspec", {})
        name = info.get("name") if isinstance(info, dict) else None
        name = name or (kernel.get("language") if isinstance(kernel, dict) else None)
        return name if isinstance(name, str) else "python"

    def text(self) -> str:
        out = json.dumps(self.data, indent=self.indent, ensure_ascii=False)
        return out + "\n" if self.newline_at_end else out


def parse(text: str, shown: str) -> Notebook:
    """The notebook in `text`, or a ToolError saying what is wrong with it."""
    try:
        data = json_loads(text)
    except ValueError as exc:
        raise ToolError(f"{shown} is not a valid notebook: its JSON does not parse ({exc}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ToolError(f"{shown} is not a Jupyter notebook: it has no list of cells.")
    if not isinstance(data.get("nbformat"), int) or data["nbformat"] < 4:
        raise ToolError(f"{shown} is an nbformat {data.get('nbformat')} notebook; only nbformat 4 is read and edited.")
    if not all(isinstance(cell, dict) for cell in data["cells"]):
        raise ToolError(f"{shown} is not a valid notebook: a cell is not a JSON object.")
    second = text.split("\n", 2)[1] if text.count("\n") >= 1 else ""
    indent = len(second) - len(second.lstrip(" ")) if second.strip() else 1
    return Notebook(data, indent or 1, text.endswith("\n"))


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(str(s) for s in source) if isinstance(source, list) else str(source)


def cell_name(cell: dict[str, Any], index: int) -> str:
    """The id NotebookEdit takes for this cell: its own, or `cell-N` (from 0) when it has none."""
    given = cell.get("id")
    return given if isinstance(given, str) and given else f"cell-{index}"


def find(nb: Notebook, cell_id: str, shown: str) -> int:
    """The index of the cell `cell_id` names: its id, else `cell-N` as Read shows an id-less cell."""
    for index, cell in enumerate(nb.cells):
        if cell.get("id") == cell_id:
            return index
    match = _INDEX.fullmatch(cell_id)
    if match and int(match.group(1)) < len(nb.cells):
        return int(match.group(1))
    names = ", ".join(cell_name(c, i) for i, c in enumerate(nb.cells[:20])) or "none: the notebook is empty"
    more = f" and {len(nb.cells) - 20} more" if len(nb.cells) > 20 else ""
    raise ToolError(f"{shown} has no cell with id {cell_id!r}. Its cells are: {names}{more}. Read it to see them.")


def render(nb: Notebook, shown: str) -> str:
    """The notebook as Read shows it: each cell with the id NotebookEdit takes, its source, its outputs."""
    head = f"{shown}: Jupyter notebook, {len(nb.cells)} cell{'s' if len(nb.cells) != 1 else ''} ({nb.language})"
    if not nb.cells:
        return head + ", empty. NotebookEdit with edit_mode insert adds a cell."
    parts = [head + ". NotebookEdit takes the cell ids below."]
    for index, cell in enumerate(nb.cells):
        kind = str(cell.get("cell_type", "code"))
        name = cell_name(cell, index)
        count = cell.get("execution_count")
        run = f' execution_count="{count}"' if isinstance(count, int) else ""
        parts.append(f'<cell id="{name}" type="{kind}"{run}>\n{source_of(cell)}\n</cell>')
        outputs = _outputs(cell.get("outputs"))
        if outputs:
            parts.append(f'<outputs cell="{name}">\n{outputs}\n</outputs>')
    return "\n".join(parts)


def _outputs(outputs: Any) -> str:
    if not isinstance(outputs, list):
        return ""
    said: list[str] = []
    for out in outputs:
        if not isinstance(out, dict):
            continue
        kind = out.get("output_type")
        if kind == "stream":
            said.append(_joined(out.get("text")))
        elif kind == "error":
            said.append(f"{out.get('ename', 'Error')}: {out.get('evalue', '')}")
        elif kind in ("execute_result", "display_data"):
            data = out.get("data") if isinstance(out.get("data"), dict) else {}
            assert isinstance(data, dict)
            if "text/plain" in data:
                said.append(_joined(data["text/plain"]))
            said += [f"[{mime} output]" for mime in data if mime != "text/plain" and not mime.endswith("json")]
    text = "\n".join(s.rstrip("\n") for s in said if s)
    if len(text) > OUTPUT_CHARS:
        text = text[:OUTPUT_CHARS] + f"\n... [{len(text) - OUTPUT_CHARS} characters more]"
    return text


def _joined(value: Any) -> str:
    return "".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def as_source(text: str, like: Any) -> Any:
    """`text` stored as nbformat writes it: a list of lines, or a string where the cell had one."""
    return text if isinstance(like, str) else text.splitlines(keepends=True)


def new_cell(nb: Notebook, kind: CellType, text: str) -> dict[str, Any]:
    """A cell as Jupyter writes one (keys in its sorted order), with an id where the format has them."""
    cell: dict[str, Any] = {"cell_type": kind}
    if kind == "code":
        cell["execution_count"] = None
    if nb.has_ids:
        taken = {c.get("id") for c in nb.cells}
        fresh = uuid.uuid4().hex[:8]  # as nbformat makes them
        while fresh in taken:
            fresh = uuid.uuid4().hex[:8]
        cell["id"] = fresh
    cell["metadata"] = {}
    if kind == "code":
        cell["outputs"] = []
    cell["source"] = as_source(text, [])
    return cell


def replaced(cell: dict[str, Any], kind: CellType | None, text: str) -> dict[str, Any]:
    """The cell with its new source (and type): a code cell's outputs and count are cleared, since
    they came from the code that is gone; its id and metadata stay."""
    changed = dict(cell)
    kind = kind or ("markdown" if cell.get("cell_type") == "markdown" else "code")
    changed["cell_type"] = kind
    changed["source"] = as_source(text, cell.get("source"))
    if kind == "code":
        changed["execution_count"] = None
        changed["outputs"] = []
    else:
        changed.pop("execution_count", None)
        changed.pop("outputs", None)
    return changed
