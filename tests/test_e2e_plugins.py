"""Claude Code plugins the user installed, on the real `arnes` (DESIGN §16): the commands, agents
and skills of every user-scope plugin the user's settings enable load under the plugin's name
(`/kit:check`, agent `kit:critic`, skill `kit:style`), as Claude Code names them; a disabled plugin
loads nothing; its hooks and MCP servers run as the user's own do, sandboxed, with the plugin's
folder readable there; its output styles can be chosen; a part that does not parse is said, not
dropped. A plugin the project turns on, or a `--plugin-dir` inside the workspace, is the
project's grant: its hooks wait for trust."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from arnes.agent.trace import read_trace
from arnes.extensions.plugins import MANIFEST
from tests.conftest import run_arnes


def _plugin(root: Path, name: str, *, hooks: bool = False) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (root / "commands").mkdir()
    (root / "commands" / "check.md").write_text("---\ndescription: Check a path\n---\nCheck $ARGUMENTS (KIT-CHECK).\n")
    (root / "commands" / "lint.md").write_text("Lint $ARGUMENTS (KIT-LINT).\n")
    (root / "agents").mkdir()
    (root / "agents" / "critic.md").write_text("---\nname: critic\ndescription: Reviews\ntools: Read\n---\nCRITIC\n")
    (root / "skills" / "style").mkdir(parents=True)
    (root / "skills" / "style" / "SKILL.md").write_text(
        "---\nname: style\ndescription: The house style\n---\nUse tabs (KIT-STYLE).\n"
    )
    if hooks:
        (root / ".lsp.json").write_text(json.dumps({"python": {"command": "pylsp"}}))
    return root


def _install(plugins: dict[str, tuple[Path, bool]]) -> None:
    """Claude Code's records: where each plugin was installed (user scope), and which are enabled."""
    claude = Path(os.environ["HOME"]) / ".claude"
    (claude / "plugins").mkdir(parents=True, exist_ok=True)
    installed = {
        key: [{"scope": "user", "installPath": str(path), "version": "1.0.0"}] for key, (path, _) in plugins.items()
    }
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": installed}))
    enabled: dict[str, Any] = {key: on for key, (_, on) in plugins.items()}
    enabled["ghost@market"] = True  # enabled, never installed
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": enabled}))


def _installed_kits(tmp_path: Path) -> None:
    cache = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market"
    kit = _plugin(cache / "kit" / "1.0.0", "kit", hooks=True)
    off = _plugin(cache / "off" / "1.0.0", "off")
    _install({"kit@market": (kit, True), "off@market": (off, False)})


def test_an_enabled_plugins_command_agent_and_skill_load_under_its_name(tmp_path: Path) -> None:
    _installed_kits(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "/kit:check (user)" in doctor.out and "kit:style (user)" in doctor.out
    assert "kit:critic (user" in doctor.out
    assert "off:" not in doctor.out.replace("off@market", "")  # disabled: nothing of it loads
    # a language server without extensionToLanguage: one line naming the file and the key
    assert "lspServers.python.extensionToLanguage: Field required; its LSP servers do not start" in doctor.out
    assert "ghost@market is enabled" in doctor.out and "not installed" in doctor.out


def test_a_plugins_command_and_skill_run(tmp_path: Path) -> None:
    _installed_kits(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    turns = [{"tool_calls": [{"name": "Skill", "input": {"skill": "kit:style"}}]}, {"text": "checked"}]
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "/kit:check", "a.py")  # fmt: skip
    assert done.code == 0, done.err
    events = read_trace(trace)
    first = next(e for e in events if e["event"] == "message" and e["role"] == "user")
    assert "Check a.py (KIT-CHECK)." in "\n".join(b.get("text", "") for b in first["content"])
    [skill] = [e for e in events if e["event"] == "tool_result" and e["name"] == "Skill"]
    assert not skill["is_error"] and "Use tabs (KIT-STYLE)." in skill["output"], skill["output"]
    # Said at the start: the part of a plugin that does not parse, and the plugin arnes cannot find.
    said = done.out + done.err
    assert said.count("its LSP servers do not start") == 1 and said.count("ghost@market is enabled") == 1


def test_without_enabled_plugins_nothing_loads(tmp_path: Path) -> None:
    cache = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market"
    kit = _plugin(cache / "kit" / "1.0.0", "kit")
    _install({"kit@market": (kit, False)})
    ws = tmp_path / "ws"
    ws.mkdir()
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "kit:" not in doctor.out
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    unknown = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "/kit:check")
    assert unknown.code != 0 and "kit:check" in unknown.out + unknown.err


def test_a_repository_cannot_answer_to_a_plugins_names(tmp_path: Path) -> None:
    """Round 8, 05 and 08: a project's `.claude/commands/kit/check.md` would be `/kit:check`, a
    project skill named `kit:audit` would sit in the plugin's namespace, and a project's `check.md`
    took `/check` from the plugin's `kit:check`. The user's plugin keeps its names."""
    _installed_kits(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".claude" / "commands" / "kit").mkdir(parents=True)
    (ws / ".claude" / "commands" / "kit" / "check.md").write_text("PLANTED-NAMESPACED\n")
    (ws / ".claude" / "commands" / "lint.md").write_text("PLANTED-SHORT\n")
    (ws / ".claude" / "commands" / "ops").mkdir()
    (ws / ".claude" / "commands" / "ops" / "lint.md").write_text("PLANTED-OPS\n")
    (ws / ".claude" / "skills" / "audit").mkdir(parents=True)
    skill = "---\nname: kit:audit\ndescription: x\n---\nPLANTED\n"
    (ws / ".claude" / "skills" / "audit" / "SKILL.md").write_text(skill)
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "is in the namespace of your plugin kit" in doctor.out
    assert "holds ':', which only a plugin's skills have" in doctor.out
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    for typed in ("/kit:check", "/kit:lint", "/lint"):
        done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                         typed, "a.py")  # fmt: skip
        assert done.code == 0, done.err
        first = next(e for e in read_trace(trace) if e["event"] == "message" and e["role"] == "user")
        said = "\n".join(b.get("text", "") for b in first["content"])
        assert ("KIT-LINT" if "lint" in typed else "KIT-CHECK") in said and "PLANTED" not in said, (typed, said)
        trace.unlink()


GUARD = """\
import json, os, sys
call = json.load(sys.stdin)
if os.environ.get("CLAUDE_PLUGIN_ROOT") != os.path.dirname(os.path.dirname(os.path.abspath(__file__))):
    print("CLAUDE_PLUGIN_ROOT is not this plugin's folder", file=sys.stderr)
    sys.exit(2)
if "forbidden" in call["tool_input"].get("command", ""):
    print("the kit plugin's guard refuses this", file=sys.stderr)
    sys.exit(2)
"""


def test_a_plugins_hooks_and_mcp_servers_run_as_the_users_own(tmp_path: Path) -> None:
    """Claude Code's plugin layout: `hooks/hooks.json` and a root `.mcp.json` whose commands name
    files of the plugin as `${CLAUDE_PLUGIN_ROOT}`; the hook runs in the sandbox (the plugin's
    folder is readable there, the rest of home is not), the server's tools are
    `mcp__plugin_kit_tools__TOOL`."""
    cache = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market"
    kit = _plugin(cache / "kit" / "1.0.0", "kit")
    (kit / "hooks").mkdir()
    (kit / "hooks" / "guard.py").write_text(GUARD)
    command = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    (kit / "hooks" / "hooks.json").write_text(json.dumps({"description": "guard", "hooks": hooks}))
    shutil.copy(Path(__file__).parent / "fakes" / "mcp_server.py", kit / "server.py")
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", "stdio", "KIT-WORD"]}
    (kit / ".mcp.json").write_text(json.dumps({"tools": server}))  # the flat form plugins use
    _install({"kit@market": (kit, True)})
    ws = tmp_path / "ws"
    ws.mkdir()
    turns = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo forbidden > out.txt"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo allowed > out.txt"}}]},
        {"tool_calls": [{"name": "mcp__plugin_kit_tools__args", "input": {}}]},
        {"text": "done"},
    ]
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--permission-mode", "bypassPermissions", "go")  # fmt: skip
    assert done.code == 0, done.err
    results = [e for e in read_trace(trace) if e["event"] == "tool_result"]
    assert len(results) == 3
    assert results[0]["is_error"] and "the kit plugin's guard refuses this" in results[0]["output"]
    assert not results[1]["is_error"] and (ws / "out.txt").read_text() == "allowed\n"
    assert not results[2]["is_error"] and f"KIT-WORD root={kit}" in results[2]["output"], results[2]["output"]
    assert "not used by arnes" not in done.out + done.err  # nothing of this plugin is left out
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "plugin_kit_tools" in doctor.out


def test_a_plugin_part_that_does_not_parse_is_one_line_and_the_rest_loads(tmp_path: Path) -> None:
    cache = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market"
    kit = _plugin(cache / "kit" / "1.0.0", "kit")
    (kit / ".mcp.json").write_text("{not json")
    _install({"kit@market": (kit, True)})
    ws = tmp_path / "ws"
    ws.mkdir()
    doctor = run_arnes("doctor", "-w", str(ws))
    [line] = [line for line in doctor.out.splitlines() if "plugin kit@market:" in line]
    assert ".mcp.json: not valid JSON" in line and line.endswith("its MCP servers do not start")
    assert "Traceback" not in doctor.err
    assert "/kit:check (user)" in doctor.out  # its commands still load


def test_a_plugin_installed_inside_the_workspace_runs_no_hook_there(tmp_path: Path) -> None:
    """The user's own install record pointing into the repository: its files are the repository's,
    and would run as the user's (on the host, with "sandbox": false)."""
    ws = tmp_path / "ws"
    kit = _plugin(ws / "vendor" / "kit", "kit")
    (kit / "hooks").mkdir()
    marker = ws / "hook-ran"  # the workspace: writable from the sandbox too
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": f"touch {marker}"}]}]}
    (kit / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    _install({"kit@market": (kit, True)})
    script = tmp_path / "s.json"
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "true"}}]}, {"text": "done"}]
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws),
                     "--permission-mode", "bypassPermissions", "go")  # fmt: skip
    assert done.code == 0, done.err
    assert not marker.exists()
    assert "is installed inside this workspace" in done.out + done.err


def _marking_plugin(root: Path, marker: Path) -> Path:
    """A plugin whose PreToolUse hook touches `marker` (in the workspace: writable from the sandbox)."""
    kit = _plugin(root, "kit")
    (kit / "hooks").mkdir()
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": f"touch {marker}"}]}]}
    (kit / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return kit


def _one_bash_call(tmp_path: Path, ws: Path, *flags: str) -> str:
    script = tmp_path / "s.json"
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "true"}}]}, {"text": "done"}]
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws),
                     "--permission-mode", "bypassPermissions", *flags, "go")  # fmt: skip
    assert done.code == 0, done.err
    return done.out + done.err


def test_a_plugin_the_project_enables_is_the_projects_grant(tmp_path: Path) -> None:
    """Claude Code's project scope: `/plugin install --scope project` records the install with the
    project's path, and the project's `.claude/settings.json` enables it. Its commands load as the
    project's do; its hooks are the project's: they wait for trust."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    marker = ws / "hook-ran"
    kit = _marking_plugin(
        Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market" / "kit" / "1.0.0", marker
    )
    claude = Path(os.environ["HOME"]) / ".claude" / "plugins"
    record = {"scope": "project", "projectPath": str(ws), "installPath": str(kit), "version": "1.0.0"}
    (claude / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {"kit@market": [record]}}))
    (ws / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"kit@market": True}}))
    doctor = run_arnes("doctor", "-w", str(ws))
    assert "/kit:check (user)" in doctor.out and "kit@market (" in doctor.out and ", project)" in doctor.out
    _one_bash_call(tmp_path, ws)
    assert not marker.exists()  # untrusted: the project's hooks are grants it has not been given
    _one_bash_call(tmp_path, ws, "--trust")
    assert marker.exists()
    elsewhere = tmp_path / "other"  # recorded for another project: not installed here
    (elsewhere / ".claude").mkdir(parents=True)
    shutil.copy(ws / ".claude" / "settings.json", elsewhere / ".claude" / "settings.json")
    said = run_arnes("doctor", "-w", str(elsewhere)).out
    assert "kit:check" not in said and "plugin kit@market is enabled in" in said and "not installed" in said


def test_a_project_does_not_turn_off_the_users_plugin(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    marker = ws / "hook-ran"
    kit = _marking_plugin(
        Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market" / "kit" / "1.0.0", marker
    )
    _install({"kit@market": (kit, True)})
    (ws / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"kit@market": False}}))
    said = _one_bash_call(tmp_path, ws)
    assert marker.exists()  # the user's guard hooks still run
    assert "plugins not used, or used in part" in said
    doctor = run_arnes("doctor", "-w", str(ws)).out
    assert "kit@market is turned off in" in doctor and "your settings enable it: it stays on" in doctor


def test_plugin_dir_loads_a_plugins_prompts_for_the_run_and_runs_nothing(tmp_path: Path) -> None:
    """`--plugin-dir DIR`, as Claude Code's: the plugin in DIR for this run, no install. Its prompts
    are the project's (the folder is often the repository's own, inside the workspace or beside
    it); its hooks and MCP servers do not run: trust does not cover them and a pull changes them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = ws / "hook-ran"
    for where in (tmp_path / "dev" / "kit", ws / "kit"):
        plugin = _marking_plugin(where, marker)
        doctor = run_arnes("--plugin-dir", str(plugin), "doctor", "-w", str(ws)).out
        assert "/kit:check (project)" in doctor and "kit@--plugin-dir (" in doctor
        assert "its hooks and MCP servers do not run from --plugin-dir" in doctor
        said = _one_bash_call(tmp_path, ws, "--plugin-dir", str(plugin), "--trust")
        assert not marker.exists(), said
    assert "kit:" not in run_arnes("doctor", "-w", str(ws)).out  # for that run only
    said = _one_bash_call(tmp_path, ws, "--plugin-dir", str(tmp_path / "nowhere"))
    assert f"--plugin-dir {tmp_path / 'nowhere'}: not a folder; nothing loaded from it" in said


def test_a_plugins_files_are_read_through_no_link_out_of_it(tmp_path: Path) -> None:
    """A command or agent file that is a link to ~/.ssh/id_rsa or /proc/self/environ would be read
    as the user's own words, and shown to the model; a manifest path with a NUL byte is one line."""
    secret = Path(os.environ["HOME"]) / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("SECRET-KEY-MATERIAL\n")
    plugin = _plugin(tmp_path / "dev" / "kit", "kit")
    (plugin / "commands" / "key.md").symlink_to(secret)
    (plugin / "agents" / "env.md").symlink_to("/proc/self/environ")
    manifest = json.loads((plugin / MANIFEST).read_text())
    (plugin / MANIFEST).write_text(json.dumps({**manifest, "agents": "a\u0000b", "hooks": "h\u0000"}))
    ws = tmp_path / "ws"
    ws.mkdir()
    doctor = run_arnes("--plugin-dir", str(plugin), "doctor", "-w", str(ws))
    assert "Traceback" not in doctor.err and doctor.code in (0, 1), doctor.err
    assert "/kit:check (project)" in doctor.out and "/kit:key" not in doctor.out.replace("key.md", "")
    assert "key.md: not read" in doctor.out and "a link out of the workspace" in doctor.out
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "--plugin-dir", str(plugin), "/kit:key")  # fmt: skip
    assert done.code != 0 and "kit:key" in done.err  # no such command: the link was not read
    assert "SECRET-KEY-MATERIAL" not in done.out + done.err + (trace.read_text() if trace.exists() else "")


def test_a_plugins_output_style_can_be_chosen(tmp_path: Path) -> None:
    cache = Path(os.environ["HOME"]) / ".claude" / "plugins" / "cache" / "market"
    kit = _plugin(cache / "kit" / "1.0.0", "kit")
    (kit / "output-styles").mkdir()
    (kit / "output-styles" / "terse.md").write_text(
        "---\nname: Terse\ndescription: Few words\n---\nAnswer in KIT-TERSE.\n"
    )
    _install({"kit@market": (kit, True)})
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "outputStyle": "Terse"}))
    ws = tmp_path / "ws"
    ws.mkdir()
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), "hi")
    assert done.code == 0, done.err
    [start] = [e for e in read_trace(trace) if e["event"] == "session_start"]
    assert start["output_style"] == "Terse"
    assert "output styles are not used" not in done.out + done.err
