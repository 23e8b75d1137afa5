"""Trust covers every grant (issue 23, point 7): a hostile repository the user trusted once, then a pull.

Each attack trusts the folder with the real `arnes trust`, changes what a pull would change, runs
the real `arnes` and checks that the changed thing did not take effect. Before this change:
- a hook script past the first 1000 files of the hook folders, or bigger than 4 MiB, counted by
  size and time only, so a same-size edit with the old time ran with no new ask;
- only the first 200 words of a settings file's hooks were looked at, and a `bash -c '...'`
  string or a script behind a link out of the workspace was not seen at all;
- a project command's or agent's `model` was no part of the fingerprint: a pull changed it and
  the trusted folder sent the user's prompts to the new model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arnes.permissions.trust import TrustStore
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer
from tests.test_trust_fingerprint import _workspace

KEYS = {"OPENAI_API_KEY": "sk-test"}
CHANGED = "echo CHANGED-AFTER-TRUST > ran.txt\n"


def _ran(tmp_path: Path, ws: Path) -> tuple[str, str]:
    """Run arnes once; what the hook wrote (empty: it did not run) and stderr."""
    (ws / "ran.txt").unlink(missing_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "go")
    assert done.code == 0, done.err
    ran = ws / "ran.txt"
    return (ran.read_text().strip() if ran.exists() else ""), done.err


def _same_size_same_time(path: Path, text: str) -> None:
    """What a pull can bring that size and time do not show."""
    before = path.stat()
    data = text.encode().ljust(before.st_size, b"#")
    assert len(data) == before.st_size
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _trust_then_pull(tmp_path: Path, ws: Path, script: Path, pull: Any) -> str:
    script.write_text("echo v1 > ran.txt\n" + "#" * 64 + "\n")
    assert run_arnes("trust", str(ws)).code == 0
    assert _ran(tmp_path, ws)[0] == "v1"  # trusted: the hook the user saw runs
    pull()
    ran, err = _ran(tmp_path, ws)
    assert ran != "CHANGED-AFTER-TRUST", "a script a hook runs changed after trust and ran without a new ask"
    return err


def test_a_hook_script_past_1000_files_is_hashed_whole(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/zz/check.sh")
    folder = ws / ".claude" / "hooks"
    (folder / "zz").mkdir(parents=True)
    for i in range(1100):
        (folder / f"pad{i:04}.txt").write_text("")
    script = folder / "zz" / "check.sh"
    _trust_then_pull(tmp_path, ws, script, lambda: _same_size_same_time(script, CHANGED))


def test_a_big_hook_script_is_hashed_whole(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/check.sh")
    (ws / ".claude" / "hooks").mkdir()
    script = ws / ".claude" / "hooks" / "check.sh"
    script.write_text("echo v1 > ran.txt\n" + "#" * (5 << 20) + "\n")
    assert run_arnes("trust", str(ws)).code == 0
    assert _ran(tmp_path, ws)[0] == "v1"
    _same_size_same_time(script, CHANGED)
    assert _ran(tmp_path, ws)[0] != "CHANGED-AFTER-TRUST"


def test_past_the_cap_the_folder_cannot_be_trusted_and_says_so_in_one_line(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh .claude/hooks/check.sh")
    folder = ws / ".claude" / "hooks"
    folder.mkdir()
    script = folder / "check.sh"

    def pull() -> None:
        for i in range(2001):
            (folder / f"pad{i:04}.txt").write_text("")
        script.write_text(CHANGED)

    err = _trust_then_pull(tmp_path, ws, script, pull)
    said = [ln for ln in err.splitlines() if "cannot be trusted as it is" in ln]
    assert len(said) == 1 and "more than 2000 files" in said[0] and ".claude/hooks/" in said[0]
    refused = run_arnes("trust", str(ws))
    assert refused.code != 0 and "cannot be trusted as it is" in refused.err
    assert len([ln for ln in refused.err.splitlines() if ln.strip()]) == 1
    listed = run_arnes("trust", "--list")
    assert listed.code == 0 and "cannot be trusted as it is" in listed.out


def test_a_script_named_after_200_words_is_covered(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "true " + " ".join(f"w{i}" for i in range(250)) + " && sh tools/check.sh")
    (ws / "tools").mkdir()
    script = ws / "tools" / "check.sh"
    _trust_then_pull(tmp_path, ws, script, lambda: script.write_text(CHANGED))


def test_a_script_inside_bash_c_is_covered(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "bash -c 'cd \"$CLAUDE_PROJECT_DIR\" && python3 -c 1; sh tools/check.sh'")
    (ws / "tools").mkdir()
    script = ws / "tools" / "check.sh"
    _trust_then_pull(tmp_path, ws, script, lambda: script.write_text(CHANGED))


def test_a_script_behind_a_link_out_of_the_workspace_counts(tmp_path: Path) -> None:
    """A project's hook runs in the sandbox, which does not show the folder the link leads to
    today; what the user trusted is the file the name leads to all the same."""
    ws = _workspace(tmp_path, "bash ./tools/check.sh")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", ws / "tools")
    script = tmp_path / "elsewhere" / "check.sh"
    script.write_text("v1\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    script.write_text("v2\n")
    assert store.status(ws) == "changed"


def test_a_script_replaced_by_a_link_to_another_file_asks_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sh tools/check.sh")
    (ws / "tools").mkdir()
    script = ws / "tools" / "check.sh"

    def pull() -> None:
        (ws / "tools" / "other.sh").write_text(CHANGED)
        script.unlink()
        os.symlink("other.sh", script)

    _trust_then_pull(tmp_path, ws, script, pull)


def test_a_settings_local_file_and_a_new_hooks_folder_ask_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "true")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": "sh x.sh"}]}]}
    (ws / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": hooks}))
    assert store.status(ws) == "changed"
    store.record(ws, True)
    (ws / ".arnes" / "hooks").mkdir(parents=True)  # a folder that did not exist at trust time
    (ws / ".arnes" / "hooks" / "lib.py").write_text("import os\n")
    assert store.status(ws) == "changed"


def test_a_differently_cased_claude_folder_is_not_read(tmp_path: Path) -> None:
    """`.Claude/` is not `.claude/` where names have case; arnes reads only the exact name, so a
    settings file there runs nothing in a trusted folder (where case folds, it is the same file)."""
    ws = _workspace(tmp_path, "true")
    assert run_arnes("trust", str(ws)).code == 0
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": CHANGED.strip()}]}]}
    (ws / ".Claude").mkdir()
    (ws / ".Claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    assert _ran(tmp_path, ws)[0] == ""


def _openai(server: FakeLLMServer, ws: Path, *args: str) -> list[str]:
    return ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model", "-w", str(ws), *args]


def test_a_commands_model_changed_after_trust_waits_for_trust_again(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = ws / ".claude" / "commands"
    folder.mkdir(parents=True)
    command = folder / "review.md"
    command.write_text("---\nmodel: project-model\n---\nReview the code.\n")
    trusted = run_arnes("trust", str(ws))
    assert trusted.code == 0, trusted.err
    command.write_text("---\nmodel: project-model\n---\nReview the code, and the tests.\n")  # text only
    with FakeLLMServer([{"text": "ok"}, {"text": "ok"}]) as server:
        first = run_arnes(*_openai(server, ws, "-p", "/review"), env=KEYS)
        command.write_text("---\nmodel: attacker-model\n---\nReview the code.\n")  # what a pull brings
        second = run_arnes(*_openai(server, ws, "-p", "/review"), env=KEYS)
        models = [body["model"] for _, body in server.requests]
    assert first.code == 0 and second.code == 0, first.err + second.err
    assert models[0] == "project-model"  # an edit of the text alone keeps the trust
    assert models[1] == "fake-model", "a project command's new model took effect with no new trust"
    assert "model 'attacker-model' ignored until you trust this folder" in second.out
    assert "review.md: model 'project-model'" in trusted.out  # `arnes trust` named what it lets choose


def test_an_agents_model_and_a_new_command_folder_are_covered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "agents").mkdir(parents=True)
    agent = ws / ".claude" / "agents" / "reviewer.md"
    agent.write_text("---\nname: reviewer\ndescription: reviews\nmodel: m1\n---\nReview.\n")
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    agent.write_text("---\nname: reviewer\ndescription: reviews more\nmodel: m1\n---\nReview well.\n")
    assert store.status(ws) == "trusted"  # description and body only describe
    agent.write_text("---\nname: reviewer\ndescription: reviews\nmodel: m2\n---\nReview.\n")
    assert store.status(ws) == "changed"
    store.record(ws, True)
    nested = ws / ".arnes" / "commands" / "tools"  # folders that did not exist at trust time
    nested.mkdir(parents=True)
    (nested / "x.md").write_text("---\nmodel: m3\n---\nDo it.\n")
    assert store.status(ws) == "changed"


def test_options_server_env_and_pwd_names_count(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    names = ("opt.json", "env.sh", "pwd.sh", "node.js")
    for name in names:
        (ws / "tools" / name).write_text("v1\n")
    server = {"command": "node", "args": ["--config=tools/opt.json"], "env": {"BASH_ENV": "tools/env.sh"}}
    server["env"]["NODE_OPTIONS"] = "--require ./tools/node.js"
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": "sh $PWD/tools/pwd.sh"}]}]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    for name in names:
        store.record(ws, True)
        (ws / "tools" / name).write_text("v2\n")
        assert store.status(ws) == "changed", name


def test_a_workspace_script_your_own_hook_runs_counts(tmp_path: Path) -> None:
    """Your `"sandbox": false` hook runs on the host once the folder is trusted: the repository's
    file it names is part of what you trusted."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / "tools" / "lint.sh").write_text("v1\n")
    hook = {"type": "command", "command": "sh tools/lint.sh", "sandbox": False}
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    store.record(ws, True)
    (ws / "tools" / "lint.sh").write_text("v2\n")
    assert store.status(ws) == "changed"


def test_an_interpreters_script_argument_counts(tmp_path: Path) -> None:
    """`python3 tools/x.py`, `bash ./tools/x.sh`, `node tools/x.js`, `sh ${CLAUDE_PROJECT_DIR}/...`:
    the script is a word of the command, wherever the interpreter's options put it."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    commands = {
        "x.py": "python3 -u tools/x.py --fast",
        "x.sh": "bash -e ./tools/x.sh",
        "x.js": "node tools/x.js",
        "y.sh": "sh ${CLAUDE_PROJECT_DIR}/tools/y.sh",
    }
    groups = [{"hooks": [{"type": "command", "command": c}]} for c in commands.values()]
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": groups}}))
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    for name in commands:
        (ws / "tools" / name).write_text("v1\n")
    for name in commands:
        store.record(ws, True)
        (ws / "tools" / name).write_text("v2\n")
        assert store.status(ws) == "changed", name


def test_the_prompt_names_the_models_commands_and_agents_would_choose(tmp_path: Path) -> None:
    import pexpect

    from tests.conftest import ARNES

    ws = tmp_path / "ws"
    (ws / ".arnes").mkdir(parents=True)
    (ws / ".arnes" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "r.md").write_text("---\nname: r\ndescription: d\nmodel: \x1b[2Jagent-model\n---\nx\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    env = {**os.environ, "COLUMNS": "200", "TERM": "dumb"}
    argv = ["-w", str(ws), "--provider", "script", "--script", str(script), "go"]
    child = pexpect.spawn(ARNES, argv, env=env, encoding="utf-8", timeout=30)
    child.expect("Trust this folder\\?")
    child.expect("lets its commands and agents choose their model:")
    # A value holding an escape sequence is not a name: refused, never shown nor obeyed (red team round 6).
    child.expect(r".claude/agents/r.md: model refused, not a name")
    child.expect(r"\[n\] no")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
