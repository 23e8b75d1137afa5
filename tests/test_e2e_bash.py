"""Shell commands through the `arnes` command: the rules, the sandbox and the end of the session."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import ARNES, gone, run_arnes
from tests.test_sandbox import CONNECT, listener, outside, require  # noqa: F401  (fixtures)


def bash_turns(*commands: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "Bash", "input": {"command": c}}]} for c in commands]


def run_script(
    ws: Path, tmp_path: Path, turns: list[dict[str, Any]], *flags: str
) -> tuple[int, str, list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    trace = tmp_path / "t.jsonl"
    run = run_arnes(
        "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), *flags, "task"
    )
    return run.code, run.out, read_trace(trace)


def results(trace: list[dict[str, Any]]) -> list[str]:
    return [e["output"] for e in trace if e["event"] == "tool_result"]


def test_an_allowed_command_still_cannot_escape(shop: Path, tmp_path: Path, outside: Path, listener: int) -> None:  # noqa: F811
    require(Bubblewrap.unavailable())
    (shop / ".env").write_text("TOKEN=s3cr3t-value\n")
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(**/.env*)"]}}))
    code, out, trace = run_script(
        shop, tmp_path,
        bash_turns(
            f"python3 -c \"open('{outside}/escape.txt', 'w').write('x')\"",
            CONNECT.format(port=listener),
            "python3 -c \"print(open('.env').read())\"",
            "python3 -c \"open('made-inside.txt', 'w').write('ok')\"",
        ),
        "--permission-mode", "acceptEdits", "--sandbox", "bubblewrap", "--no-self-check",  # the four calls alone
    )  # fmt: skip
    assert code == 0
    assert "sandbox: bubblewrap" in out
    assert [e["decision"] for e in trace if e["event"] == "permission"] == ["allow"] * 4
    escape, network, secret, inside = results(trace)
    assert inside.startswith("exit code: 0")
    assert not (outside / "escape.txt").exists() and ("Read-only file system" in escape or "No such file" in escape)
    assert "hello" not in network
    assert "s3cr3t-value" not in secret and "Permission denied" in secret
    assert (shop / "made-inside.txt").read_text() == "ok"


def test_default_mode_runs_read_only_commands_and_asks_for_the_rest(shop: Path, tmp_path: Path) -> None:
    code, _, trace = run_script(
        shop, tmp_path, bash_turns("ls && git status; cat pricing.py | head -3", "touch new.txt")
    )
    assert code == 0
    perms = [(e["decision"], e["source"]) for e in trace if e["event"] == "permission"]
    assert perms == [("allow", "mode"), ("deny", "no-tty")]
    assert "Order pricing" in results(trace)[0] and not (shop / "new.txt").exists()


def test_without_a_sandbox_accept_edits_still_asks_and_the_banner_says_so(shop: Path, tmp_path: Path) -> None:
    code, out, trace = run_script(
        shop, tmp_path, bash_turns("touch new.txt"), "--permission-mode", "acceptEdits", "--sandbox", "off"
    )
    assert code == 0 and "sandbox: off" in out
    assert not (shop / "new.txt").exists()
    assert [e["source"] for e in trace if e["event"] == "permission"] == ["no-tty"]


def test_plan_mode_only_runs_read_only_commands(shop: Path, tmp_path: Path) -> None:
    code, _, trace = run_script(
        shop, tmp_path, bash_turns("ls", "touch x", "ls > listing.txt"), "--permission-mode", "plan"
    )
    assert code == 0
    assert [e["decision"] for e in trace if e["event"] == "permission"] == ["allow", "deny", "deny"]
    assert not (shop / "x").exists() and not (shop / "listing.txt").exists()


def test_deny_rules_hold_through_wrappers_and_substitutions(shop: Path, tmp_path: Path) -> None:
    (shop / "keep.txt").write_text("keep\n")
    commands = ["timeout 5 rm keep.txt", "echo $(rm keep.txt)", "bash -c 'ls && rm keep.txt'", "ls | xargs rm"]
    code, _, trace = run_script(
        shop, tmp_path, bash_turns(*commands), "--permission-mode", "bypass", "--deny", "Bash(rm:*)"
    )
    assert code == 0 and (shop / "keep.txt").exists()
    assert [e["reason"] for e in trace if e["event"] == "permission"] == ["rule Bash(rm:*)"] * 4


def test_ctrl_c_kills_a_running_command_and_its_children(shop: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": bash_turns(f"sleep 60 & echo $! > {pid_file}; wait")}))
    trace = tmp_path / "t.jsonl"
    proc = subprocess.Popen(
        [ARNES, "--provider", "script", "--script", str(script), "-w", str(shop), "--trace", str(trace),
         "--permission-mode", "bypass", "--sandbox", "off", "x"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert gone(int(pid_file.read_text())), "the command's child outlived Ctrl-C"


def test_background_shells_die_with_the_session(shop: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "bg.pid"
    turns = [
        {
            "tool_calls": [
                {"name": "Bash", "input": {"command": f"echo $$ > {pid_file}; sleep 60", "run_in_background": True}}
            ]
        },
        {"tool_calls": [{"name": "Bash", "input": {"command": f"until [ -s {pid_file} ]; do sleep 0.05; done"}}]},
    ]
    code, _, _ = run_script(shop, tmp_path, turns, "--permission-mode", "bypass", "--sandbox", "off")
    assert code == 0
    assert gone(int(pid_file.read_text())), "a background shell outlived its session"


def test_claude_codes_bash_time_limit_variables_hold(shop: Path, tmp_path: Path) -> None:
    """BASH_DEFAULT_TIMEOUT_MS (here from the settings' `env`) is the limit when the model names none;
    BASH_MAX_TIMEOUT_MS caps the limit the model names (both were fixed at 120 s and 600 s)."""
    import os

    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(
        json.dumps({"env": {"BASH_DEFAULT_TIMEOUT_MS": "1000", "BASH_MAX_TIMEOUT_MS": "1500"}})
    )
    turns = [
        *bash_turns("sleep 60"),
        {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 60", "timeout": 600000}}]},
    ]
    _, _, trace = run_script(shop, tmp_path, turns, "--permission-mode", "bypass")
    assert [r.split("\n")[0] for r in results(trace)] == [
        "Timed out after 1 s; the command and its children were killed.",
        "Timed out after 1.5 s; the command and its children were killed.",  # the model asked for 600 s
    ]


def test_a_bad_time_limit_variable_is_one_warning(shop: Path, tmp_path: Path) -> None:
    from arnes.envlimits import EnvLimits, env_limits

    assert env_limits({"BASH_DEFAULT_TIMEOUT_MS": "700000"}) == (EnvLimits(700_000, 700_000), [])  # max >= default
    limits, said = env_limits({"BASH_DEFAULT_TIMEOUT_MS": "2m", "BASH_MAX_TIMEOUT_MS": "1500"})
    assert limits == EnvLimits(120_000, 120_000)
    assert said == [
        "BASH_DEFAULT_TIMEOUT_MS='2m' is not a positive whole number; ignored (e.g. BASH_DEFAULT_TIMEOUT_MS=300000)"
    ]
