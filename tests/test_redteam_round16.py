"""Red team, round 16 (docs/redteam/round16.md): wrappers and programs the deny rules did not see
through, a hook's `if` narrower than the deny rule it copies, git printing hidden files' object ids,
CLAUDE_ENV_FILE names that make judged programs run planted code, and an MCP time-out that
overflowed. Each test fails before its fix."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from arnes.agent.trace import read_trace
from arnes.extensions.hook_env import read_env_file
from tests.conftest import run_arnes, scripted_run

GIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"]


def _bash(*commands: str) -> list[dict[str, object]]:
    return [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands]


def _results(trace: Path) -> list[dict[str, object]]:
    return [e for e in read_trace(trace) if e["event"] == "tool_result"]


def test_06_a_command_denied_by_name_is_denied_behind_any_wrapper_and_missing_in_the_sandbox(tmp_path: Path) -> None:
    """`--deny 'Bash(rm:*)'`: util-linux's wrappers, a debugger, capsh and valgrind ran rm; and a
    program the rules cannot read through (python's subprocess) still finds no rm to run."""
    ws = tmp_path / "ws"
    ws.mkdir()
    wrapped = ["prlimit --nofile=100 rm -f v1", "setpriv rm -f v2", "setarch x86_64 rm -f v3", "linux64 rm -f v4",
               "gdb -batch -ex run --args rm -f v5", "valgrind -q rm -f v6", "capsh -- -c 'rm -f v7'"]  # fmt: skip
    inner = "python3 -c \"import subprocess; subprocess.run(['rm', '-f', 'v8'])\""
    for n in range(1, 9):
        (ws / f"v{n}").write_text("keep\n")
    trace, out = scripted_run(tmp_path, ws, [*_bash(*wrapped, inner, "ls v1 && echo still-runs"), {"text": "done"}],
                              "--permission-mode", "acceptEdits", "--deny", "Bash(rm:*)")  # fmt: skip
    results = _results(trace)
    assert len(results) == 9, out
    assert all(r["is_error"] for r in results[:7]), results
    assert all(("rule Bash(rm:*)" in str(r["output"])) or "cannot be checked" in str(r["output"]) for r in results[:7])
    assert "Permission denied" in str(results[7]["output"])  # python ran; rm was not there to run
    assert not results[8]["is_error"] and "still-runs" in str(results[8]["output"])
    assert sorted(p.name for p in ws.iterdir() if p.name.startswith("v")) == [f"v{n}" for n in range(1, 9)]


def _guard(condition: str) -> None:
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "if": condition, "command": "echo guard-ran >&2; exit 2"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read|Grep|Glob|Bash", "hooks": [hook]}]}}))


def test_04_05_a_hooks_if_runs_for_what_the_same_deny_rule_would_stop(tmp_path: Path) -> None:
    """`"if": "Read(secrets/**)"` skipped a Grep of the workspace and `cat src/../secrets/x`;
    `"if": "Bash(git push:*)"` skipped `prlimit git push`."""
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "secrets" / "prod.cfg").write_text("db_password=HUNTER2-XYZ\n")
    _guard("Read(secrets/**)")
    grep = {"tool_calls": [{"name": "Grep", "input": {"pattern": "db_password", "output_mode": "content"}}]}
    calls = [grep, *_bash("cat src/../secrets/prod.cfg", "tail -n +1 secrets/prod.cfg", "ls src"), {"text": "done"}]
    trace, out = scripted_run(tmp_path, ws, calls, "--permission-mode", "bypassPermissions")
    results = _results(trace)
    assert [("guard-ran" in str(r["output"])) for r in results] == [True, True, True, False], results
    assert "HUNTER2" not in json.dumps(results)
    _guard("Bash(git push:*)")
    subprocess.run([*GIT, "init", "-q"], cwd=ws, check=True)
    trace2 = tmp_path / "t.jsonl"
    trace2.unlink()
    trace, out = scripted_run(tmp_path, ws, [*_bash("prlimit --nofile=100 git push", "setarch x86_64 git push"),
                                             {"text": "done"}], "--permission-mode", "bypassPermissions")  # fmt: skip
    assert all("guard-ran" in str(r["output"]) for r in _results(trace)), out


def test_03_git_does_not_print_a_hidden_files_object_id(tmp_path: Path) -> None:
    """A blob id is a hash of the content: `git ls-tree` and `git rev-parse HEAD:.env` gave away a
    four-digit PIN in the hidden `.env` to an offline search."""
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=ws, check=True)
    (ws / ".env").write_text("DB_PIN=4821\n")
    (ws / "app.py").write_text("print('hi')\n")
    subprocess.run([*GIT, "add", "-f", "-A"], cwd=ws, check=True)
    subprocess.run([*GIT, "commit", "-qm", "x"], cwd=ws, check=True)
    blob = subprocess.run(["git", "rev-parse", "HEAD:.env"], cwd=ws, capture_output=True, text=True).stdout.strip()
    commands = ["git ls-tree -l HEAD", "git rev-parse HEAD:.env", "git ls-files -s", "git hash-object .env",
                "git rev-list --objects --all", "git ls-tree --name-only HEAD", "git rev-parse HEAD"]  # fmt: skip
    trace, out = scripted_run(tmp_path, ws, [*_bash(*commands), {"text": "done"}], "--permission-mode", "acceptEdits")
    results = _results(trace)
    assert len(results) == 7, out
    assert all(r["is_error"] for r in results[:5]), results
    assert not results[5]["is_error"] and not results[6]["is_error"]  # names, and a commit's id, still work
    assert blob and blob not in json.dumps(results) + out


def test_07_claude_env_file_refuses_names_that_make_judged_programs_run_code(tmp_path: Path) -> None:
    text = "\n".join(
        f"export {name}=/x"
        for name in (
            "RIPGREP_CONFIG_PATH",
            "TAR_OPTIONS",
            "VISUAL",
            "MANPAGER",
            "GCONV_PATH",
            "JAVA_TOOL_OPTIONS",
            "PYTHONHOME",
            "MAKEFLAGS",
            "npm_config_script_shell",
            "GOFLAGS",
            "RUSTC_WRAPPER",
        )
    )
    got, said = read_env_file(text + "\nexport NODE_ENV=production\nexport STAGE=blue\n", {}, tmp_path)
    assert got == {"NODE_ENV": "production", "STAGE": "blue"}
    assert len(said) == 11 and all("run or load other code" in line for line in said)


def test_10_an_mcp_time_out_too_big_for_the_clock_is_one_clear_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    added = run_arnes("mcp", "add-json", "inf", '{"command": "python3", "timeout": 1e400}', cwd=ws)
    assert added.code == 2 and "timeout" in added.err and "Traceback" not in added.err
    (ws / ".mcp.json").write_text('{"mcpServers": {"srv": {"command": "python3", "timeout": 1e300}}}')
    _, out = scripted_run(tmp_path, ws, [{"text": "hi"}], "--trust")
    assert "mcpServers.srv.timeout" in out and "Traceback" not in out


def test_unscored_limits_take_ascii_digits() -> None:
    """An Arabic-Indic one in `BASH_DEFAULT_TIMEOUT_MS` was a 1 ms limit."""
    from arnes.envlimits import env_limits

    limits, said = env_limits({"BASH_DEFAULT_TIMEOUT_MS": "\u0661"})
    assert limits.bash_default_ms != 1 and "not a positive whole number" in said[0]
