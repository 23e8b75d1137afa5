"""Red team, round 12 (docs/redteam/round12.md): what the built-in ask rules name, `--json-schema`
(remote `$ref`s, backtracking patterns, schemas that are `true`), path rules a backtracking regex
hangs on, files named by flags through links, and what an Edit's refusal shows. Each test fails
before its fix."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.permissions.globmatch import LinearGlob
from arnes.permissions.rules import glob_to_regex
from arnes.tools.structured import check
from tests.conftest import run_arnes


def _scripted(tmp_path: Path, ws: Path, turns: list[dict[str, object]], *flags: str) -> tuple[int, str]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), *flags, "go")
    return done.code, done.out + done.err


def test_08_a_schemas_refs_fetch_nothing_and_read_nothing(tmp_path: Path) -> None:
    """A `$ref` to an http or file URL was fetched (or read) on the host by jsonschema's default
    retrieval, and a pointer error quoted what it read to the model."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            return None

    secret = tmp_path / "config.json"
    secret.write_text('{"auths": {"SECRET-CANARY": 1}}')
    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        schema = {
            "type": "object",
            "properties": {
                "a": {"$ref": f"http://127.0.0.1:{server.server_port}/s.json"},
                "b": {"$ref": f"{secret.as_uri()}#/nowhere"},
            },
        }
        errors = check(schema, {"a": 1, "b": 2})
    finally:
        server.shutdown()
    assert hits == []
    assert errors and "SECRET-CANARY" not in json.dumps(errors)


def test_09_a_backtracking_pattern_is_stopped_and_said() -> None:
    """An email-like `pattern` and 48 letters then `!`: `re` backtracked for minutes in the loop."""
    schema = {"type": "object", "properties": {"mail": {"type": "string", "pattern": r"^([a-z0-9]+\.?)+@x$"}}}
    [(where, message)] = check(schema, {"mail": "a" * 48 + "!"}, seconds=2)
    assert where == "" and "took over 2 s" in message
    assert check(schema, {"mail": "ab@x"}) == []


def test_13_a_property_schema_that_is_true_is_a_schema(tmp_path: Path) -> None:
    """`"properties": {"x": true}` is valid JSON Schema; the tool schema's compaction called `.get` on it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    schema = json.dumps({"type": "object", "properties": {"x": True, "y": {"type": "integer"}}})
    turns = [{"tool_calls": [{"name": "StructuredOutput", "input": {"x": [1], "y": 2}}]}, {"text": "ok"}]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--json-schema", schema,
                     "--output-format", "json", "go")  # fmt: skip
    assert done.code == 0 and "Traceback" not in done.err, done.err
    assert json.loads(done.out)["structured_output"] == {"x": [1], "y": 2}


def test_12_a_rule_with_many_stars_does_not_hang_the_listing(tmp_path: Path) -> None:
    """An untrusted repository's deny rule `Read(*a*a*...*b)` and a file of 60 a's: the file
    listing before the first model call backtracked without end. Such rules now match in linear
    time (permissions/globmatch.py), and still deny."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(*a*a*a*a*a*a*a*a*a*a*a*a*b)"]}})
    )
    (ws / ("a" * 60)).write_text("x\n")
    (ws / "aaab").write_text("DENIED-CANARY\n")
    turns = [{"tool_calls": [{"name": "Read", "input": {"file_path": "aaab"}}]}, {"text": "ok"}]
    code, said = _scripted(tmp_path, ws, turns, "--output-format", "json")
    assert code == 0, said
    assert "DENIED-CANARY" not in said


@settings(max_examples=400, deadline=None)
@given(glob=st.lists(st.sampled_from(["a", "b", ".", "/", "*", "?", "**/", "**", "[ab]", "[!a]", "\\*"]), min_size=1,
                     max_size=8).map("".join),
       path=st.lists(st.sampled_from(["a", "b", ".", "/", "A", "*"]), max_size=10).map("".join),
       fold=st.booleans())  # fmt: skip
def test_the_linear_glob_means_what_the_regex_means(glob: str, path: str, fold: bool) -> None:
    """Property: for any glob and path, LinearGlob and the engine's regex agree."""
    regex = re.compile("/" + glob_to_regex(glob.lstrip("/")) + r"\Z", (re.IGNORECASE if fold else 0) | re.DOTALL)
    text = "/" + path
    assert LinearGlob("/" + glob.lstrip("/"), fold).match(text) == (regex.match(text) is not None), (glob, text)


GUARD = "#!/bin/sh\nexit 0\n"
PLANTED = "#!/bin/sh\necho planted\n"


def _guarded(ws: Path, command: str) -> None:
    hooks = [{"type": "command", "command": command}]
    (ws / ".claude").mkdir(parents=True, exist_ok=True)
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    assert run_arnes("trust", str(ws)).code == 0


def _writes(tmp_path: Path, ws: Path, paths: list[str], *flags: str) -> None:
    turns: list[dict[str, object]] = []
    for p in paths:  # read first: an unread file's Write is refused whatever the rules say
        turns.append({"tool_calls": [{"name": "Read", "input": {"file_path": p}}]})
        turns.append({"tool_calls": [{"name": "Write", "input": {"file_path": p, "content": PLANTED}}]})
    code, said = _scripted(tmp_path, ws, [*turns, {"text": "done"}], "--permission-mode", "acceptEdits", *flags)
    assert code in (0, 1), said


def test_01_04_05_20_the_guard_is_asked_for_however_the_hook_names_it(tmp_path: Path) -> None:
    """The built-in ask rule was made from the hook's word as written: a link's target (01), a
    name through `..` (04), `$CLAUDE_PROJECT_DIR//x` (05) and a name with `[` (20) got no rule
    that matched the model's Write, and the guard judging its next call was rewritten."""
    cases = {
        "sh tools/guard.sh": ("tools/guard.sh", "tools/impl/guard-impl.sh"),  # a link, and its target
        "sh .claude/../tools/two.sh": ("tools/two.sh",),
        'sh "$CLAUDE_PROJECT_DIR"//tools/three.sh': ("tools/three.sh",),
        "sh 'tools/guard[v2].sh'": ("tools/guard[v2].sh",),
    }
    for n, (command, paths) in enumerate(cases.items()):
        ws = tmp_path / f"ws{n}"
        (ws / "tools" / "impl").mkdir(parents=True)
        for rel in paths:
            (ws / rel).write_text(GUARD)
        if n == 0:
            (ws / "tools" / "guard.sh").unlink()
            (ws / "tools" / "guard.sh").symlink_to("impl/guard-impl.sh")
        _guarded(ws, command)
        _writes(tmp_path, ws, list(paths))
        for rel in paths:
            assert (ws / rel).read_text() == GUARD, (command, rel)


def test_06_a_hook_folder_made_after_the_start_asks_too(tmp_path: Path) -> None:
    """The guard reads `.claude/hooks/allow.list` if it exists; the folder did not exist at the
    start, so no rule covered it and the model's Write made the guard let everything by."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / "tools" / "guard.sh").write_text(GUARD)
    _guarded(ws, "sh tools/guard.sh")
    _writes(tmp_path, ws, [".claude/hooks/allow.list"])
    assert not (ws / ".claude" / "hooks" / "allow.list").exists()


def test_19_a_servers_script_named_by_a_flag_asks_before_a_write(tmp_path: Path) -> None:
    """A `--mcp-config` server (how the SDKs pass `mcp_servers`) running a workspace script, and a
    `~/.claude.json` server doing the same: no rule covered the script, and the model rewrote it."""
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    script = ws / "tools" / "srv.py"
    script.write_text("print('server')\n")
    config = json.dumps({"mcpServers": {"proj": {"command": "python3", "args": [str(script)]}}})
    _writes(tmp_path, ws, ["tools/srv.py"], "--trust", "--mcp-config", config)
    assert script.read_text() == "print('server')\n"
    import os

    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"u": {"command": "python3", "args": [str(script)]}}}))
    _writes(tmp_path, ws, ["tools/srv.py"], "--trust")
    assert script.read_text() == "print('server')\n"


def test_10_a_writes_refusal_does_not_show_a_file_a_read_hook_guards(tmp_path: Path) -> None:
    """Your Read hook blocks `customers.csv`; an unread Edit of it was refused with its content,
    so the hook never had its say. With a PreToolUse hook for Read, the refusal only says to Read."""
    import os

    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    guard = {"hooks": [{"type": "command", "command": "echo blocked >&2; exit 2"}], "matcher": "Read"}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [guard]}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "customers.csv").write_text("name,card\nAda,CARD-CANARY\n")
    edit = {"file_path": "customers.csv", "old_string": "Ada", "new_string": "Bob"}
    turns = [{"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "done"}]
    _, said = _scripted(tmp_path, ws, turns, "--permission-mode", "acceptEdits", "--trace", str(tmp_path / "t.jsonl"))
    trace = (tmp_path / "t.jsonl").read_text()
    assert "CARD-CANARY" not in trace, said
    assert "Read customers.csv before modifying it" in trace, said


def test_11_a_file_a_flag_names_in_the_workspace_is_not_read_through_a_link_out(tmp_path: Path) -> None:
    """CI names the repository's files in flags; a pull request made them links to a secret
    (`/proc/self/environ`, `~/.docker/config.json`), which went into the system prompt and the tool
    schema sent to the model. Now one line names the flag and the link; nothing is read."""
    secret = tmp_path / "docker-config.json"
    secret.write_text('{"type": "object", "title": "SECRET-CANARY"}')
    ws = tmp_path / "ws"
    (ws / "ci").mkdir(parents=True)
    (ws / "ci" / "review.md").symlink_to(secret)
    (ws / "ci" / "answer.json").symlink_to(secret)
    (ws / "ci" / "plain.md").write_text("Be brief.\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    for flag, name in (("--append-system-prompt-file", "review.md"), ("--json-schema", "answer.json")):
        done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), flag, f"ci/{name}",
                         "go", cwd=ws)  # fmt: skip
        assert done.code == 2 and "a link that leads out of" in done.err, done.err
        assert "SECRET-CANARY" not in done.err + done.out
    fine = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws),
                     "--append-system-prompt-file", "ci/plain.md", "go", cwd=ws)  # fmt: skip
    assert fine.code == 0, fine.err


BLOCK = "api.py\n```python\ndef api():\n    return 42\n```\n"


def test_15_18_leave_it_alone_holds_for_the_session_and_its_sub_agents(tmp_path: Path) -> None:
    """ "Don't change api.py" was judged against the current message only: the same `whole` block
    was written by arnes in the next message (15), and in a sub-agent whose task the model wrote
    (18). What the user said to leave alone now holds for every later call arnes makes."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "api.py").write_text("# KEEP\ndef api():\n    return 1\n")
    (ws / "util.py").write_text("def util():\n    return 2\n")
    turns = [
        {"text": "Here:\n\n" + BLOCK},
        {"tool_calls": [{"name": "Delegate", "input": {"task": "Make api() in api.py return 42."}}]},
        {"text": "Here is the file.\n\n" + BLOCK},
        {"text": "Here is the file again.\n\n" + BLOCK},
        *[{"text": "Done."}] * 4,
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": turns}))
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--steering", "small",
                     "--edit-format", "whole", "--permission-mode", "acceptEdits",
                     "Don't change api.py. Add a docstring to util.py.")  # fmt: skip
    assert (ws / "api.py").read_text().startswith("# KEEP"), done.out
    from arnes.agent.loop import Agent
    from arnes.llm.script import ScriptProvider
    from arnes.session import Session

    provider = ScriptProvider.from_turns([{"text": "ok"}, {"text": "Here:\n\n" + BLOCK}, *[{"text": "Done."}] * 4])
    agent = Agent(Session(workspace=ws, provider=provider, steering_set="small", edit_format="whole"))
    agent.start()
    try:
        agent.turn("Don't change api.py. Add a helper to util.py.")
        agent.turn("Now add a docstring to util.py.")
    finally:
        agent.finish()
    assert (ws / "api.py").read_text().startswith("# KEEP")


def test_07_a_hook_run_as_python_m_names_its_module(tmp_path: Path) -> None:
    """`python3 -m tools.guard` runs tools/guard.py: the module is one of the files hooks run."""
    from arnes.permissions.trust_scripts import referenced_scripts

    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "guard.py").write_text("print(1)\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__main__.py").write_text("print(1)\n")
    hooks = {"PreToolUse": [{"hooks": [{"command": "python3 -m tools.guard"}, {"command": "python3 -m pkg"}]}]}
    assert referenced_scripts(tmp_path, [], [("x", {"hooks": hooks})]) == ["pkg", "tools/guard.py"]
    # 25: the other spellings, the package's __init__.py (imported first), a server's args
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "srv.py").write_text("")
    hooks = {"PreToolUse": [{"hooks": [{"command": "python3 -mtools.guard"}, {"command": "python3 -Bm pkg"}]}]}
    servers = {"s": {"command": "python3", "args": ["-m", "tools.srv"]}}
    found = referenced_scripts(tmp_path, [], [("x", {"hooks": hooks, "mcpServers": servers})])
    assert found == ["pkg", "tools/__init__.py", "tools/guard.py", "tools/srv.py"]


def test_23_the_folder_holding_a_protected_link_is_read_only_in_the_sandbox(tmp_path: Path) -> None:
    """A trusted hook script that is a link: the sandbox bound its target read-only (a bind
    follows the link), and a command swapped the link itself for one to a script of its own."""
    from arnes.permissions.engine import RuleEngine
    from arnes.permissions.rules import SourcedRule
    from arnes.sandbox.hidden import unwritable_paths

    (tmp_path / "tools" / "impl").mkdir(parents=True)
    (tmp_path / "tools" / "impl" / "guard.sh").write_text(GUARD)
    (tmp_path / "tools" / "guard.sh").symlink_to("impl/guard.sh")
    engine = RuleEngine(tmp_path, "default", [SourcedRule("ask", "Edit(./tools/guard.sh)", "x")])
    assert tmp_path / "tools" in unwritable_paths(engine)


def test_24_globs_a_regex_would_take_quadratic_time_on_go_linear() -> None:
    from arnes.permissions.globmatch import needs_linear

    assert needs_linear("**a**b00") and needs_linear("**/a/**/b") and needs_linear("*a*b*c")
    assert not needs_linear("**/*.pem") and not needs_linear("./secrets/**") and not needs_linear("**/.env*")
