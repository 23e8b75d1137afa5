"""End to end: the short flags of Claude Code and Codex that scripts and fingers type, with the real `arnes`."""

from __future__ import annotations

from pathlib import Path

from arnes import __version__
from tests.conftest import run_arnes


def test_dash_v_prints_the_version_as_claude_code_does() -> None:
    for flag in ("-v", "--version"):
        run = run_arnes(flag)
        assert (run.code, run.out.strip()) == (0, f"arnes {__version__}"), run.err


def test_codex_short_flags_m_and_c_choose_the_model_and_the_workspace(tmp_path: Path) -> None:
    from tests.fakes.llm_server import FakeLLMServer

    ws = tmp_path / "ws"
    ws.mkdir()
    write = {"name": "Write", "input": {"file_path": "made.txt", "content": "x\n"}}
    with FakeLLMServer([{"tool_calls": [write]}, {"text": "done"}]) as server:
        run = run_arnes("-p", "--provider", "openai", "--base-url", server.url + "/v1", "-m", "codex-model",
                        "-C", str(ws), "--permission-mode", "acceptEdits", "--context-window", "32768", "go",
                        cwd=tmp_path, env={"OPENAI_API_KEY": "k"})  # fmt: skip
        models = [body["model"] for _, body in server.requests]
    assert run.code == 0, run.err
    assert models == ["codex-model", "codex-model"] and (ws / "made.txt").read_text() == "x\n"


def scripted(tmp_path: Path, *argv: str) -> tuple[int, str]:
    import json

    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(tmp_path), *argv)
    return run.code, run.out + run.err


def test_codex_sandbox_and_approval_flags_are_one_warning_naming_arnes_flag(tmp_path: Path) -> None:
    for flag, value in (("-s", "workspace-write"), ("-a", "never")):
        code, said = scripted(tmp_path, flag, value, "hi")
        warned = [line for line in said.splitlines() if f"{flag} ignored:" in line]
        assert code == 0 and len(warned) == 1 and "--permission-mode" in warned[0], said
    code, said = scripted(tmp_path, "-s", "fix", "the", "bug")
    assert code == 2 and "argument -s: invalid choice: 'fix'" in said and "Traceback" not in said


def test_a_prompt_word_is_never_taken_for_a_short_flag(tmp_path: Path) -> None:
    code, said = scripted(tmp_path, "-m is the flag that breaks")  # one quoted word: the task
    assert code == 0 and "ok" in said, said
    code, said = scripted(tmp_path, "fix", "the", "-v", "flag")
    assert code == 2 and "-v after the task's first word" in said and "arnes 0" not in said, said
    code, said = scripted(tmp_path, "--", "fix", "the", "-v", "flag")
    assert code == 0 and "ok" in said, said
