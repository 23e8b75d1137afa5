"""NotebookEdit and Read of a .ipynb, as Claude Code documents them, through the real `arnes`: the
notebook is shown cell by cell with its ids, one cell is replaced, inserted or deleted, and the
rest of the file (metadata, other cells, their outputs) is written back as it was. It is a write
like Edit: read before edit, the gate, protected paths, plan mode and rewind hold for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from arnes.llm.profiles import profile_for
from tests.conftest import run_arnes, scripted_run

OUTPUT = {"output_type": "stream", "name": "stdout", "text": ["total 42\n"]}
PICTURE = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": ["<Figure>"]}, "metadata": {}}


def notebook(minor: int = 5) -> dict[str, Any]:
    def code(cid: str, source: list[str], outputs: list[Any], count: int) -> dict[str, Any]:
        cell = {"cell_type": "code", "execution_count": count, "id": cid, "metadata": {"tags": ["keep"]},
                "outputs": outputs, "source": source}  # fmt: skip
        return cell if minor >= 5 else {k: v for k, v in cell.items() if k != "id"}

    intro = {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Sales\n", "Totals by month (€)."]}
    return {
        "cells": [
            intro if minor >= 5 else {k: v for k, v in intro.items() if k != "id"},
            code("load", ["import pandas as pd\n", "df = pd.read_csv('s.csv')"], [], 1),
            code("total", ["print('total', df.x.sum())"], [OUTPUT], 2),
            code("plot", ["df.plot()"], [PICTURE], 3),
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.12.1"},
        },
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def write_nb(path: Path, minor: int = 5) -> str:
    """As Jupyter writes it: indent 1, keys sorted, non-ASCII as is, a newline at the end."""
    text = json.dumps(notebook(minor), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text)
    return text


def results(trace: Path) -> list[dict[str, Any]]:
    return [e for e in read_trace(trace) if e["event"] == "tool_result"]


def edit(**given: Any) -> dict[str, Any]:
    return {"name": "NotebookEdit", "input": {"notebook_path": "sales.ipynb", **given}}  # a later key wins


def test_read_shows_cells_with_ids_and_edits_keep_everything_else(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    original = write_nb(ws / "sales.ipynb")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "sales.ipynb"}}]},
        {"tool_calls": [edit(cell_id="total", new_source="print('sum', df.x.sum())\nprint('done')")]},
        {"tool_calls": [edit(cell_id="intro", new_source="Notes.", cell_type="markdown", edit_mode="insert")]},
        {"tool_calls": [edit(new_source="%matplotlib inline", cell_type="code", edit_mode="insert")]},
        {"tool_calls": [edit(cell_id="load", new_source="", edit_mode="delete")]},
        {"text": "done"},
    ]
    trace, said = scripted_run(tmp_path, ws, turns, "--permission-mode", "acceptEdits")
    read, replaced, inserted, first, deleted = results(trace)
    shown = read["output"]
    assert '<cell id="intro" type="markdown">\n# Sales\nTotals by month (€).\n</cell>' in shown
    assert '<cell id="total" type="code" execution_count="2">' in shown and "total 42" in shown
    assert "[image/png output]" in shown and "<Figure>" in shown and "iVBOR" not in shown
    assert not any(r.get("is_error") for r in (replaced, inserted, first, deleted)), said
    assert "outputs were cleared" in replaced["output"] and "Deleted cell load" in deleted["output"]
    after = json.loads((ws / "sales.ipynb").read_text())
    before = notebook()
    assert after["metadata"] == before["metadata"] and after["nbformat_minor"] == 5
    cells = after["cells"]
    assert [c.get("id") for c in cells][1:3] == ["intro", cells[2]["id"]] and len(cells) == 5
    magic, intro, notes, total, plot = cells
    assert magic["cell_type"] == "code" and magic["source"] == ["%matplotlib inline"] and magic["outputs"] == []
    assert len(magic["id"]) == 8 and len(notes["id"]) == 8 and magic["id"] != notes["id"]  # nbformat 4.5: new ids
    assert notes == {"cell_type": "markdown", "id": notes["id"], "metadata": {}, "source": ["Notes."]}
    assert intro == before["cells"][0] and plot == before["cells"][3]  # untouched, outputs and all
    assert total["source"] == ["print('sum', df.x.sum())\n", "print('done')"]
    assert total["outputs"] == [] and total["execution_count"] is None and total["metadata"] == {"tags": ["keep"]}
    assert (ws / "sales.ipynb").read_text() != original


def test_cells_without_ids_are_named_by_position_and_get_no_new_id(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_nb(ws / "sales.ipynb", minor=4)
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "sales.ipynb"}}]},
        {"tool_calls": [edit(cell_id="cell-1", new_source="x = 1", cell_type="code", edit_mode="insert")]},
        {"tool_calls": [edit(cell_id="nope", new_source="y")]},
        {"text": "done"},
    ]
    trace, said = scripted_run(tmp_path, ws, turns, "--permission-mode", "acceptEdits")
    read, inserted, missing = results(trace)
    assert '<cell id="cell-1" type="code" execution_count="1">' in read["output"]
    assert not inserted.get("is_error"), said
    assert missing["is_error"] and "no cell with id 'nope'" in missing["output"] and "cell-0" in missing["output"]
    expected = notebook(minor=4)
    expected["cells"].insert(2, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                 "source": ["x = 1"]})  # fmt: skip
    # byte for byte as Jupyter would write it: the rest of the file did not move
    assert (ws / "sales.ipynb").read_text() == json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_an_unread_notebook_is_refused_and_shown_as_read_shows_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    original = write_nb(ws / "sales.ipynb")
    turns = [{"tool_calls": [edit(cell_id="total", new_source="pass")]}, {"text": "done"}]
    trace, _ = scripted_run(tmp_path, ws, turns, "--permission-mode", "acceptEdits")
    (refused,) = results(trace)
    assert refused["is_error"] and "has not been read yet, so this NotebookEdit was not made" in refused["output"]
    assert '<cell id="total" type="code" execution_count="2">' in refused["output"]
    assert (ws / "sales.ipynb").read_text() == original


def test_it_is_a_write_for_the_gate_plan_mode_rules_and_no_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    original = write_nb(ws / "sales.ipynb")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "sales.ipynb"}}]},
        {"tool_calls": [edit(cell_id="total", new_source="pass")]},
        {"text": "done"},
    ]
    for i, (flags, why) in enumerate(
        [
            (("--permission-mode", "plan"), "plan mode: no writes"),
            ((), "(no terminal to ask)"),
            (("--permission-mode", "acceptEdits", "--disallowedTools", "Edit(*.ipynb)", "--"), "Edit(*.ipynb)"),
            (("--permission-mode", "acceptEdits", "--disallowedTools", "NotebookEdit", "--"), "NotebookEdit"),
        ]
    ):
        (tmp_path / str(i)).mkdir()
        trace, said = scripted_run(tmp_path / str(i), ws, turns, *flags)
        denied = results(trace)[1]
        assert denied["is_error"] and "denied" in denied["output"].lower() and why in denied["output"], said
        assert (ws / "sales.ipynb").read_text() == original


def test_a_notebook_in_a_protected_folder_is_never_written(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    original = write_nb(ws / ".git" / "n.ipynb")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": ".git/n.ipynb"}}]},
        {"tool_calls": [edit(cell_id="total", new_source="pass", notebook_path=".git/n.ipynb")]},
        {"text": "done"},
    ]
    trace, _ = scripted_run(tmp_path, ws, turns, "--permission-mode", "bypass")
    denied = results(trace)[1]
    assert denied["is_error"] and "is protected" in denied["output"]
    assert (ws / ".git" / "n.ipynb").read_text() == original


def test_the_edit_is_a_checkpointed_change_rewind_takes_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    original = write_nb(ws / "sales.ipynb")
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "sales.ipynb"}}]},
        {"tool_calls": [edit(cell_id="plot", new_source="", edit_mode="delete")]},
        {"text": "done"},
    ]
    _, said = scripted_run(tmp_path, ws, turns, "--permission-mode", "acceptEdits")
    assert (ws / "sales.ipynb").read_text() != original, said
    assert "sales.ipynb" in said  # the run's closing diff names it
    done = run_arnes("-w", str(ws), "rewind", "1", "--code-only")
    assert done.code == 0, done.err
    assert (ws / "sales.ipynb").read_text() == original


def test_small_models_are_not_offered_it() -> None:
    assert "NotebookEdit" in profile_for("qwen2.5-coder:7b").not_offered
    assert "NotebookEdit" not in profile_for("claude-sonnet-4-5").not_offered
