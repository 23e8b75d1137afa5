"""Red team, round 6 (redteam4 01-05): a hostile repository stops arnes with a few bytes.

01 JSON nested 3000 deep (.mcp.json, settings) was a RecursionError traceback in every command;
02 YAML front matter nested 3000 deep (rules, agents, skills, commands) a traceback at every start;
03 a 464-byte alias bomb as a command's `model:` made `arnes trust` (and every start in a folder
trusted before) run on at a gigabyte; 04 a rule glob `src/[z-a].py` ended the run at the first Read;
05 a rule glob `**/*a*a*a…c` backtracked on a long file name and the Read never came back.
Each test failed before its fix. The end-to-end ones run the real `arnes`; their subprocess
time-out only catches a hang (the fixed code answers at once), it measures nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arnes.agent.trace import read_trace
from tests.conftest import run_arnes

DEEP = 3000
DEEP_JSON = '{"mcpServers": ' + "[" * DEEP + "]" * DEEP + "}"
DEEP_FRONT = "---\nname: a\ndescription: d\npaths: " + "[" * DEEP + "]" * DEEP + "\n---\nbody\n"
NESTED = "nested more than 64 levels deep"


def _bomb() -> str:
    """redteam4/03: nine levels of nine aliases, 9**9 elements once copied or printed."""
    lines = ["---", "description: Review the change", "x0: &x0 [x,x,x,x,x,x,x,x,x]"]
    lines += [f"x{i}: &x{i} [" + ",".join([f"*x{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join([*lines, "model: *x8", "---", "Review $ARGUMENTS", ""])


def _put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _run(tmp_path: Path, ws: Path, turns: list[dict[str, object]]) -> tuple[int, str, list[str]]:
    """`arnes -p` with the scripted `turns`: its exit code, what it printed, every tool result."""
    script = _put(tmp_path / "script.json", json.dumps({"turns": turns}))
    trace = tmp_path / "trace.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "go", timeout=120)  # fmt: skip
    events = read_trace(trace) if trace.exists() else []
    return done.code, done.out + done.err, [str(e.get("output", "")) for e in events if e["event"] == "tool_result"]


def _no_traceback(output: str) -> None:
    assert "Traceback" not in output and "RecursionError" not in output and "re.error" not in output, output


# --------------------------------------------------------------------------------------------
# 01: JSON nested too deep
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", [".mcp.json", ".claude/settings.json", ".arnes/settings.json"])
def test_r6_01_deep_json_is_one_line_naming_the_file(tmp_path: Path, rel: str) -> None:
    ws = tmp_path / "ws"
    _put(ws / rel, DEEP_JSON)
    code, output, _ = _run(tmp_path, ws, [{"text": "hi"}])
    _no_traceback(output)
    assert code == 2 and f"{ws / rel}: not read: it is {NESTED}" in output


def test_r6_01_every_command_says_it_in_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _put(ws / ".mcp.json", DEEP_JSON)
    for command in (["doctor"], ["trust"], ["mcp", "list"], ["permissions"]):
        done = run_arnes("-w", str(ws), *command, timeout=120)
        _no_traceback(done.out + done.err)
        lines = [line for line in (done.out + done.err).splitlines() if NESTED in line]
        assert len(lines) == 1 and str(ws / ".mcp.json") in lines[0], (command, done.out, done.err)


def test_r6_01_the_users_claude_json_nested_too_deep_is_a_warning(tmp_path: Path) -> None:
    from arnes.mcp.claude_json import read_claude_json

    path = _put(tmp_path / ".claude.json", DEEP_JSON)
    found = read_claude_json(path, tmp_path, "~/.claude.json")
    assert found.warnings == [
        "~/.claude.json: its MCP servers are not read: it is nested more than 64 levels deep (lists or objects "
        "inside each other); fix the file or move it aside (Claude Code keeps backups of it); the other settings "
        "still apply"
    ]


def test_r6_01_every_reader_of_outside_json_refuses_deep_nesting_in_its_own_way(tmp_path: Path) -> None:
    """The readers besides settings: each turns the nesting into what it does with bad JSON."""
    from arnes.agent.resume import parse_history
    from arnes.errors import ConfigError
    from arnes.extensions.hooks import HookOutcome, apply_output
    from arnes.host.testcmd import detect
    from arnes.jsonfile import read_json
    from arnes.llm.script import ScriptProvider
    from arnes.permissions.trust import TrustStore
    from arnes.permissions.trust_scripts import referenced_scripts
    from arnes.workflow.features import load

    deep = _put(tmp_path / "deep.json", DEEP_JSON)
    with pytest.raises(ConfigError, match=NESTED):
        read_json(deep)
    just_under = _put(tmp_path / "under.json", "[" * 64 + "]" * 64)
    assert read_json(just_under) is not None
    assert referenced_scripts(tmp_path, [deep]) == []  # hashed as bytes; its own loader refuses it
    with pytest.raises(ConfigError, match=NESTED):
        TrustStore(deep).records()
    with pytest.raises(ValueError, match=NESTED):
        apply_output("PreToolUse", DEEP_JSON, HookOutcome())
    with pytest.raises(ConfigError, match="not valid JSON"):
        ScriptProvider.from_file(str(deep))
    assert parse_history(DEEP_JSON + "\n") == []  # a trace line that cannot be read is skipped
    ws = tmp_path / "ws"
    _put(ws / "package.json", '{"scripts": ' + "[" * DEEP + "]" * DEEP + "}")
    assert detect(ws) is None
    _put(ws / "features.json", DEEP_JSON)
    with pytest.raises(ConfigError, match=NESTED):
        load(ws)


def test_r6_01_toml_and_a_huge_number_are_refused_the_same_way(tmp_path: Path) -> None:
    from arnes.errors import ConfigError
    from arnes.jsonfile import read_json
    from arnes.workflow.teams.config import load_team

    _put(tmp_path / ".arnes" / "teams" / "deep.toml", "a = " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(ConfigError, match=NESTED):
        load_team(tmp_path, "deep")
    with pytest.raises(ConfigError, match="a number too long to read"):
        read_json(_put(tmp_path / "n.json", '{"n": ' + "1" * 5000 + "}"))


def test_r6_01_model_text_and_written_files_nested_too_deep_are_not_a_crash() -> None:
    from arnes.llm.recovery import UNREADABLE, split_tool_calls
    from arnes.tools.contentcheck import data_problem, yaml_as_json

    assert data_problem(DEEP_JSON, ".json") == ""  # valid JSON, too deep to judge: no complaint
    assert data_problem("a = " + "[" * DEEP + "]" * DEEP, ".toml") == ""
    assert yaml_as_json("a: " + "[" * DEEP + "]" * DEEP) is None
    text = '<tool_call>{"name": "Read", "arguments": {"file_path": ' + "[" * DEEP + "]" * DEEP + "}}</tool_call>"
    _, calls = split_tool_calls(text, {"Read"})
    assert [c.name for c in calls] == ["Read"] and UNREADABLE in calls[0].input


# --------------------------------------------------------------------------------------------
# 02: YAML front matter nested too deep
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "rel", [".claude/rules/a.md", ".claude/agents/a.md", ".claude/skills/a/SKILL.md", ".claude/commands/a.md"]
)
def test_r6_02_deep_front_matter_leaves_the_file_out_with_a_warning(tmp_path: Path, rel: str) -> None:
    ws = tmp_path / "ws"
    _put(ws / rel, DEEP_FRONT)
    code, output, _ = _run(tmp_path, ws, [{"text": "hi"}])
    _no_traceback(output)
    assert code == 0
    doctor = run_arnes("-w", str(ws), "doctor", timeout=120)
    _no_traceback(doctor.out + doctor.err)
    assert f"{rel}: the front matter is not read: it is {NESTED}" in doctor.out + doctor.err


def test_r6_02_the_yaml_reader_bounds_nesting_before_pyyaml_recurses() -> None:
    from arnes.errors import ConfigError
    from arnes.extensions.frontmatter import parse
    from arnes.extensions.lenient_yaml import lines_to_mapping

    with pytest.raises(ConfigError, match=f"x.md: the front matter is not read: it is {NESTED}"):
        parse(DEEP_FRONT, Path("x.md"))
    assert parse("---\na: " + "[" * 63 + "]" * 63 + "\n---\n", Path("x.md")).meta["a"]  # 64 levels, the mapping too
    with pytest.raises(ConfigError, match="a number too long to read"):
        parse("---\nmodel: " + "1" * 5000 + "\n---\n", Path("x.md"))
    # The lenient reader reads a quoted value with PyYAML too: `"k": [[[…]]] #"` opens and ends with a quote.
    quoted = '"k": ' + "[" * DEEP + "]" * DEEP + ' #"'
    assert lines_to_mapping(f"description: {quoted}") == {"description": quoted[1:-1]}


# --------------------------------------------------------------------------------------------
# 03: a YAML alias bomb as a command's model
# --------------------------------------------------------------------------------------------
def test_r6_03_anchors_are_refused_before_any_value_is_built() -> None:
    from arnes.errors import ConfigError
    from arnes.extensions.frontmatter import parse

    with pytest.raises(ConfigError, match="defines the YAML anchor &x0; arnes does not expand anchors"):
        parse(_bomb(), Path("review.md"))
    # An alias to no anchor is no YAML: read line by line as before (`*bold*` in a description).
    doc = parse("---\ndescription: *bold* text\n---\nbody", Path("x.md"))
    assert doc.lenient and doc.meta["description"] == "*bold* text"


def test_r6_03_a_granting_value_must_be_a_short_name(tmp_path: Path) -> None:
    from arnes.extensions.commands import load_catalog
    from arnes.host.files import HostFiles
    from arnes.permissions.trust_frontmatter import frontmatter_grants

    commands = tmp_path / ".claude" / "commands"
    _put(commands / "ok.md", "---\nmodel: claude-sonnet-4\n---\nok")
    _put(commands / "list.md", "---\nmodel: [a, b]\n---\nlist")
    _put(commands / "long.md", "---\nmodel: " + "m" * 5000 + "\n---\nlong")
    _put(commands / "bomb.md", _bomb())
    assert frontmatter_grants(tmp_path) == [
        ".claude/commands/list.md: model refused, not a name (the file is not loaded)",
        ".claude/commands/long.md: model refused, not a name (the file is not loaded)",
        ".claude/commands/ok.md: model 'claude-sonnet-4'",
    ]
    catalog = load_catalog(HostFiles(tmp_path), frozenset())
    assert list(catalog.commands) == ["ok"]
    refused = {r.path.name: r.why for r in catalog.refused}
    assert "must be a name on one line of at most 200 characters" in refused["long.md"]
    assert "YAML anchor &x0" in refused["bomb.md"]


def test_r6_03_trust_finishes_on_the_bomb_and_a_trusted_folder_still_starts(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _put(ws / "README.md", "# app\n")
    assert run_arnes("-w", str(ws), "trust", timeout=120).code == 0
    _put(ws / ".claude" / "commands" / "review.md", _bomb())  # a later pull brings it
    code, output, _ = _run(tmp_path, ws, [{"text": "hi"}])
    assert code == 0, output
    trusted = run_arnes("-w", str(ws), "trust", timeout=120)
    assert trusted.code == 0 and "review.md" not in trusted.out  # it grants nothing: refused
    doctor = run_arnes("-w", str(ws), "doctor", timeout=120)
    assert "review.md: the front matter is not read: it defines the YAML anchor &x0" in doctor.out


# --------------------------------------------------------------------------------------------
# 04 and 05: rule globs
# --------------------------------------------------------------------------------------------
def test_r6_04_a_glob_that_does_not_compile_leaves_its_rule_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _put(ws / ".claude" / "rules" / "style.md", '---\npaths: "src/[z-a].py"\n---\nUse tabs.\n')
    _put(ws / "src" / "main.py", "print(1)\n")
    code, output, results = _run(
        tmp_path, ws, [{"tool_calls": [{"name": "Read", "input": {"file_path": "src/main.py"}}]}]
    )
    _no_traceback(output)
    assert code == 0 and "print(1)" in results[0]
    warned = [line for line in output.splitlines() if "style.md" in line]
    assert warned == [
        "warning: .claude/rules/style.md left out: the glob 'src/[z-a].py': the class range z-a runs backwards "
        "(write a-z); fix its 'paths' (until then it applies to no file)"
    ]


def test_r6_05_a_backtracking_glob_and_a_long_name_read_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _put(ws / ".claude" / "rules" / "docs.md", '---\npaths: "**/' + "*a" * 24 + '*c"\n---\nCite sources.\n')
    name = "docs/" + "a" * 70 + ".md"
    _put(ws / name, "# notes\n")
    code, output, results = _run(tmp_path, ws, [{"tool_calls": [{"name": "Read", "input": {"file_path": name}}]}])
    assert code == 0 and "# notes" in results[0] and "Cite sources" not in results[0], output


def test_r6_05_matching_takes_one_step_per_character(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behaviour, not time: the automaton closes its state once per character of the path (plus
    once at the start), whatever the glob; a backtracking matcher retries the same characters."""
    from arnes.agent import rule_globs

    steps: list[int] = []
    close = rule_globs.Automaton._close

    def counted(self: rule_globs.Automaton, state: int) -> int:
        steps.append(1)
        return close(self, state)

    monkeypatch.setattr(rule_globs.Automaton, "_close", counted)
    globs = rule_globs.Globs.of(["**/" + "*a" * 24 + "*c"])
    path = "docs/" + "a" * 4000 + ".md"
    assert not globs.match(path)
    assert len(steps) == len(path) + 1
    steps.clear()
    assert globs.match("docs/" + "a" * 4000 + "c") and len(steps) == len("docs/") + 4001 + 1


def _regex(glob: str) -> str:
    """The glob as the backtracking regular expression arnes used before (the reference semantics)."""
    import re

    glob, out, i = glob.removeprefix("./").lstrip("/"), "", 0
    while i < len(glob):
        if glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/") and glob[i + 2 : i + 3] in ("/", ""):
            out += "(?:[^/]+/)*" if glob[i + 2 : i + 3] == "/" else ".*"
            i += 3 if glob[i + 2 : i + 3] == "/" else 2
        elif glob.startswith("**", i) or glob[i] == "*":
            out, i = out + "[^/]*", i + (2 if glob.startswith("**", i) else 1)
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        elif glob[i] == "[":
            close = glob.index("]", i)
            body = glob[i + 1 : close]
            out, i = out + ("[^/" + body[1:] if body.startswith("!") else "[" + body) + "]", close + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return out


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", ".", "/", "*", "**", "**/", "/**", "?", "[ab]", "[!a]", "[a-b]"]), max_size=7),
    # Workspace-relative paths as rule delivery gets them: no `.` or `..` segments.
    st.lists(st.text("ab.x", min_size=1, max_size=4).filter(lambda s: s not in (".", "..")), min_size=1, max_size=4),
)
def test_r6_05_the_linear_matcher_agrees_with_the_regular_expressions(parts: list[str], folders: list[str]) -> None:
    import re

    from arnes.agent.rule_globs import Globs

    glob, path = "".join(parts), "/".join(folders)
    assert Globs.of([glob]).match(path) is bool(re.fullmatch(_regex(glob), path, re.DOTALL)), (glob, path)


def test_r6_05_globs_are_checked_and_bounded_when_the_rule_is_read(tmp_path: Path) -> None:
    from arnes.agent.instruction_files import UserDirs
    from arnes.agent.instructions import collect_all
    from arnes.agent.rule_globs import MAX_WEIGHT
    from arnes.host.files import HostFiles

    rules = tmp_path / "ws" / ".claude" / "rules"
    _put(rules / "long.md", '---\npaths: "' + "a" * 300 + '"\n---\nx')
    _put(rules / "braces.md", '---\npaths: "' + "{a,b}" * 9 + '"\n---\nx')  # 512 alternatives
    heavy = "{a,b,c,d,e,f,g,h,i,j}" * 2 + "{a,b}"  # 200 alternatives each
    for n in range(4):
        _put(rules / f"heavy{n}.md", f'---\npaths: "{heavy}"\n---\nx')
    home = tmp_path / "home"
    notes: list[str] = []
    dirs = UserDirs(home, home / ".claude", home / ".codex", home / ".config" / "arnes")
    scoped = collect_all(HostFiles(tmp_path / "ws"), notes, user=dirs).scoped
    assert [r.shown for r in scoped] == [".claude/rules/heavy0.md", ".claude/rules/heavy1.md"]
    assert sum(r.paths.weight for r in scoped if r.paths) <= MAX_WEIGHT
    assert any(n.startswith(".claude/rules/long.md left out: the glob") and "longer than 256" in n for n in notes)
    assert any(n.startswith(".claude/rules/braces.md left out") and "more than 256 alternatives" in n for n in notes)
    assert sum("heavy" in n and f"more than {MAX_WEIGHT}" in n for n in notes) == 2


def test_r6_05_rule_delivery_never_raises_into_the_loop() -> None:
    from arnes.agent.rule_delivery import RuleDelivery

    def broken() -> list[object]:
        raise OSError("disk gone")

    delivery = RuleDelivery(broken)
    assert "could not check the path-scoped rules (OSError)" in delivery.after("src/a.py")
    assert delivery.after("src/b.py") == ""  # said once; the run goes on without them


# Bare parsers left, each with why it needs no bound: everything else parses through nesting.py or yamlfile.py.
BARE_PARSERS = {
    "nesting.py": "the bounded readers themselves",
    "sandbox/landlock.py": "a literal in a command line arnes builds",
    "sandbox/landlock_exec.py": "arnes's own variable, set by its parent",
    "sandbox/zygote_server.py": "stdlib only inside the sandbox; arnes's own messages",
    "agent/trace.py": "arnes's own trace, for tests and tools",
    "adapt/pieces/nudges.py": "arnes's own json.dumps of a call",
    "tools/contentcheck.py": "judges a file the model writes; RecursionError is caught as 'not judged'",
    "llm/openai_compat.py": "a server's stream: the provider's error handling turns any failure into a ProviderError",
}


def test_r6_every_other_parser_is_bounded() -> None:
    """A new json.loads / yaml.safe_load / tomllib.loads on outside text fails here until it goes
    through nesting.json_loads / toml_loads or yamlfile.load (or is placed above, with a reason)."""
    import ast

    import arnes

    root = Path(arnes.__file__).parent
    bare = {("json", "loads"), ("json", "load"), ("tomllib", "loads"), ("tomllib", "load"), ("yaml", "safe_load"),
            ("yaml", "load"), ("yaml", "full_load"), ("yaml", "unsafe_load"), ("yaml", "compose")}  # fmt: skip
    found: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id, func.attr) in bare
            ):
                found.add(path.relative_to(root).as_posix())
    assert found <= set(BARE_PARSERS), sorted(found - set(BARE_PARSERS))
