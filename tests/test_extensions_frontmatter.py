"""The shared reader of skills, commands and agent definitions: front matter and where files live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arnes.errors import ConfigError
from arnes.extensions.commands import load_catalog
from arnes.extensions.frontmatter import parse
from arnes.extensions.locations import discover
from arnes.host.files import HostFiles


def test_front_matter_and_body_split() -> None:
    doc = parse("---\nname: rev\ndescription: Reviews\ntools: Read, Grep\n---\nBody $ARGUMENTS\n", Path("a.md"))
    assert doc.text("name") == "rev"
    assert doc.names("tools") == ["Read", "Grep"]
    assert doc.names("model") is None
    assert doc.body == "Body $ARGUMENTS\n"


def test_list_field_as_yaml_list_and_no_front_matter() -> None:
    one_line = parse("---\nallowed-tools: Read, Bash(git add *) Grep\n---\n", Path("a.md"))
    assert one_line.names("allowed-tools") == ["Read", "Bash(git add *)", "Grep"]
    assert parse("---\nallowed-tools:\n  - Read\n  - Bash(git *)\n---\n", Path("a.md")).names("allowed-tools") == [
        "Read",
        "Bash(git *)",
    ]
    plain = parse("just text\n", Path("a.md"))
    assert plain.meta == {} and plain.body == "just text\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("---\n{unclosed: x\n---\n", "not valid YAML (line 3)"),
        ("---\nname: a\n", "never closed"),
        ("---\n- a\n- b\n---\n", "must be 'key: value' lines"),
        ("---\n!!python/object:os.system x\n---\n", "not valid YAML"),
    ],
)
def test_bad_front_matter_is_one_line_naming_the_file(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text, Path("/ws/.arnes/commands/x.md"))
    assert "/ws/.arnes/commands/x.md" in str(err.value) and says in str(err.value)
    assert "\n" not in str(err.value)


def test_discover_orders_locations_and_refuses_a_link_out(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".arnes/commands").mkdir(parents=True)
    (ws / ".claude/commands").mkdir(parents=True)
    (ws / ".arnes/commands/fix.md").write_text("arnes fix")
    (ws / ".claude/commands/fix.md").write_text("claude fix")
    (ws / ".claude/commands/test.md").write_text("---\ndescription: run tests\n---\nrun")
    secret = tmp_path / "secret"
    secret.write_text("PRIVATE KEY")
    os.symlink(secret, ws / ".arnes/commands/leak.md")
    (home / ".config/arnes/commands").mkdir(parents=True)
    (home / ".config/arnes/commands/mine.md").write_text("user's own")
    (home / ".config/arnes/commands/test.md").write_text("the user's test")
    found, refused = discover("commands", HostFiles(ws), {"HOME": str(home)})
    # Precedence order: the user's own first (it only narrows; a repository must not replace it),
    # then .arnes/, then .claude/. Every file is kept: the catalog lets the first take a name.
    assert [(f.name, f.origin, f.document.body) for f in found] == [
        ("mine", "user", "user's own"),
        ("test", "user", "the user's test"),
        ("fix", "project", "arnes fix"),
        ("fix", "project", "claude fix"),
        ("test", "project", "run"),
    ]
    assert all("PRIVATE" not in f.document.body for f in found)
    # A link is not listed as an entry at all (entries() keeps regular files only).
    assert refused == []
    catalog = load_catalog(HostFiles(ws), frozenset(), {"HOME": str(home)})
    assert {n: c.body for n, c in catalog.commands.items()} == {
        "mine": "user's own",
        "test": "the user's test",
        "fix": "arnes fix",
    }
    shadows = sorted(r.path.relative_to(ws).as_posix() for r in catalog.refused if r.shadowed)
    assert shadows == [".claude/commands/fix.md", ".claude/commands/test.md"]


def test_discover_skills_reads_skill_md_and_reports_bad_yaml(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".arnes/skills/good").mkdir(parents=True)
    (ws / ".arnes/skills/good/SKILL.md").write_text("---\nname: good\ndescription: Does good\n---\nSteps")
    (ws / ".claude/skills/bad").mkdir(parents=True)
    (ws / ".claude/skills/bad/SKILL.md").write_text("---\n{name: [\n---\n")
    (ws / ".agents/skills/outside").mkdir(parents=True)
    os.symlink(tmp_path / "secret", ws / ".agents/skills/outside/SKILL.md")
    (tmp_path / "secret").write_text("PRIVATE")
    found, refused = discover("skills", HostFiles(ws), {"HOME": str(tmp_path / "nohome")})
    assert [f.name for f in found] == ["good"]
    whys = " | ".join(r.why for r in refused)
    assert "not valid YAML" in whys and "link out of the workspace" in whys
