"""Claude Code's modular rules (`.claude/rules/**/*.md`, `~/.claude/rules/**/*.md`): where they join
the instructions, which `paths:` globs name which files, and what is refused (a link out, a Read rule,
a hidden file, front matter that cannot be read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arnes.agent.instruction_files import UserDirs
from arnes.agent.instructions import collect_all, gather
from arnes.agent.rule_delivery import RuleDelivery, workspace_relative
from arnes.agent.rule_globs import GlobError, expand_braces, matches
from arnes.host.files import HostFiles
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule

SECRET = "SECRET-KEY-4711"


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("src/api/**/*.ts", "src/api/a.ts", True),
        ("src/api/**/*.ts", "src/api/v1/deep/a.ts", True),
        ("src/api/**/*.ts", "src/api/a.tsx", False),
        ("src/api/**/*.ts", "src/other/a.ts", False),
        ("**/*.{ts,tsx}", "a.ts", True),
        ("**/*.{ts,tsx}", "web/ui/b.tsx", True),
        ("**/*.{ts,tsx}", "web/ui/b.js", False),
        ("src/**/*.{ts,{tsx,jsx}}", "src/x/y.jsx", True),
        ("*.md", "README.md", True),
        ("*.md", "docs/a.md", False),  # `*` stays in its folder
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "docsx/a.md", False),
        ("./tests/test_?.py", "tests/test_a.py", True),
        ("/tests/test_?.py", "tests/test_ab.py", False),
        ("lib/[!_]*.py", "lib/api.py", True),
        ("lib/[!_]*.py", "lib/_private.py", False),
        ("lib/[ab].py", "lib/b.py", True),
        ("{x}.py", "{x}.py", True),  # a brace without a comma is itself
        ("a.(py)", "a.(py)", True),  # regex characters are literal
        ("a.(py)", "a.py", False),
        ("**", "any/thing.txt", True),
    ],
)
def test_globs(glob: str, path: str, hit: bool) -> None:
    assert matches([glob], path) is hit


def test_brace_expansion_is_bounded() -> None:
    assert expand_braces("src/**/*.{ts,tsx}") == ["src/**/*.ts", "src/**/*.tsx"]
    with pytest.raises(GlobError, match="more than 256 alternatives"):  # 2**20 written: refused, not cut
        expand_braces("{a,b}" * 20)


def test_workspace_relative(tmp_path: Path) -> None:
    assert workspace_relative(tmp_path / "src" / "a.ts", tmp_path) == "src/a.ts"
    assert workspace_relative(tmp_path.parent / "x.ts", tmp_path) is None


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".claude").mkdir(parents=True)
    (path / ".claude" / ".credentials.json").write_text(f'{{"token": "{SECRET}"}}\n')
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".claude" / "rules").mkdir(parents=True)
    return path


def gathered(ws: Path, home: Path, rules: list[SourcedRule] | None = None) -> tuple[str, list[str], list[str]]:
    notes: list[str] = []
    files = HostFiles(ws, RuleEngine(ws, rules=list(rules or []), home=home))
    dirs = UserDirs(home, home / ".claude", home / ".codex", home / ".config" / "arnes")
    text = gather(files, notes, user=dirs)
    scoped = [f"{r.shown}={','.join(r.globs)}" for r in collect_all(files, [], user=dirs).scoped]
    return text, notes, scoped


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_unscoped_rules_join_in_claude_codes_order(ws: Path, home: Path) -> None:
    put(home / ".claude" / "CLAUDE.md", "USER-MEMORY")
    put(home / ".claude" / "rules" / "style.md", "USER-RULE")
    put(ws / "CLAUDE.md", "PROJECT-MEMORY")
    put(ws / ".claude" / "rules" / "testing.md", "PROJECT-RULE-T")
    put(ws / ".claude" / "rules" / "frontend" / "react.md", "---\n---\nPROJECT-RULE-R")  # subfolders count
    put(ws / "CLAUDE.local.md", "LOCAL-NOTES")
    text, notes, scoped = gathered(ws, home)
    order = ["USER-MEMORY", "USER-RULE", "PROJECT-MEMORY", "PROJECT-RULE-R", "PROJECT-RULE-T", "LOCAL-NOTES"]
    assert [text.index(word) for word in order] == sorted(text.index(word) for word in order)
    assert "The project's rule, .claude/rules/frontend/react.md (follow it):" in text
    assert "Your own rule, ~/.claude/rules/style.md" in text
    assert "---" not in text and notes == [] and scoped == []


def test_scoped_rules_wait_for_their_files(ws: Path, home: Path) -> None:
    put(ws / ".claude" / "rules" / "api.md", '---\npaths:\n  - "src/api/**/*.ts"\n---\nAPI-RULE')
    put(ws / ".claude" / "rules" / "tsx.md", "---\npaths: src/**/*.{ts,tsx}\n---\nTSX-RULE")
    put(home / ".claude" / "rules" / "py.md", "---\npaths: ['**/*.py']\n---\nPY-RULE")
    text, notes, scoped = gathered(ws, home)
    assert "RULE" not in text and notes == []
    assert scoped == ["~/.claude/rules/py.md=**/*.py", ".claude/rules/api.md=src/api/**/*.ts",
                      ".claude/rules/tsx.md=src/**/*.{ts,tsx}"]  # fmt: skip


@pytest.mark.parametrize(
    ("front", "why"),
    [
        ("paths: 3", "'paths' must be a glob or a list of globs"),
        ("paths: []", "'paths' must be a glob or a list of globs"),
        ("paths:\n  nested: x", "'paths' must be a glob or a list of globs"),
    ],
)
def test_unreadable_paths_leave_the_rule_out_with_a_note(ws: Path, home: Path, front: str, why: str) -> None:
    put(ws / ".claude" / "rules" / "bad.md", f"---\n{front}\n---\nBAD-RULE")
    text, notes, scoped = gathered(ws, home)
    assert "BAD-RULE" not in text and scoped == []
    assert len(notes) == 1 and notes[0].startswith(".claude/rules/bad.md left out") and why in notes[0]


def test_an_unclosed_front_matter_is_one_note(ws: Path, home: Path) -> None:
    put(ws / ".claude" / "rules" / "open.md", "---\npaths: x\nOPEN-RULE")
    text, notes, _ = gathered(ws, home)
    assert "OPEN-RULE" not in text and len(notes) == 1 and "never closed" in notes[0]


def test_hostile_rule_files_are_refused(ws: Path, home: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text(f"{SECRET} outside")
    (ws / ".env").write_text(f"TOKEN={SECRET}\n")
    rules = ws / ".claude" / "rules"
    (rules / "out.md").symlink_to(tmp_path / "outside.md")  # a link out of the workspace
    put(rules / "secret.md", f"{SECRET} denied")  # a file a Read rule denies
    put(rules / ".hidden.md", f"{SECRET} hidden")
    put(rules / ".private" / "x.md", f"{SECRET} hidden folder")
    put(rules / "notes.txt", f"{SECRET} not markdown")
    (home / ".claude" / "rules").mkdir()
    (home / ".claude" / "rules" / "creds.md").symlink_to(home / ".claude" / ".credentials.json")
    (home / ".claude" / "rules" / "away.md").symlink_to(tmp_path / "outside.md")
    text, notes, scoped = gathered(ws, home, [SourcedRule("deny", "Read(.claude/rules/secret.md)", "test")])
    assert SECRET not in text and scoped == []
    assert len(notes) == 4, notes  # one each: the two user links, the link out, the denied file
    assert any(n.startswith(".claude/rules/out.md left out") and "link out of the workspace" in n for n in notes)
    assert any(n.startswith(".claude/rules/secret.md left out") and "deny" in n for n in notes)
    assert any(n.startswith("~/.claude/rules/creds.md left out") for n in notes)
    assert any(n.startswith("~/.claude/rules/away.md left out") and "link out of ~/.claude" in n for n in notes)


def test_each_scoped_rule_is_sent_once_and_again_after_forget(ws: Path, home: Path) -> None:
    put(ws / ".claude" / "rules" / "api.md", "---\npaths: src/api/**\n---\nAPI-RULE")
    files = HostFiles(ws, RuleEngine(ws, rules=[], home=home))
    dirs = UserDirs(home, home / ".claude", home / ".codex", home / ".config" / "arnes")
    delivery = RuleDelivery(lambda: collect_all(files, [], user=dirs).scoped)
    assert delivery.after("src/web/a.ts") == ""
    first = delivery.after("src/api/a.ts")
    assert "[The project's rule .claude/rules/api.md applies to src/api/a.ts (paths: src/api/**)" in first
    assert first.endswith("\nAPI-RULE")
    assert delivery.after("src/api/b.ts") == ""
    delivery.forget()  # compacted or rewound
    assert "API-RULE" in delivery.after("src/api/b.ts")


def _read_results(tmp_path: Path, rewind: bool) -> list[str]:
    from arnes.agent.events import Event, ToolResultEvent
    from arnes.agent.loop import Agent
    from arnes.llm.script import ScriptProvider
    from arnes.session import Session, default_tools
    from arnes.tools.base import ToolRegistry

    put(tmp_path / ".claude" / "rules" / "api.md", "---\npaths: src/**\n---\nAPI-RULE")
    put(tmp_path / "src" / "a.ts", "export {};\n")
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "src/a.ts"}}]}
    provider = ScriptProvider.from_turns([read, {"text": "ok"}, read, {"text": "ok"}])
    session = Session(workspace=tmp_path, provider=provider, tools=ToolRegistry(default_tools()))
    seen: list[Event] = []
    session.bus.subscribe(seen.append)
    agent = Agent(session)
    agent.start()
    agent.turn("look")
    if rewind:  # the conversation goes back to before the first Read: what it carried is gone
        agent.rewind_conversation(agent.messages[:1])
    agent.turn("look again")
    agent.finish()
    return [e.output for e in seen if isinstance(e, ToolResultEvent)]


def test_the_loop_says_a_scoped_rule_once_and_again_after_a_rewind(tmp_path: Path) -> None:
    once = _read_results(tmp_path / "once", rewind=False)
    assert ["API-RULE" in out for out in once] == [True, False]
    again = _read_results(tmp_path / "again", rewind=True)
    assert ["API-RULE" in out for out in again] == [True, True]


def test_unquoted_globs_that_yaml_refuses_are_read_as_claude_code_reads_them(ws: Path, home: Path) -> None:
    put(ws / ".claude" / "rules" / "ts.md", "---\npaths:\n  - **/*.ts\n  - src/*.py\n---\nTS-RULE")
    put(ws / ".claude" / "rules" / "one.md", "---\npaths: **/*.go\n---\nGO-RULE")
    text, notes, scoped = gathered(ws, home)
    assert "RULE" not in text and notes == []
    assert scoped == [".claude/rules/one.md=**/*.go", ".claude/rules/ts.md=**/*.ts,src/*.py"]


def test_a_sub_folders_instructions_come_once_outermost_first_and_again_after_forget() -> None:
    asked: list[str] = []

    def folder(name: str) -> str:
        asked.append(name)
        if name == "broken":
            raise OSError("gone")
        return {"src": "SRC-RULES", "src/legacy": "LEGACY-RULES"}.get(name, "")

    delivery = RuleDelivery(lambda: [], folder)
    first = delivery.after("src/legacy/old.py")
    assert (
        first.index("under src/,")
        < first.index("SRC-RULES")
        < first.index("under src/legacy/")
        < first.index("LEGACY-RULES")
    )
    assert delivery.after("src/legacy/other.py") == "" and delivery.after("src/new.py") == ""
    assert delivery.after("README.md") == "" and delivery.after(None) == ""  # the workspace's own: at the start
    assert delivery.after("broken/x.py") == ""  # a fault leaves the folder out, the run goes on
    delivery.forget()  # compacted: said again at the next file under it, read from the cache
    assert "LEGACY-RULES" in delivery.after("src/legacy/old.py")
    assert asked == ["src", "src/legacy", "broken"]
