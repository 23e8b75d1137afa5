"""Skills end to end (DESIGN §13): SKILL.md folders found at start, listed in the first user
message, loaded by the Skill tool, their allowed-tools narrowing the calls, their files readable,
and a hostile workspace unable to put a host file into the prompt through one."""

from __future__ import annotations

import fnmatch
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from arnes.agent.loop import Agent
from arnes.agent.trace import read_trace
from arnes.extensions import skills as skills_module
from arnes.extensions.skill_scope import ActiveSkills
from arnes.llm.script import ScriptProvider
from arnes.permissions.types import Target, ToolRequest
from arnes.session import Session
from tests.conftest import run_arnes

ROOT = Path(__file__).parent.parent


def skill(folder: Path, front: str, body: str = "Do the thing step by step.\n", **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\n{body}")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def run_turns(tmp_path: Path, ws: Path, turns: list[list[dict[str, Any]]], *flags: str) -> tuple[Any, list[Any]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": calls} for calls in turns] + [{"text": "done"}]}))
    trace = tmp_path / "trace.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    *flags, "go")  # fmt: skip
    return run, read_trace(trace)


def results(events: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """(tool, is_error, output) in the order of the calls (reads finish in any order)."""
    done = {e["id"]: (e["name"], e["is_error"], e["output"]) for e in events if e["event"] == "tool_result"}
    return [done[e["id"]] for e in events if e["event"] == "tool_call"]


def first_message(events: list[dict[str, Any]]) -> str:
    message = next(e for e in events if e["event"] == "message" and e["role"] == "user")
    return "\n".join(block.get("text", "") for block in message["content"])


def test_skills_are_listed_loaded_and_their_files_readable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    skill(ws / ".arnes/skills/review", "name: review\ndescription: Review a diff for bugs\n",
          "Check every changed line.\n", **{"checklist.md": "1. tests pass\n"})  # fmt: skip
    skill(ws / ".claude/skills/review", "description: shadowed by .arnes\n")
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "arnes/skills/tone"
    skill(user, "description: Write in a friendly tone\n", "Be kind.\n", **{"words.md": "gentle words\n"})
    turns = [
        [{"name": "Read", "input": {"file_path": str(user / "words.md")}}],  # not loaded yet: outside, no terminal
        [
            {"name": "Skill", "input": {"name": "review"}},
            {"name": "Skill", "input": {"name": "tone"}},
            {"name": "Skill", "input": {"name": "nope"}},
        ],
        [
            {"name": "Read", "input": {"file_path": ".arnes/skills/review/checklist.md"}},
            {"name": "Read", "input": {"file_path": str(user / "words.md")}},
        ],
    ]
    run, events = run_turns(tmp_path, ws, turns)
    assert run.code == 0, run.err
    head = first_message(events)
    assert "- review: Review a diff for bugs" in head and "- tone: Write in a friendly tone" in head
    assert "- features-json: " in head and "shadowed" not in head  # bundled, and the first location wins
    (_, early_error, early), review, tone, unknown, checklist, words = results(events)
    assert early_error and "Permission denied" in early
    assert not review[1] and "Check every changed line." in review[2]
    assert ".arnes/skills/review/checklist.md" in review[2]
    assert not tone[1] and "Be kind." in tone[2] and str(user.resolve() / "words.md") in tone[2]
    assert unknown[1] and "No skill 'nope'" in unknown[2] and "review" in unknown[2] and "tone" in unknown[2]
    assert checklist == ("Read", False, checklist[2]) and "tests pass" in checklist[2]
    assert words[:2] == ("Read", False) and "gentle words" in words[2]


def test_a_small_window_lists_only_the_workspaces_and_users_skills(tmp_path: Path) -> None:
    """A small model calls arnes's own skills for tasks they do not fit: at 8k they are not listed, but load."""
    ws = tmp_path / "ws"
    skill(ws / ".arnes/skills/review", "description: Review a diff for bugs\n")
    run, events = run_turns(tmp_path, ws, [[{"name": "Skill", "input": {"name": "features-json"}}]],
                            "--context-window", "8192")  # fmt: skip
    assert run.code == 0, run.err
    head = first_message(events)
    assert "- review: Review a diff for bugs" in head and "features-json" not in head
    ((name, is_error, output),) = results(events)
    assert name == "Skill" and not is_error and "features.json" in output


def test_codex_users_skills_are_read_as_the_users_own(tmp_path: Path) -> None:
    """Codex keeps the user's skills in ~/.agents/skills (its docs) and ~/.codex/skills (its first
    releases, $CODEX_HOME): both are the user's, after ~/.claude/skills (survey 4, X4-01)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = Path(os.environ["HOME"])
    skill(home / ".agents/skills/agents-user", "description: AGENTS-SKILL-MARKER\n", "AGENTS-BODY\n")
    skill(home / ".agents/skills/both", "description: shadowed by ~/.claude\n")
    skill(home / ".claude/skills/both", "description: CLAUDE-WINS\n")
    codex = tmp_path / "codex-home"
    skill(codex / "skills/codex-old", "description: CODEX-SKILL-MARKER\n", "CODEX-BODY\n")
    (codex / "skills/.system").mkdir()  # Codex's own built-ins: no SKILL.md right there
    script = tmp_path / "codex.json"
    calls = [{"name": "Skill", "input": {"skill": n}} for n in ("agents-user", "codex-old")]
    script.write_text(json.dumps({"turns": [{"tool_calls": calls}, {"text": "done"}]}))
    trace = tmp_path / "codex.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "go", env={"CODEX_HOME": str(codex)})  # fmt: skip
    assert run.code == 0, run.err
    events = read_trace(trace)
    head = first_message(events)
    assert "- agents-user: AGENTS-SKILL-MARKER" in head and "- codex-old: CODEX-SKILL-MARKER" in head
    assert "- both: CLAUDE-WINS" in head and "shadowed" not in head
    (_, agents_error, agents), (_, codex_error, codex_out) = results(events)
    assert not agents_error and "AGENTS-BODY" in agents and "(user, " in agents
    assert not codex_error and "CODEX-BODY" in codex_out


def test_skill_substitutions_are_claude_codes(tmp_path: Path) -> None:
    """Claude Code's skills docs: `$N` is `$ARGUMENTS[N]` (0-based: `$0` the first word, `$1` the
    second; one not given stays as written), `${CLAUDE_SESSION_ID}`, `${CLAUDE_SKILL_DIR}` the
    skill's folder; as `/name` and through the Skill tool's `args` alike. A command keeps `$1` as
    its first word (survey 4, C4-03)."""
    ws = tmp_path / "ws"
    body = ("ALL=[$ARGUMENTS] IDX1=[$ARGUMENTS[1]] POS0=[$0] POS1=[$1] POS5=[$5] "
            "SESSION=[${CLAUDE_SESSION_ID}] DIR=[${CLAUDE_SKILL_DIR}] ENV=[${HOME}]\n")  # fmt: skip
    folder = skill(Path(os.environ["HOME"]) / ".claude/skills/migrate", "description: Migrate a component\n", body)
    (ws / ".claude/commands").mkdir(parents=True)
    (ws / ".claude/commands/old.md").write_text("CMD0=[$0] CMD1=[$1] CMD2=[$2]\n")
    real = os.path.realpath(folder)
    for task in ("/migrate SearchBar React", "go"):
        script = tmp_path / "subst.json"
        call = {"name": "Skill", "input": {"skill": "migrate", "args": "SearchBar React"}}
        script.write_text(
            json.dumps({"turns": [{"tool_calls": [call]} if task == "go" else {"text": "x"}, {"text": "ok"}]})
        )
        trace = tmp_path / f"subst-{task[:2]}.jsonl"
        run = run_arnes(
            "-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace), task
        )
        assert run.code == 0, run.err
        events = read_trace(trace)
        session = next(e for e in events if e["event"] == "session_start")["session"]
        text = first_message(events) if task != "go" else results(events)[0][2]
        assert (
            f"ALL=[SearchBar React] IDX1=[React] POS0=[SearchBar] POS1=[React] POS5=[$5] "
            f"SESSION=[{session}] DIR=[{real}] ENV=[${{HOME}}]"
        ) in text, text
        assert "ARGUMENTS:" not in text
    trace = tmp_path / "cmd.jsonl"
    run = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "/old a b")  # fmt: skip
    assert run.code == 0, run.err
    assert "CMD0=[$0] CMD1=[a] CMD2=[b]" in first_message(read_trace(trace))


def test_a_skill_kept_from_the_model_runs_only_as_the_users_slash_command(tmp_path: Path) -> None:
    """`disable-model-invocation: true` (a deploy): neither listed nor loadable by the model, still `/deploy`."""
    ws = tmp_path / "ws"
    user = Path(os.environ["HOME"]) / ".claude/skills/deploy"
    skill(user, "description: DEPLOY-DESC ship it\ndisable-model-invocation: true\n", "DEPLOY-BODY to $ARGUMENTS\n")
    skill(ws / ".claude/skills/review", "description: Review a diff\n")
    run, events = run_turns(tmp_path, ws, [[{"name": "Skill", "input": {"skill": "deploy"}}]])
    assert run.code == 0, run.err
    head = first_message(events)
    assert "- review: Review a diff" in head and "deploy" not in head.lower()
    ((name, is_error, output),) = results(events)
    assert name == "Skill" and is_error and "DEPLOY-BODY" not in output
    assert "only the user may run" in output and "/deploy" in output and "review" in output
    script = tmp_path / "user.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    trace = tmp_path / "user.jsonl"
    ran = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                    "/deploy staging")  # fmt: skip
    assert ran.code == 0, ran.err
    assert "DEPLOY-BODY to staging" in first_message(read_trace(trace))


def test_a_skill_whose_disable_model_invocation_is_not_yes_or_no_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    skill(ws / ".claude/skills/deploy", "description: ship it\ndisable-model-invocation: ture\n")
    run, events = run_turns(tmp_path, ws, [[{"name": "Skill", "input": {"skill": "deploy"}}]])
    assert run.code == 0, run.err
    said = run.out + run.err
    assert "disable-model-invocation" in said and "true or false" in said
    ((_, is_error, output),) = results(events)
    assert is_error and "No skill 'deploy'" in output


def test_allowed_tools_narrow_and_never_grant(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "secret.txt").write_text("s3cret\n")
    skill(ws / ".agents/skills/narrow", "description: Only looks\nallowed-tools: Read, Bash(echo:*), Bash(touch:*)\n")
    turns = [
        [{"name": "Skill", "input": {"name": "narrow"}}],
        [
            {"name": "Write", "input": {"file_path": "new.txt", "content": "x"}},  # not listed
            {"name": "Bash", "input": {"command": "ls"}},  # Bash, but not a listed command
            {"name": "Bash", "input": {"command": "echo hi"}},  # listed and read-only
            {"name": "Bash", "input": {"command": "touch made"}},  # listed, but the mode asks: no terminal
            {"name": "Read", "input": {"file_path": "secret.txt"}},  # listed, but a deny rule stands
        ],
    ]
    run, events = run_turns(tmp_path, ws, turns, "--deny", "Read(secret.txt)")
    assert run.code == 0, run.err
    loaded, write, ls, echo, touch, secret = results(events)
    assert "Until this task ends you may call only: Read, Bash(echo:*), Bash(touch:*)" in loaded[2]
    for refused in (write, ls):
        assert refused[1] and "skill narrow is active" in refused[2] and "allowed: Read" in refused[2]
    assert not echo[1] and echo[2].endswith("hi")
    assert touch[1] and "Permission denied" in touch[2] and "skill" not in touch[2]
    assert secret[1] and "Read(secret.txt)" in secret[2]
    assert not (ws / "new.txt").exists() and not (ws / "made").exists()
    assert "s3cret" not in json.dumps(events)


def test_the_narrowing_ends_with_the_turn(tmp_path: Path) -> None:
    skill(tmp_path / ".arnes/skills/look", "description: Only looks\nallowed-tools: [Read]\n")
    write = {"name": "Write", "input": {"file_path": "a.txt", "content": "a"}}
    provider = ScriptProvider.from_turns(
        [
            {"tool_calls": [{"name": "Skill", "input": {"name": "look"}}]},
            {"tool_calls": [write]},
            {"text": "ok"},
            {"tool_calls": [write]},
            {"text": "ok"},
        ]
    )
    session = Session(workspace=tmp_path, provider=provider, mode="acceptEdits")
    agent = Agent(session)
    agent.start()
    try:
        agent.turn("first")
        assert not (tmp_path / "a.txt").exists()  # refused while the skill was active
        agent.turn("second")
    finally:
        agent.finish()
    assert (tmp_path / "a.txt").read_text() == "a"


def test_bad_and_linked_skills_are_refused_and_nothing_outside_leaks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\ndescription: planted\n---\nHOST-SECRET-1\n")
    (outside / "key").write_text("HOST-SECRET-2\n")
    ws = tmp_path / "ws"
    skill(ws / ".arnes/skills/nodesc", "name: nodesc\n")
    skill(ws / ".arnes/skills/badyaml", "{description: [unclosed\n")  # neither YAML nor `key: value` lines
    (ws / ".arnes/skills/linked").mkdir(parents=True)
    (ws / ".arnes/skills/linked/SKILL.md").symlink_to(outside / "SKILL.md")
    (ws / ".claude/skills").mkdir(parents=True)
    (ws / ".claude/skills/folderlink").symlink_to(outside)
    ok = skill(ws / ".arnes/skills/ok", "description: Fine\n")
    (ok / "leak.md").symlink_to(outside / "key")
    script = tmp_path / "doctor.json"
    script.write_text('{"turns": []}')
    doctor = run_arnes("-w", str(ws), "--provider", "script", "--script", str(script), "doctor")
    refused = [line for line in doctor.out.splitlines() if "skill refused" in line]
    assert any("nodesc/SKILL.md: no 'description'" in line for line in refused), doctor.out
    assert any("badyaml/SKILL.md: the front matter is not valid YAML" in line for line in refused)
    assert any("linked/SKILL.md" in line for line in refused)
    assert "skills: features-json (bundled), ok (project), verify (bundled)" in doctor.out
    turns = [
        [
            {"name": "Skill", "input": {"name": "ok"}},
            {"name": "Skill", "input": {"name": "linked"}},
            {"name": "Skill", "input": {"name": "folderlink"}},
        ],
        [{"name": "Read", "input": {"file_path": ".arnes/skills/ok/leak.md"}}],
    ]
    run, events = run_turns(tmp_path, ws, turns)  # an untrusted folder: skills load, they only narrow
    assert run.code == 0, run.err
    # One line for the three refused (issue 24.8: a copied collection may hold dozens); doctor names each.
    assert "warning: 3 skill files not used, or used in part; `arnes doctor` lists each with why" in run.out
    assert "no 'description'" not in run.out
    loaded, linked, folderlink, leak = results(events)
    assert not loaded[1] and "leak.md" not in loaded[2]
    assert linked[1] and folderlink[1] and "No skill" in linked[2]
    assert leak[1] and "Permission denied" in leak[2]
    assert "HOST-SECRET" not in json.dumps(events) and "HOST-SECRET" not in run.out + run.err


def test_skills_keep_the_fixed_prompt_fixed(tmp_path: Path) -> None:
    plain, skilled = tmp_path / "plain", tmp_path / "skilled"
    plain.mkdir()
    skill(skilled / ".arnes/skills/mine", "description: A project skill\n")
    sessions = [Session(workspace=ws, provider=ScriptProvider.from_turns([])) for ws in (plain, skilled)]
    assert sessions[0].system_prompt() == sessions[1].system_prompt()
    specs = [json.dumps([s.__dict__ for s in session.tool_specs()]) for session in sessions]
    assert specs[0] == specs[1] and "mine" not in specs[0]
    assert "- mine: A project skill" in sessions[1].context() and "mine" not in sessions[0].context()


def test_the_bundled_skills_are_package_data() -> None:
    """A non-editable install ships what pyproject's package-data names: every bundled file matches."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = data["arnes.extensions"]
    package = ROOT / "arnes/extensions"
    shipped = [p for p in skills_module.BUNDLED.rglob("*") if p.is_file()]
    assert {p.parent.name for p in shipped} >= {"features-json", "verify"}
    for path in shipped:
        rel = str(path.relative_to(package))
        assert any(fnmatch.fnmatch(rel, pattern) for pattern in patterns), rel


def test_the_documented_example_works_as_written(tmp_path: Path) -> None:
    """docs/skills.md's example, copied as a user would: listed as shown, narrowing as described."""
    text = (ROOT / "docs/skills.md").read_text()
    blocks = text.split("```markdown\n")[1:3]
    skill_md, examples = (block.split("\n```", 1)[0] + "\n" for block in blocks)
    folder = tmp_path / ".arnes/skills/changelog"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md)
    (folder / "examples.md").write_text(examples)
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]))
    shown = text.split("A session in that project starts with this in its first message:\n\n```\n")[1]
    assert shown.splitlines()[1] in session.context()
    assert session.ctx.skills is not None
    assert ".arnes/skills/changelog/examples.md" in session.ctx.skills.load("changelog")
    bash = [ToolRequest("Bash", {}, command=c) for c in ("git log -5 --oneline", "git push", "git diff | sh")]
    assert [session.active_skills.refusal(r) is None for r in bash] == [True, False, False]


def test_path_entries_narrow_writes_to_their_folder(tmp_path: Path) -> None:
    active = ActiveSkills(tmp_path)
    active.narrow("docs-only", ["Edit(docs/**)", "Read"])

    def write(path: str) -> ToolRequest:
        return ToolRequest("Write", {}, (Target(tmp_path / path, "write"),), read_only=False)

    assert active.refusal(write("docs/a.md")) is None
    assert active.refusal(write("src/a.py")) is not None
    assert active.refusal(ToolRequest("Grep", {}, (Target(tmp_path / "src", "read"),))) is None  # Read covers Grep
    assert active.refusal(ToolRequest("Bash", {}, command="cat docs/a.md")) is not None
    active.clear()
    assert active.refusal(write("src/a.py")) is None
