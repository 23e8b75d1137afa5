"""Claude Code's multi-line form of a command's shell context: a fenced block opened with ```!
runs as one Bash call, through the hooks, the gate and the sandbox, like `` !`cmd` ``, and its
output replaces the whole block."""

from __future__ import annotations

import json
from pathlib import Path

from arnes.agent.trace import read_trace
from arnes.extensions.command_shell import found_commands
from tests.conftest import run_arnes
from tests.test_e2e_commands import user_commands, workspace

BLOCK = "```!\ncat src/a.py\necho second-line\n```"


def test_blocks_and_lines_are_found_in_order() -> None:
    prompt = "A: !`pwd`\n```!\necho one !`date`\necho two\n```\nB: !`ls`\n```bash\nnot run\n```\n"
    assert [m.group(1).strip() for m in found_commands(prompt)] == ["pwd", "echo one !`date`\necho two", "ls"]
    assert found_commands("```!bash\nx\n```\n") == []  # the fence opens with ```! alone on its line


def test_a_fenced_block_runs_as_one_command_and_its_output_replaces_it(tmp_path: Path) -> None:
    touch = "```!\ntouch made.txt\necho made\n```"
    body = f"---\nallowed-tools: Bash(touch:*)\n---\nSeen:\n{BLOCK}\nMade:\n{touch}\nGo on.\n"
    ws = workspace(tmp_path, {"ctx": body})
    (user_commands() / "mine.md").write_text(body)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))

    def task(name: str, arguments: str = "") -> str:
        trace = tmp_path / f"{name}-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
        run = run_arnes("--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                        "-p", f"/{name} {arguments}".strip())  # fmt: skip
        assert run.code == 0, run.err
        first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
        return str(first["content"][-1]["text"]) + run.out + run.err

    said = task("ctx")  # a repository's command: the read runs, its allowed-tools grant nothing
    assert "Seen:\nexit code: 0\nprint('a')\nsecond-line\nMade:" in said and "```" not in said.split("Go on.")[0]
    assert "Made:\n[not run: " in said and not (ws / "made.txt").exists()
    assert "/ctx: `touch made.txt ... (2 lines)` not run: " in said  # the warning names the block by its first line
    said = task("mine", "```!\ntouch pwned\n```")  # yours: its allowed-tools allow touch; arguments stay text
    assert (ws / "made.txt").exists() and "Made:\nexit code: 0\nmade\nGo on." in said
    assert not (ws / "pwned").exists() and "touch pwned" in said
