"""Project and user instructions as Claude Code and Codex read them (DESIGN §16): `@path` imports,
parent folders up to the repository root, CLAUDE.local.md, ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md.

A repository writes its CLAUDE.md, so an import is also an attack: `@../../.ssh/id_rsa`, `@/etc/shadow`,
`@notes.md` as a link to the home folder, `@.env` under a deny rule, `@~/.claude/.credentials.json`.
None of them may put the file into the prompt."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arnes.agent.imports import MAX_DEPTH, import_paths
from arnes.agent.instruction_files import UserDirs
from arnes.agent.instructions import CAP, gather
from arnes.host.files import HostFiles
from arnes.permissions.engine import RuleEngine
from arnes.permissions.rules import SourcedRule

SECRET = "SECRET-KEY-4711"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text(f"{SECRET}\n")
    (path / ".claude").mkdir()
    (path / ".claude" / ".credentials.json").write_text(f'{{"token": "{SECRET}"}}\n')
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def read(ws: Path, home: Path, rules: list[SourcedRule] | None = None, cap: int = CAP) -> tuple[str, list[str]]:
    notes: list[str] = []
    files = HostFiles(ws, RuleEngine(ws, rules=list(rules or []), home=home))
    dirs = UserDirs(home, home / ".claude", home / ".codex", home / ".config" / "arnes")
    return gather(files, notes, user=dirs, cap=cap), notes


def test_imports_are_found_outside_code_only() -> None:
    text = (
        "See @README.md. and @docs/a.md#usage, mail a@b.com, `@span.md` and ``x ` @span2.md``\n"
        "```python\n@decorator\n```\n~~~~\n@tilde.md\n~~~~\n"
        "@after.md @~/.claude/x.md @my\\ file.md (@not-this.md) @README.md\n"
    )
    assert import_paths(text) == ["README.md", "docs/a.md", "after.md", "~/.claude/x.md", "my file.md"]
    assert import_paths("```\n@unclosed.md\n") == []  # an unclosed fence runs to the end
    assert import_paths("a `stray backtick\n\n@kept.md `x`") == ["kept.md"]  # a span ends at its paragraph


def test_an_import_joins_the_instructions_relative_to_its_file(ws: Path, home: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "CLAUDE.md").write_text("Read the style guide: @docs/style.md\n")
    (ws / "docs" / "style.md").write_text("Tabs, never spaces. Also @more.md\n")
    (ws / "docs" / "more.md").write_text("Name things well.\n")
    text, notes = read(ws, home)
    assert notes == []
    assert text.index("The project's CLAUDE.md") < text.index("docs/style.md (imported by CLAUDE.md):")
    assert "Tabs, never spaces." in text and "docs/more.md (imported by docs/style.md):\nName things well." in text


def test_imports_stop_at_five_hops_and_a_cycle_reads_each_file_once(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_text("top @f1.md\n")
    for i in range(1, MAX_DEPTH + 2):
        (ws / f"f{i}.md").write_text(f"file {i} @f{i + 1}.md @AGENTS.md\n")
    text, notes = read(ws, home)
    assert all(f"file {i}" in text for i in range(1, MAX_DEPTH + 1))
    assert f"file {MAX_DEPTH + 1}" not in text
    assert notes == [f"f{MAX_DEPTH}.md: @f{MAX_DEPTH + 1}.md not imported: imports go 5 deep at most"]
    assert text.count("top @f1.md") == 1  # AGENTS.md imported back by every file: read once


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("@../home/.ssh/id_rsa", "outside the workspace and your folders"),
        ("@/etc/shadow", "outside the workspace and your folders"),
        ("@notes.md", "is a link out of the workspace"),
        ("@.env", "covered by a deny or ask rule for Read"),
        ("@~/.claude/.credentials.json", "only Markdown files (*.md)"),
        ("@~/.claude/.hidden/x.md", "a hidden file or folder"),
        ("@~/.claude/projects/other/notes.md", "only the Markdown files directly in your folders"),
        ("@~/.claude/leak.md", "is a link out of ~/.claude"),
    ],
)
def test_a_hostile_import_is_refused_and_named(ws: Path, home: Path, line: str, why: str) -> None:
    (ws / ".env").write_text(f"TOKEN={SECRET}\n")
    (ws / "notes.md").symlink_to(home / ".ssh" / "id_rsa")
    (home / ".claude" / ".hidden").mkdir()
    (home / ".claude" / ".hidden" / "x.md").write_text(f"{SECRET}\n")
    (home / ".claude" / "projects" / "other").mkdir(parents=True)
    (home / ".claude" / "projects" / "other" / "notes.md").write_text(f"{SECRET}\n")
    (home / ".claude" / "leak.md").symlink_to(home / ".ssh" / "id_rsa")
    (ws / "CLAUDE.md").write_text(f"Project rules. {line}\n")
    text, notes = read(ws, home, [SourcedRule("deny", "Read(**/.env)", "test")])
    assert "Project rules." in text and SECRET not in text
    assert len(notes) == 1 and notes[0].startswith(f"CLAUDE.md: {line} not imported: ") and why in notes[0], notes


def test_the_users_folders_lend_markdown_files(ws: Path, home: Path) -> None:
    (home / ".claude" / "mine.md").write_text("My notes for this project. @topics/python.md\n")
    (home / ".claude" / "topics").mkdir()
    (home / ".claude" / "topics" / "python.md").write_text("Use type hints.\n")
    (ws / "CLAUDE.md").write_text("@~/.claude/mine.md\n")
    text, notes = read(ws, home)
    assert notes == []
    assert "~/.claude/mine.md (imported by CLAUDE.md):\nMy notes" in text
    assert "~/.claude/topics/python.md (imported by ~/.claude/mine.md):\nUse type hints." in text  # the user's own


def test_user_files_come_first_and_codex_override_wins(ws: Path, home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "AGENTS.md").write_text("codex plain\n")
    (home / ".codex" / "AGENTS.override.md").write_text("codex override\n")
    (home / ".claude" / "CLAUDE.md").write_text("claude user\n")
    (ws / "AGENTS.md").write_text("project\n")
    (ws / "CLAUDE.local.md").write_text("local\n")
    (ws / ".gitignore").write_text("CLAUDE.local.md\n")  # the user's own file is one git ignores
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    text, _ = read(ws, home)
    order = ["Your own instructions, ~/.codex/AGENTS.override.md", "Your own instructions, ~/.claude/CLAUDE.md",
             "The project's AGENTS.md", "Your notes for this project, CLAUDE.local.md"]  # fmt: skip
    assert [text.index(o) for o in order] == sorted(text.index(o) for o in order)
    assert "codex plain" not in text
    (home / ".codex" / "AGENTS.override.md").write_text("")
    assert "codex plain" in read(ws, home)[0]


def test_parent_folders_up_to_the_repository_root_and_no_further(tmp_path: Path, home: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("above the repository\n")
    repo = tmp_path / "mono"
    ws = repo / "pkg" / "app"
    ws.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "AGENTS.md").write_text("repo root rules\n")
    (repo / "pkg" / "CLAUDE.md").write_text("package rules @../secrets.md @app/local.md\n")
    (repo / "secrets.md").write_text("repo file outside the workspace\n")
    (ws / "local.md").write_text("inside the workspace\n")
    (ws / "AGENTS.md").write_text("app rules\n")
    text, notes = read(ws, home)
    assert "above the repository" not in text
    shown = ["The project's ../../AGENTS.md", "The project's ../CLAUDE.md", "local.md (imported by ../CLAUDE.md)",
             "The project's AGENTS.md"]  # fmt: skip
    assert [text.index(s) for s in shown] == sorted(text.index(s) for s in shown)
    assert "repo file outside the workspace" not in text
    assert notes == ["../CLAUDE.md: @../secrets.md not imported: it is outside the workspace and your folders "
                     "(~/.claude, ~/.codex, ~/.config/arnes)"]  # fmt: skip


def test_no_repository_means_the_workspace_alone(tmp_path: Path, home: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("a parent folder's file\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("the workspace's own\n")
    text, _ = read(ws, home)
    assert "the workspace's own" in text and "a parent folder's file" not in text


def test_a_parent_file_linking_out_of_the_repository_is_refused(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "repo"
    ws = repo / "sub"
    ws.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "CLAUDE.md").symlink_to(home / ".ssh" / "id_rsa")
    text, notes = read(ws, home)
    assert SECRET not in text
    assert notes == ["../CLAUDE.md left out of the prompt: CLAUDE.md is a link; a parent folder's instructions are "
                     "read only as a file"]  # fmt: skip


def test_a_parent_file_linking_inside_the_repository_is_refused_too(tmp_path: Path, home: Path) -> None:
    """The repository's own .env or .git/config, outside the workspace: no Read rule of the workspace covers it."""
    repo = tmp_path / "repo"
    ws = repo / "packages" / "app"
    ws.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".env").write_text(f"API_KEY={SECRET}\n")
    (repo / "AGENTS.md").symlink_to(".env")
    (repo / "packages" / "CLAUDE.md").symlink_to("../.git/config")
    (repo / ".git" / "config").write_text(f"[remote]\n url = https://{SECRET}@example.com\n")
    text, notes = read(ws, home)
    assert SECRET not in text and len(notes) == 2 and all("is a link" in n for n in notes)


def test_the_instructions_stop_at_the_cap(ws: Path, home: Path) -> None:
    (home / ".claude" / "CLAUDE.md").write_text("u" * 1000)
    (ws / "AGENTS.md").write_text("a" * 40_000)
    (ws / "CLAUDE.local.md").write_text("never seen\n")
    text, notes = read(ws, home)
    assert text.count("a") > CAP - 2000 and "never seen" not in text
    assert "[AGENTS.md cut here: the instructions stop at 32 KiB; Read it for the rest]" in text
    assert notes == ["the instructions stop at 32 KiB: AGENTS.md cut, 1 later file(s) left out"]
    assert len(read(ws, home, cap=4096)[0].encode()) < 4096 + 500


def test_a_file_cut_where_whitespace_falls_is_still_marked(ws: Path, home: Path) -> None:
    """The byte after the cap is a space: stripped, the text fits exactly; it is still a cut file."""
    (ws / "CLAUDE.md").write_text("x" * (CAP - 1) + "y end of the rule\n")
    text, notes = read(ws, home)
    assert "[CLAUDE.md cut here: the instructions stop at 32 KiB; Read it for the rest]" in text
    assert notes == ["the instructions stop at 32 KiB: CLAUDE.md cut"]


def test_a_claude_md_that_imports_agents_md_adds_its_own_lines(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_text("Shared rule.\n")
    (ws / "CLAUDE.md").write_text("@AGENTS.md\nClaude-only rule.\n")
    text, notes = read(ws, home)
    assert notes == [] and text.count("Shared rule.") == 1
    assert text.index("The project's AGENTS.md") < text.index("The project's CLAUDE.md") < text.index("Claude-only")
    (ws / "CLAUDE.md").write_text("Shared rule.\n")  # a copy, not an import: one file per folder
    assert "The project's CLAUDE.md" not in read(ws, home)[0]


def test_a_hidden_instruction_file_is_left_out(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_text(f"{SECRET}\n")
    text, notes = read(ws, home, [SourcedRule("deny", "Read(AGENTS.md)", "test")])
    assert SECRET not in text
    assert notes == ["AGENTS.md left out of the prompt: AGENTS.md is covered by a deny or ask rule for Read, so "
                     "arnes does not read it"]  # fmt: skip


def test_a_parent_file_someone_else_owns_is_not_read(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "shared"
    ws = repo / "mine"
    ws.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "AGENTS.md").write_text("a stranger's words\n")
    (ws / "AGENTS.md").write_text("my words\n")
    me = os.getuid()
    monkeypatch.setattr("arnes.agent.instruction_files.os.getuid", lambda: me + 1)  # as if another user wrote them
    text, notes = read(ws, home)
    assert "a stranger's words" not in text and "my words" in text  # the workspace is the user's choice
    assert notes == ["../AGENTS.md left out of the prompt: AGENTS.md is not yours (another user owns it), "
                     "so arnes does not read it"]  # fmt: skip


def test_codex_reads_agents_override_first_and_its_fallback_names(tmp_path: Path, home: Path) -> None:
    """Codex, per folder: AGENTS.override.md, else AGENTS.md, else the names in ~/.codex/config.toml's
    `project_doc_fallback_filenames` (each was ignored: the model got AGENTS.md, or nothing)."""
    root = tmp_path / "mono"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT-SHARED\n")
    (root / "AGENTS.override.md").write_text("ROOT-OVERRIDE\n")
    ws = root / "svc"
    ws.mkdir()
    (ws / "TEAM_GUIDE.md").write_text("SVC-FALLBACK\n")
    (ws / "CLAUDE.md").write_text("SVC-CLAUDE\n")
    text, notes = read(ws, home)
    assert "ROOT-OVERRIDE" in text and "ROOT-SHARED" not in text
    assert "SVC-CLAUDE" in text and "SVC-FALLBACK" not in text  # no fallback names configured
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "o3"\nproject_doc_fallback_filenames = ["TEAM_GUIDE.md"]\n')
    text, notes = read(ws, home)
    assert "SVC-FALLBACK" in text and "SVC-CLAUDE" not in text and notes == []
    (home / ".codex" / "config.toml").write_text('project_doc_fallback_filenames = "TEAM_GUIDE.md"\n')
    text, notes = read(ws, home)
    assert "SVC-CLAUDE" in text
    assert notes == [f"{home}/.codex/config.toml: project_doc_fallback_filenames is a list of file names; ignored"]
    (home / ".codex" / "config.toml").write_text('project_doc_fallback_filenames = ["../../../.ssh/id_rsa"]\n')
    text, notes = read(ws, home)
    assert SECRET not in text and "is not a file name in a folder; ignored" in notes[0]
