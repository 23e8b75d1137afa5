"""`$ARGUMENTS`, `$1`.., `$ARGUMENTS[n]` and `${CLAUDE_PLUGIN_ROOT}` in a command's `` !`cmd` `` lines
and ```` ```! ```` blocks, on the real `arnes`: put in before the line runs, as Claude Code does,
but quoted, so what the user typed reaches the command as data and never as shell syntax."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes
from tests.test_e2e_commands import user_commands, workspace
from tests.test_e2e_plugins import _install

SHOW = (
    "---\nallowed-tools: Bash(echo:*), Bash(printf:*)\n---\n"
    "All: !`echo $ARGUMENTS`\n"
    'First: !`printf "[%s]" "$1"`\n'
    "Second: !`printf '[%s]' $ARGUMENTS[1]`\n"
    "Quoted: !`echo '$2'`\n"
    "Words: !`printf '<%s>' $ARGUMENTS`\n"
    "Then look at it.\n"
)


def first_prompt(tmp_path: Path, ws: Path, *task: str) -> str:
    script, trace = tmp_path / "s.json", tmp_path / f"t{len(list(tmp_path.glob('t*.jsonl')))}.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), "-p", *task)
    assert run.code == 0, run.err
    first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
    return str(first["content"][-1]["text"]) + "\n" + run.out + run.err


def test_arguments_reach_the_line_quoted_never_as_shell_syntax(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {})
    (user_commands() / "show.md").write_text(SHOW)
    typed = '/show "hi; touch pwned1" \'$(touch pwned2)\' "it\'s `touch pwned3`"'
    said = first_prompt(tmp_path, ws, typed)
    assert "All: exit code: 0\nhi; touch pwned1 $(touch pwned2) it's `touch pwned3`\n" in said, said
    assert "First: exit code: 0\n[hi; touch pwned1]" in said  # one word, as typed in quotes
    assert "Second: exit code: 0\n[$(touch pwned2)]" in said
    assert "Quoted: exit code: 0\n$(touch pwned2)\n" in said  # inside its single quotes, still one literal
    assert not any((ws / f"pwned{i}").exists() for i in (1, 2, 3))
    assert "ARGUMENTS:" not in said  # the lines took them, as Claude Code counts it
    # $ARGUMENTS outside quotes: each word typed is one word, whatever it holds
    assert "Words: exit code: 0\n<hi; touch pwned1><$(touch pwned2)><it's `touch pwned3`>" in said


def test_a_value_where_it_cannot_be_quoted_stops_the_line(tmp_path: Path) -> None:
    body = "---\nallowed-tools: Bash(cat:*)\n---\n```!\ncat <<EOF\nname: $1\nEOF\n```\nGo.\n"
    ws = workspace(tmp_path, {})
    (user_commands() / "doc.md").write_text(body)
    said = first_prompt(tmp_path, ws, "/doc", "a$(touch pwned)")
    assert "[not run: $1 stands in a here-document" in said and not (ws / "pwned").exists()
    assert "/doc: `cat <<EOF ... (3 lines)` not run: $1 stands in a here-document" in said  # the user is told
    plain = first_prompt(tmp_path, ws, "/doc", "release-1.2")  # plain text needs no quoting there
    assert "exit code: 0\nname: release-1.2\n" in plain


def test_a_plugins_command_finds_its_own_files_by_claude_plugin_root(tmp_path: Path) -> None:
    root = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "my market" / "kit" / "1.0.0"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "kit", "version": "1.0.0"}))
    (root / "commands").mkdir()
    (root / "data.txt").write_text("KIT-DATA\n")
    (root / "commands" / "data.md").write_text(
        "---\nallowed-tools: Bash(cat:*)\n---\nData: !`cat ${CLAUDE_PLUGIN_ROOT}/data.txt`\nUse it.\n"
    )
    _install({"kit@market": (root, True)})
    ws = workspace(tmp_path, {"mine": "Root: !`echo ${CLAUDE_PLUGIN_ROOT}none`\n"})
    said = first_prompt(tmp_path, ws, "/kit:data")
    assert "Data: exit code: 0\nKIT-DATA" in said, said  # the folder (with its space) quoted, readable in the sandbox
    mine = first_prompt(tmp_path, ws, "/mine")  # no plugin's: left as written, the shell's own (unset) variable
    assert "Root: exit code: 0\nnone" in mine


@pytest.mark.parametrize(
    ("script", "typed", "ran"),
    [
        ("git log $ARGUMENTS", "--oneline -5", "git log --oneline -5"),  # words stay words
        ("echo $1", "x;y", "echo 'x;y'"),
        ('echo "$ARGUMENTS"', 'a "b" `c` \\', 'echo "a \\"b\\" \\`c\\` \\\\"'),
        ("echo '$1'", "it's", "echo 'it'\\''s'"),
        ("echo $(echo $1)", "a|b", "echo $(echo 'a|b')"),
        ("echo \\$1", "x", "echo \\$1"),  # escaped: the shell's own $1
        ("echo $3", "a b", "echo "),  # past the last word: nothing, as in the prompt
    ],
)
def test_the_quoting_for_each_place(script: str, typed: str, ran: str) -> None:
    from arnes.extensions.commands import Command, shell_values
    from arnes.extensions.shell_args import substitute

    command = Command("c", "", Path("c.md"), "user", "")
    assert substitute(script, shell_values(command, typed))[0] == ran


@pytest.mark.parametrize("script", ["echo `echo $1`", 'echo "$(echo $1)"', "echo $'$1'", "(( $1 ))", "# $1"])
def test_places_arnes_cannot_read_take_plain_values_only(script: str) -> None:
    from arnes.extensions.commands import Command, shell_values
    from arnes.extensions.shell_args import Unquotable, substitute

    command = Command("c", "", Path("c.md"), "user", "")
    assert "v1.2" in substitute(script, shell_values(command, "v1.2"))[0]
    with pytest.raises(Unquotable):
        substitute(script, shell_values(command, "a;b"))
