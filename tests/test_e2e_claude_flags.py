"""Claude Code's flag spellings on the real `arnes` (DESIGN §16): each alias does what arnes's own
option does, flags its SDKs pass are accepted (a warning says what is not used), and a flag
whose meaning arnes cannot keep is refused in one line."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.prompt import system_prompt
from arnes.agent.trace import read_trace
from arnes.cliargs import global_parser
from arnes.cliclaude import split_rules
from arnes.config import EffectiveConfig, load_config
from arnes.config_flags import apply_claude_flags, chosen_session_id, system_prompts
from arnes.errors import ConfigError
from arnes.llm.script import ScriptProvider
from arnes.session import Session
from tests.conftest import Run, run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEY = {"OPENAI_API_KEY": "test"}


def scripted(tmp_path: Path, ws: Path, turns: list[dict[str, Any]], *flags: str, fmt: str = "json") -> Run:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    return run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--output-format", fmt,
                     "--trace", str(tmp_path / "t.jsonl"), *flags, "go")  # fmt: skip


def init_line(run: Run) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(run.out.splitlines()[0])
    assert first["subtype"] == "init", first
    return first


@pytest.mark.parametrize(
    ("value", "rules"),
    [
        ("Bash(git log:*),Edit", ["Bash(git log:*)", "Edit"]),
        ("Bash(npm run test:*) Read", ["Bash(npm run test:*)", "Read"]),
        ("Read(src/a b.py), Write", ["Read(src/a b.py)", "Write"]),
        ("", []),
    ],
)
def test_rule_lists_split_on_commas_and_spaces_outside_parentheses(value: str, rules: list[str]) -> None:
    assert split_rules(value) == rules


@pytest.mark.parametrize("flags", [("--permission-mode", "bypassPermissions"), ("--dangerously-skip-permissions",)])
def test_claude_codes_bypass_spellings_are_the_bypass_mode(shop: Path, tmp_path: Path, flags: tuple[str, ...]) -> None:
    run = scripted(tmp_path, shop, [{"text": "ok"}], *flags, fmt="stream-json")
    assert run.code == 0, run.err
    assert init_line(run)["permissionMode"] == "bypassPermissions"
    [start] = [e for e in read_trace(tmp_path / "t.jsonl") if e["event"] == "session_start"]
    assert start["mode"] == "bypass"


def test_skip_permissions_with_another_mode_is_refused() -> None:
    args = global_parser().parse_args(["--dangerously-skip-permissions", "--permission-mode", "plan"])
    with pytest.raises(
        ConfigError,
        match=r"^--dangerously-skip-permissions is the bypass mode; it cannot go with --permission-mode plan$",
    ):
        apply_claude_flags(args, EffectiveConfig())


def test_dont_ask_denies_what_would_be_asked(shop: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "Write", "input": {"file_path": "new.py", "content": "x = 1\n"}}]}]
    agents = '{"checker": {"description": "Checks", "prompt": "Check it."}}'  # Claude Code's --agents, here too
    run = scripted(tmp_path, shop, turns, "--permission-mode", "dontAsk", "--agents", agents, fmt="stream-json")
    assert run.code == 0, run.err
    assert init_line(run)["permissionMode"] == "dontAsk" and init_line(run)["agents"] == ["checker"]
    assert str(uuid.UUID(init_line(run)["session_id"])) == init_line(run)["session_id"]  # a UUID, as Claude Code's
    [denial] = json.loads(run.out.splitlines()[-1])["permission_denials"]
    assert denial["tool_name"] == "Write" and "dontAsk mode: nothing is asked" in denial["reason"]
    assert not (shop / "new.py").exists()


def test_allowed_and_disallowed_tools_are_allow_and_deny_rules(shop: Path, tmp_path: Path) -> None:
    """Without a terminal a Write would be denied (nobody to ask): --allowedTools lets it run."""
    turns = [
        {"tool_calls": [{"name": "Write", "input": {"file_path": "new.py", "content": "x = 1\n"}}]},
        {"tool_calls": [{"name": "Read", "input": {"file_path": "pricing.py"}}]},
        {"text": "done"},
    ]
    # Claude Code's CLI reference lists them as separate words, up to the next option or `--`
    run = scripted(tmp_path, shop, turns, "--allowedTools", "Bash(git log:*)", "Write", "--disallowed-tools", "Read",
                   "--allowedTools", "Bash(git diff:*),WebFetch", "--")  # fmt: skip
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["files_changed"] == ["new.py"]
    assert [(d["tool_name"], d["reason"]) for d in data["denials"]] == [("Read", "rule Read")]
    assert any("arnes has no tool WebFetch" in w for w in data["warnings"])


def test_a_prompt_after_a_rule_list_is_one_clear_error_not_a_rule() -> None:
    args = global_parser().parse_args(["-p", "--disallowedTools", "Bash(git push:*)", "Write", "fix the bug"])
    with pytest.raises(ConfigError, match=r"^--disallowedTools: 'fix the bug' is not a tool rule; .* after --$"):
        apply_claude_flags(args, EffectiveConfig())
    args = global_parser().parse_args(["-p", "--disallowedTools", "Bash(git push:*)", "Write", "--", "fix the bug"])
    cfg = EffectiveConfig()
    apply_claude_flags(args, cfg)
    assert [(r.kind, r.rule) for r in cfg.rules] == [("deny", "Bash(git push:*)"), ("deny", "Write")]
    assert args.task == ["fix the bug"]


def test_add_dir_and_additional_directories_open_a_folder_to_reads_only(shop: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "README.md").write_text("shared doc\n")
    (shared / "certs").mkdir()
    (shared / ".env").write_text("TOKEN=SECRET-DOTENV-31\n")  # the built-in secret denies hold there too
    (shared / "certs" / "server.key").write_text("SECRET-KEY-32\n")
    read = {"name": "Read", "input": {"file_path": str(shared / "README.md")}}
    secret = {"name": "Read", "input": {"file_path": str(shared / ".env")}}
    bash = {
        "name": "Bash",
        "input": {"command": f"cat {shared}/README.md; grep -rh SECRET {shared}; touch {shared}/new"},
    }
    turns = [{"tool_calls": [read, secret, bash]}, {"text": "done"}]
    run = scripted(tmp_path, shop, turns, "--allow", "Bash", "--add-dir", str(shared), "--")
    assert run.code == 0, run.err
    by_id = {e["id"]: e for e in read_trace(tmp_path / "t.jsonl") if e["event"] == "tool_result"}
    results = [by_id[key] for key in sorted(by_id)]  # reads run in parallel: in the order they were called
    assert results[0]["output"] == "     1\tshared doc" and not results[0]["is_error"]
    assert results[1]["is_error"] and "SECRET" not in results[1]["output"]
    assert "shared doc" in results[2]["output"] and "Read-only file system" in results[2]["output"]
    assert "SECRET" not in results[2]["output"] and not (shared / "new").exists()
    # Claude Code's settings key: yours applies, a project's is named and ignored; home is too wide
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    folders = {"permissions": {"additionalDirectories": [str(shared), "~", "notes"]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(folders))
    (shop / ".claude").mkdir(exist_ok=True)
    (shop / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"additionalDirectories": ["/etc"]}}))
    cfg = load_config(shop, trusted=True)
    assert [r.rule for r in cfg.rules if r.rule.startswith(f"Read({shared}") and r.kind == "allow"] == [
        f"Read({shared}/**)"
    ]
    assert f"Read({shared}/**/.env)" in [r.rule for r in cfg.rules if r.kind == "deny"]
    said = "\n".join(cfg.warnings)
    assert f"permissions.additionalDirectories: {home} ignored: it holds your home folder" in said
    assert "permissions.additionalDirectories: 'notes' ignored: write the folder as an absolute path" in said
    assert ".claude/settings.json: permissions.additionalDirectories ignored: only your user settings" in said
    assert Path("/etc") not in cfg.read_paths and shared.resolve() in cfg.read_paths


def test_system_prompt_flags_replace_and_extend_arnes_prompt(shop: Path) -> None:
    with FakeLLMServer([{"text": "ok"}]) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--model", "fake-model",
                        "--context-window", "32768", "-w", str(shop), "-p", "--system-prompt", "You are terse.",
                        "--append-system-prompt", "Answer in French.", "hi", env=KEY)  # fmt: skip
        [(_, body)] = server.requests
    assert run.code == 0, run.err
    assert body["messages"][0] == {"role": "system", "content": "You are terse.\n\nAnswer in French."}


def test_an_empty_system_prompt_keeps_arnes_own(tmp_path: Path) -> None:
    """The SDKs pass `--system-prompt ""` whenever their caller sets none: the tools' contract stays."""
    args = global_parser().parse_args(["--system-prompt", "", "--append-system-prompt", "Be brief."])
    base, append = system_prompts(args)
    session = Session(
        workspace=tmp_path, provider=ScriptProvider.from_turns([]), system_base=base, system_append=append
    )
    assert session.system_prompt() == f"{system_prompt()}\n\nBe brief."


def test_mcp_config_adds_servers_and_strict_keeps_only_those(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": {"command": "true"}}}))
    config = {"mcpServers": {"flagged": {"command": "true"}}}  # ends at once: "failed", and quickly
    run = scripted(tmp_path, ws, [{"text": "ok"}], "--trust", "--mcp-config", json.dumps(config),
                   "--strict-mcp-config", fmt="stream-json")  # fmt: skip
    assert run.code == 0, run.err
    [server] = init_line(run)["mcp_servers"]  # the trusted project's own server is left out
    assert server["name"] == "flagged" and server["status"] == "failed"


def test_session_id_names_the_session_and_resume_finds_it(shop: Path, tmp_path: Path) -> None:
    chosen = str(uuid.uuid4())
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    base = ("-p", "--provider", "script", "--script", str(script), "-w", str(shop), "--output-format", "stream-json")
    run = run_arnes(*base, "--session-id", chosen, "one")
    assert run.code == 0, run.err
    assert init_line(run)["session_id"] == chosen and (shop / ".arnes" / "traces" / f"{chosen}.jsonl").is_file()
    again = run_arnes(*base, "--resume", chosen, "two")
    assert again.code == 0 and init_line(again)["session_id"] == chosen, again.err
    traces = shop / ".arnes" / "traces"
    for value, why in (
        (chosen, f"--session-id {chosen} is already in use here"),
        ("x", "--session-id 'x' is not a UUID"),
    ):
        with pytest.raises(ConfigError, match=re.escape(why)):
            chosen_session_id(global_parser().parse_args(["--session-id", value]), traces)


def test_fork_session_goes_on_in_a_new_session_with_the_old_conversation(shop: Path, tmp_path: Path) -> None:
    """Claude Code's `--resume ID --fork-session` (the SDKs' `fork_session`): a new session id, its
    trace starting with the forked conversation; the forked session's trace is left as it was."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    base = ("-p", "--provider", "script", "--script", str(script), "-w", str(shop), "--output-format", "stream-json")
    first = run_arnes(*base, "remember KIWI-7")
    original = init_line(first)["session_id"]
    traces = shop / ".arnes" / "traces"
    before = (traces / f"{original}.jsonl").read_text()
    named = str(uuid.uuid4())
    fork = run_arnes(*base, "--resume", original, "--fork-session", "--session-id", named, "and then?")
    assert fork.code == 0, fork.err
    assert init_line(fork)["session_id"] == named
    assert (traces / f"{original}.jsonl").read_text() == before
    said = [
        block.get("text", "")
        for e in read_trace(traces / f"{named}.jsonl")
        if e["event"] == "message" and e["role"] == "user"
        for block in e["content"]
    ]
    assert "remember KIWI-7" in said and "and then?" in said
    again = run_arnes(*base, "-r", named, "more")  # the fork resumes whole (-r: Claude Code's short --resume)
    assert again.code == 0 and init_line(again)["session_id"] == named, again.err
    latest = run_arnes(*base, "-c", "--fork-session", "once more")  # the newest session, forked
    assert latest.code == 0 and init_line(latest)["session_id"] not in (original, named), latest.err
    alone = run_arnes(*base, "--fork-session", "x")
    assert alone.code == 2 and "--fork-session goes with --resume ID or --continue" in alone.err


def test_flags_the_sdks_pass_are_accepted_and_named_when_unused(shop: Path, tmp_path: Path) -> None:
    run = scripted(tmp_path, shop, [{"text": "ok"}], "--verbose", "--setting-sources=user,project",
                   "--max-thinking-tokens", "1000", "--include-partial-messages", "--permission-prompt-tool", "stdio",
                   "--tools", "Read,Grep,Task", "--debug-to-stderr", fmt="stream-json")  # fmt: skip
    assert run.code == 0, run.err
    assert init_line(run)["tools"] == ["Read", "Grep", "Delegate"]  # Task is Delegate's name in Claude Code
    warnings = json.loads(run.out.splitlines()[-1])["warnings"]
    for flag in ("--max-thinking-tokens", "--permission-prompt-tool", "--debug-to-stderr"):
        assert any(w.startswith(flag) for w in warnings), (flag, warnings)
    # --include-partial-messages is used: the reply's text streams as the Messages API's events
    events = [line["event"] for line in map(json.loads, run.out.splitlines()) if line["type"] == "stream_event"]
    assert [e["type"] for e in events] == ["message_start", "content_block_start", "content_block_delta",
                                           "content_block_stop", "message_delta", "message_stop"]  # fmt: skip
    assert events[2]["delta"] == {"type": "text_delta", "text": "ok"} and events[4]["delta"]["stop_reason"]
    assert global_parser().parse_args(["--max-budget-usd", "0.5"]).max_cost == 0.5  # the same option


def test_eval_runs_get_the_aliases_but_not_a_session_id_or_stdin_protocol(tmp_path: Path) -> None:
    from arnes.commands.evals import agent_argv
    from arnes.workflow.evals import EvalTask

    given = ["--session-id", str(uuid.uuid4()), "--input-format", "stream-json", "--allowedTools", "Read",
             "--dangerously-skip-permissions"]  # fmt: skip
    task = EvalTask("t", tmp_path, "do it", "true")
    argv = agent_argv(global_parser().parse_args(given), task, tmp_path, tmp_path / "t.jsonl")
    assert "--session-id" not in argv and "--input-format" not in argv and "--permission-mode" not in argv
    assert argv[argv.index("--allowed-tools") + 1] == "Read" and "--dangerously-skip-permissions" in argv


def test_resume_session_at_cuts_and_the_cut_holds_for_a_later_resume(shop: Path, tmp_path: Path) -> None:
    """`--resume ID --resume-session-at UUID`: the conversation up to that message; the trace says
    so, so a plain `--resume` later starts from the cut too. `--resume-drops-turn` refuses a cut
    that would drop more than the named turn, in the words the SDK tells callers to match."""
    replies = [{"text": "ONE-REPLY"}, {"text": "TWO-REPLY"}, {"text": "THREE-REPLY"}, {"text": "FOUR-REPLY"}]
    with FakeLLMServer(replies) as server:
        base = ("-p", "--provider", "openai", "--base-url", server.url + "/v1", "-w", str(shop),
                "--output-format", "stream-json")  # fmt: skip
        first = run_arnes(*base, "remember KIWI", env=KEY)
        lines = [json.loads(line) for line in first.out.splitlines()]
        sid = lines[0]["session_id"]
        kept = next(line["uuid"] for line in lines if line["type"] == "assistant")
        second = run_arnes(*base, "--resume", sid, "now PEAR", env=KEY)
        assert second.code == 0, second.err
        trace = read_trace(shop / ".arnes" / "traces" / f"{sid}.jsonl")
        pear = next(e["uuid"] for e in trace if e["event"] == "message" and "now PEAR" in json.dumps(e["content"]))
        wrong = run_arnes(
            *base, "--resume", sid, "--resume-session-at", kept, "--resume-drops-turn", kept, "x", env=KEY
        )
        assert wrong.code == 2 and "Resume rejected by --resume-drops-turn:" in wrong.err, wrong.err
        missing = run_arnes(*base, "--resume", sid, "--resume-session-at", "no-such-message", "x", env=KEY)
        assert missing.code == 2 and "has no message with that uuid" in missing.err, missing.err
        alone = run_arnes(*base, "--resume-session-at", kept, "x", env=KEY)
        assert alone.code == 2 and "--resume-session-at goes with --resume" in alone.err
        cut = run_arnes(*base, "--resume", sid, "--resume-session-at", kept, "--resume-drops-turn", pear, "third",
                        env=KEY)  # fmt: skip
        assert cut.code == 0, cut.err
        later = run_arnes(*base, "--resume", sid, "fourth", env=KEY)
        assert later.code == 0, later.err
        sent = [json.dumps(body["messages"]) for _, body in server.requests]
    assert len(sent) == 4
    assert "now PEAR" not in sent[2] and "TWO-REPLY" not in sent[2] and "ONE-REPLY" in sent[2]
    assert "now PEAR" not in sent[3] and "THREE-REPLY" in sent[3] and "third" in sent[3]


def test_disable_bypass_permissions_mode_turns_every_bypass_off(shop: Path, tmp_path: Path) -> None:
    """Claude Code's `permissions.disableBypassPermissionsMode: "disable"` (any settings file): the
    flag and a user's defaultMode no longer reach the bypass mode (it was dropped, and bypass ran)."""
    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}}))
    turns = [{"tool_calls": [{"name": "Bash", "input": {"command": "touch made-by-bypass"}}]}, {"text": "ok"}]
    run = scripted(tmp_path, shop, turns, "--dangerously-skip-permissions", fmt="stream-json")
    assert run.code == 0, run.err
    assert init_line(run)["permissionMode"] == "default"
    assert not (shop / "made-by-bypass").exists()
    warnings = json.loads(run.out.splitlines()[-1])["warnings"]
    assert any(
        'permissions.disableBypassPermissionsMode is "disable", so the bypass mode is off' in w for w in warnings
    )


def test_setting_sources_chooses_which_settings_and_instructions_are_read(shop: Path, tmp_path: Path) -> None:
    """The SDKs' `setting_sources` (`--setting-sources`): only the named sources are read (the flag
    was accepted and ignored, so an app's run got the developer's own CLAUDE.md and rules)."""
    from tests.fakes.llm_server import FakeLLMServer

    claude = Path(os.environ["HOME"]) / ".claude"
    (claude / "commands").mkdir(parents=True, exist_ok=True)
    (claude / "CLAUDE.md").write_text("USER-MEMORY-1\n")
    (claude / "commands" / "mine.md").write_text("Do my thing.\n")
    (shop / "AGENTS.md").write_text("PROJECT-MEMORY-2\n")
    (shop / ".claude" / "settings.json").parent.mkdir(exist_ok=True)
    (shop / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./README.md)"]}}))
    seen = {}
    for sources in ("user,project,local", "project", ""):
        with FakeLLMServer([{"text": "ok"}]) as server:
            run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "--model", "m", "-w", str(shop),
                            f"--setting-sources={sources}", "-p", "hi", env={"OPENAI_API_KEY": "x"})  # fmt: skip
            assert run.code == 0, run.err
            seen[sources] = json.dumps(server.requests[0][1]["messages"])
    assert "USER-MEMORY-1" in seen["user,project,local"] and "PROJECT-MEMORY-2" in seen["user,project,local"]
    assert "USER-MEMORY-1" not in seen["project"] and "PROJECT-MEMORY-2" in seen["project"]
    assert "USER-MEMORY-1" not in seen[""] and "PROJECT-MEMORY-2" not in seen[""]
    unknown = run_arnes("-w", str(shop), "--setting-sources", "user,policy", "-p", "/mine")
    assert unknown.code == 2 and unknown.err.strip().endswith("give user, project and/or local, comma-separated")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    mine = ["--provider", "script", "--script", str(script), "-w", str(shop), "-p", "/mine"]
    assert run_arnes(*mine).code == 0
    gone = run_arnes(*mine, "--setting-sources", "project")
    assert gone.code == 2 and "/mine" in gone.err, gone.err


def test_an_untrusted_projects_disable_bypass_holds_it_only_takes_a_mode_away(shop: Path, tmp_path: Path) -> None:
    (shop / ".claude").mkdir(exist_ok=True)
    (shop / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}})
    )
    run = scripted(tmp_path, shop, [{"text": "ok"}], "--dangerously-skip-permissions", fmt="stream-json")
    assert run.code == 0, run.err
    assert init_line(run)["permissionMode"] == "default"


def test_an_option_is_never_taken_for_the_start_of_another(tmp_path: Path) -> None:
    """Codex's `--json` is no prefix of `--json-schema` here: the run stops on the unknown option by name."""
    with pytest.raises(SystemExit):
        global_parser().parse_args(["--json-sch", "{}", "x"])
    run = run_arnes("-p", "--provider", "script", "--json", "x", cwd=tmp_path)
    assert run.code == 2 and run.err.splitlines()[-1] == "arnes: error: unrecognized arguments: --json"


def test_dont_ask_as_the_users_default_mode(shop: Path, tmp_path: Path) -> None:
    """`defaultMode: "dontAsk"` in ~/.claude/settings.json is the flag's mode: the allowed runs, the rest is denied."""
    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(echo:*)"]}})
    )
    turns = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo allowed"}}]},
        {"tool_calls": [{"name": "Write", "input": {"file_path": "new.py", "content": "x = 1\n"}}]},
        {"text": "done"},
    ]
    run = scripted(tmp_path, shop, turns, fmt="stream-json")
    assert run.code == 0, run.err
    assert "warning" not in run.err and init_line(run)["permissionMode"] == "dontAsk"
    [denial] = json.loads(run.out.splitlines()[-1])["permission_denials"]
    assert denial["tool_name"] == "Write" and "dontAsk mode: nothing is asked" in denial["reason"]
    assert not (shop / "new.py").exists()


def test_a_mode_flag_ends_the_settings_dont_ask() -> None:
    cfg = EffectiveConfig(never_ask=True)  # what defaultMode "dontAsk" left
    apply_claude_flags(global_parser().parse_args(["--permission-mode", "acceptEdits"]), cfg)
    assert (cfg.mode, cfg.never_ask) == ("acceptEdits", False)
