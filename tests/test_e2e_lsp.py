"""A Claude Code plugin's language server (`.lsp.json`) on the real `arnes`, with a real server
(python-lsp-server with pyflakes, the dev extra): the LSP tool answers from it, its diagnostics
follow an Edit as they do in Claude Code, a location in a file the Read rules hide is left out,
and a server that cannot start is said in one line while the edit still stands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes

pytest.importorskip("pylsp", reason="python-lsp-server (the dev extra) is the real language server here")

APP = "from helpers import area\n\n\ndef total(w, h):\n    return area(w, h)\n\n\nprint(total(2, 3))\n"
HELPERS = '"""Shapes."""\n\n\ndef area(w, h):\n    """The area of a w by h rectangle."""\n    return w * h\n'
# A long wait bound: the test waits for the server's word, never for a time (the bound only caps a hang).
WAIT = {"ARNES_LSP_WAIT": "120"}


def _lsp_plugin(servers: dict[str, Any]) -> None:
    home = Path(os.environ["HOME"])
    root = home / ".claude" / "plugins" / "cache" / "market" / "pyls" / "1.0.0"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "pyls", "version": "1.0.0"}))
    (root / ".lsp.json").write_text(json.dumps(servers))
    records = {"pyls@market": [{"scope": "user", "installPath": str(root), "version": "1.0.0"}]}
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": records}))
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"pyls@market": True}}))


PYLSP = {"python": {"command": sys.executable, "args": ["-m", "pylsp"], "extensionToLanguage": {".py": "python"}}}


def _run(tmp_path: Path, ws: Path, turns: list[dict[str, Any]], *flags: str) -> list[dict[str, Any]]:
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", *flags, "go", env=WAIT, timeout=240)  # fmt: skip
    assert done.code == 0, done.err
    return [e for e in read_trace(trace) if e["event"] == "tool_result"]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(APP)
    (ws / "helpers.py").write_text(HELPERS)
    return ws


def test_the_lsp_tool_answers_from_a_plugins_language_server(tmp_path: Path) -> None:
    _lsp_plugin(PYLSP)
    ws = _workspace(tmp_path)
    at_call = {"filePath": "app.py", "line": 5, "character": 13}  # `area` in `return area(w, h)`
    turns = [
        {"tool_calls": [{"name": "LSP", "input": {"operation": "goToDefinition", **at_call}}]},
        {"tool_calls": [{"name": "LSP", "input": {"operation": "hover", **at_call}}]},
        {"tool_calls": [{"name": "LSP", "input": {"operation": "documentSymbol", "filePath": "helpers.py"}}]},
        {"tool_calls": [{"name": "LSP", "input": {"operation": "findReferences", **at_call}}]},
        {"text": "done"},
    ]
    results = _run(tmp_path, ws, turns)
    assert [r["is_error"] for r in results] == [False] * 4, results
    definition, hover, outline, references = (r["output"] for r in results)
    assert definition == "helpers.py:4:5"
    assert "The area of a w by h rectangle." in hover
    assert "function area (line 4)" in outline
    assert "app.py:5:12" in references and "app.py:1:21" in references and "helpers.py:4:5" in references


def test_an_edit_gets_the_servers_diagnostics_and_hidden_files_stay_out(tmp_path: Path) -> None:
    """A file the Read rules deny is hidden from the server itself (it runs in the sandbox)."""
    _lsp_plugin(PYLSP)
    ws = _workspace(tmp_path)
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(helpers.py)"]}}))
    edit = {"file_path": "app.py", "old_string": "return area(w, h)", "new_string": "return area(w, height)"}
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]},
        {"tool_calls": [{"name": "Edit", "input": edit}]},
        {
            "tool_calls": [
                {
                    "name": "LSP",
                    "input": {"operation": "goToDefinition", "filePath": "app.py", "line": 5, "character": 13},
                }
            ]
        },
        {"text": "done"},
    ]
    results = _run(tmp_path, ws, turns, "--trust")
    edited, definition = results[1]["output"], results[2]["output"]
    assert "Diagnostics from plugin_pyls_python for app.py:" in edited
    assert "app.py:5:20: error: undefined name 'height' (pyflakes)" in edited
    assert definition == "None found."


def test_a_server_that_cannot_start_is_one_line_and_the_edit_stands(tmp_path: Path) -> None:
    _lsp_plugin({"python": {"command": "/nonexistent/langserver", "extensionToLanguage": {".py": "python"}}})
    ws = _workspace(tmp_path)
    edit = {"file_path": "app.py", "old_string": "print(total(2, 3))", "new_string": "print(total(3, 4))"}
    turns = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]},
        {"tool_calls": [{"name": "Edit", "input": edit}]},
        {"text": "done"},
    ]
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "acceptEdits", "go", env=WAIT)  # fmt: skip
    assert done.code == 0, done.err
    assert "print(total(3, 4))" in (ws / "app.py").read_text()
    lines = [line for line in done.out.splitlines() if "language server plugin_pyls_python did not start" in line]
    assert len(lines) == 1 and "/nonexistent/langserver" in lines[0], done.out


def test_a_location_in_a_file_the_rules_hide_is_left_out_of_the_answer(tmp_path: Path) -> None:
    """What the server knows of a file the session may not read (an answer from its index, a
    server run without a sandbox) is not passed on: the location is counted, not shown."""
    from arnes.lsp.hub import LspHub
    from arnes.lsp.tool import LspTool
    from arnes.tools.base import ToolContext

    ctx = ToolContext(tmp_path, hidden=lambda tool, path: path.name == "secret.py")
    tool = LspTool(LspHub([], tmp_path, lambda entry: None, lambda: tmp_path))  # type: ignore[arg-type, return-value]
    found = [
        {"uri": (tmp_path / "secret.py").as_uri(), "range": {"start": {"line": 0, "character": 4}}},
        {"uri": (tmp_path / "app.py").as_uri(), "range": {"start": {"line": 2, "character": 0}}},
    ]
    shown = tool._locations(found, ctx)
    assert shown.splitlines() == ["app.py:3:1", "(1 in files your Read rules hide or outside any file, left out)"]


def test_a_language_server_the_project_turns_on_waits_for_trust(tmp_path: Path) -> None:
    """A plugin enabled by the repository's own settings is the project's grant: its language
    server is a program like its hooks, so the LSP tool is offered only once the folder is trusted."""
    _lsp_plugin(PYLSP)
    home = Path(os.environ["HOME"])
    (home / ".claude" / "settings.json").write_text(json.dumps({}))  # not yours: the project's switch
    ws = _workspace(tmp_path)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"pyls@market": True}}))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))

    def tools(*flags: str) -> list[str]:
        run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws),
                        "--output-format", "stream-json", *flags, "go")  # fmt: skip
        assert run.code == 0, run.err
        init = json.loads(run.out.splitlines()[0])
        return list(init["tools"])

    assert "LSP" not in tools()
    assert "LSP" in tools("--trust")
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "plugin_pyls_python" in doctor.out and "for .py" in doctor.out
    assert "refused: untrusted folder (`arnes trust` to start it)" in doctor.out


def test_a_fifo_under_a_served_name_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A repository's `pipe.py` that is a FIFO: asking about it (or it after a write) never blocks."""
    _lsp_plugin(PYLSP)
    ws = _workspace(tmp_path)
    os.mkfifo(ws / "pipe.py")
    turns = [
        {"tool_calls": [{"name": "LSP", "input": {"operation": "documentSymbol", "filePath": "pipe.py"}}]},
        {"text": "done"},
    ]
    [result] = _run(tmp_path, ws, turns)
    assert result["is_error"] and "not a regular file" in result["output"]
