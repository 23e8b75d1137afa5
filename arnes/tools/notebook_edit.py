"""NotebookEdit: Claude Code's tool for one cell of a Jupyter notebook, under its name and arguments.

A write like Edit, and through the same path: the gate judges a write of `notebook_path` (rules,
protected paths, plan mode), the notebook must have been read since it last changed (the refusal
shows it as Read does), and `write_recorded` writes it: the session's diff, rewind's checkpoint
and the read snapshot, an atomic write on the real path the gate judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from arnes.host.paths import resolve_real
from arnes.permissions.types import Target
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError
from arnes.tools.files import guard_write, read_text, unified_diff, write_recorded
from arnes.tools.notebook import CellType, Notebook, cell_name, find, new_cell, parse, render, replaced, source_of
from arnes.tools.responses import Output


class NotebookEditArgs(ToolArgs):
    # Claude Code's names; no field descriptions: the tool's own says what they mean, and every
    # request pays for the schema (tests/test_budget.py).
    notebook_path: str
    cell_id: str | None = None
    new_source: str
    cell_type: CellType | None = None
    edit_mode: Literal["replace", "insert", "delete"] = "replace"


class NotebookEdit(BaseTool[NotebookEditArgs]):
    name = "NotebookEdit"
    description = (
        "Replace, insert or delete one cell of a .ipynb notebook you have read. cell_id: as Read shows it; "
        "insert (needs cell_type) puts the new cell after it, or first without one."
    )
    args_model = NotebookEditArgs
    read_only = False

    def targets(self, args: NotebookEditArgs, ctx: ToolContext) -> list[Target]:
        path = ctx.path(args.notebook_path)
        if path.suffix.lower() != ".ipynb":  # before the gate: nobody is asked about a call that cannot run
            raise ToolError(f"{ctx.display(path)} is not a Jupyter notebook (.ipynb); use Edit for other files.")
        return [Target(path, "write")]

    def preview(self, args: NotebookEditArgs, ctx: ToolContext) -> str | None:
        path = ctx.path(args.notebook_path)
        shown = ctx.display(path)
        try:
            before = read_text(path, shown)
            after, _ = _edited(parse(before, shown), args, shown)
        except ToolError:
            return None
        return unified_diff(before, after.text(), shown)

    def run(self, args: NotebookEditArgs, ctx: ToolContext) -> str:
        path = ctx.path(args.notebook_path)
        shown = ctx.display(path)
        if not path.exists() and not path.is_symlink():
            raise ToolError(f"Notebook does not exist: {shown}. NotebookEdit changes an existing notebook.")
        guard_write(ctx, path, shown, "NotebookEdit", render=lambda text: render(parse(text, shown), shown))
        before = read_text(path, shown, ctx.real_of(path) or resolve_real(path))
        nb, cell = _edited(parse(before, shown), args, shown)
        after = nb.text()
        write_recorded(ctx, path, after)
        said = _said(args, cell, shown)
        return Output(said, lambda: _shape(path, args, cell, nb, before, after))


def _edited(nb: Notebook, args: NotebookEditArgs, shown: str) -> tuple[Notebook, dict[str, Any]]:
    """The notebook after the edit (the same object, changed) and the cell it concerns."""
    cells = nb.cells
    if args.edit_mode == "insert":
        if args.cell_type is None:
            raise ToolError("edit_mode insert needs cell_type: code or markdown. Call NotebookEdit again with it.")
        at = find(nb, args.cell_id, shown) + 1 if args.cell_id else 0
        cell = new_cell(nb, args.cell_type, args.new_source)
        cells.insert(at, cell)
        return nb, {**cell, "_index": at}
    if not args.cell_id:
        raise ToolError(f"edit_mode {args.edit_mode} needs the cell_id of the cell (Read shows each cell's id).")
    at = find(nb, args.cell_id, shown)
    if args.edit_mode == "delete":
        return nb, {**cells.pop(at), "_index": at}
    cells[at] = replaced(cells[at], args.cell_type, args.new_source)
    return nb, {**cells[at], "_index": at}


def _said(args: NotebookEditArgs, cell: dict[str, Any], shown: str) -> str:
    name = cell_name(cell, int(cell["_index"]))
    if args.edit_mode == "insert":
        return f"Inserted {cell['cell_type']} cell {name} into {shown} at position {cell['_index']}."
    if args.edit_mode == "delete":
        return f"Deleted cell {name} from {shown}."
    cleared = " (its outputs were cleared)" if cell.get("cell_type") == "code" else ""
    return f"Updated cell {name} of {shown}{cleared}."


def _shape(path: Path, args: NotebookEditArgs, cell: dict[str, Any], nb: Notebook, before: str, after: str) -> Any:
    """Claude Code's NotebookEdit result, for a PostToolUse hook's `tool_response`."""
    return {
        "new_source": source_of(cell) if args.edit_mode != "delete" else args.new_source,
        "cell_id": cell_name(cell, int(cell["_index"])),
        "cell_type": cell.get("cell_type", "code"),
        "language": nb.language,
        "edit_mode": args.edit_mode,
        "error": "",
        "notebook_path": str(path),
        "original_file": before,
        "updated_file": after,
    }
