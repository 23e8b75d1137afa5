"""Custom commands as units: expansion, the catalog, the allowed-tools fence, tab completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from arnes.extensions.commands import Command, expand, load_catalog, split_invocation
from arnes.host.files import HostFiles
from arnes.permissions.scope import Fence, Fenced
from arnes.permissions.types import Decision, Target, ToolRequest
from arnes.ui.completion import SlashCompleter
from arnes.ui.slash import BUILTINS, HELP


def command(body: str, **kw: object) -> Command:
    return Command("x", body, Path("/ws/.arnes/commands/x.md"), "project", "", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("body", "args", "prompt"),
    [
        ("Review $ARGUMENTS now", "src/a.py b.py", "Review src/a.py b.py now"),
        ("From $1 to $2, not $3.", '"My Button" React', "From My Button to React, not ."),
        ("First $ARGUMENTS[0], second $ARGUMENTS[1]", "a b", "First a, second b"),
        ("Fix the bug.", "in pricing.py", "Fix the bug.\n\nARGUMENTS: in pricing.py"),  # Claude Code appends
        ("Fix the bug.", "", "Fix the bug."),
        ("Say $1", "$2 $ARGUMENTS", "Say $2"),  # one pass: an argument is never expanded again
        ("Quote $1", "'unclosed b", "Quote 'unclosed"),  # a stray quote: plain words, not an error
    ],
)
def test_expansion(body: str, args: str, prompt: str) -> None:
    assert expand(command(body), args) == prompt


def test_only_a_command_shaped_first_word_is_a_command() -> None:
    assert split_invocation("/review src/a.py  x") == ("review", "src/a.py  x")
    assert split_invocation("/review\nmore lines") == ("review", "more lines")
    assert split_invocation("/usr/bin/python is slow") is None  # a path: the task goes to the model
    assert split_invocation("fix /review") is None


def test_catalog_refuses_bad_files_and_names_the_shadowed(tmp_path: Path) -> None:
    folder = tmp_path / ".arnes" / "commands"
    folder.mkdir(parents=True)
    (folder / "help.md").write_text("mine")
    (folder / "bad.md").write_text("---\nallowed-tools: Bash(\n---\nx")
    (folder / "ok.md").write_text("---\nallowed-tools: Read, MultiEdit, WebFetch, Read(./src/**)\n---\n# Do it\nbody")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.md").write_text("in a namespace")  # Claude Code's /sub:deep (DESIGN §16)
    (folder / "my tools").mkdir()
    (folder / "my tools" / "x.md").write_text("no command can be named so")
    catalog = load_catalog(HostFiles(tmp_path), BUILTINS, {"HOME": str(tmp_path / "home")})
    assert catalog.names() == ["ok", "sub:deep"]
    ok = catalog.commands["ok"]
    assert ok.allowed == ("Read", "Edit", "Read(src/**)") and ok.description == "Do it"  # Claude names mapped
    assert any("WebFetch" in note for note in ok.notes)  # dropped: narrower, never wider
    assert [c.name for c in catalog.shadowed] == ["help"]
    assert "built-in" in (catalog.why_not("help") or "")
    assert "allowed-tools" in (catalog.why_not("bad") or "")
    assert "cannot follow a slash" in (catalog.why_not("my tools:x") or "")


class Inner:
    """The session's policy stand-in: allows everything, so any deny comes from the fence."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def decide(self, request: ToolRequest) -> Decision:
        self.asked.append(request.tool)
        return Decision("allow", "inner", "mode")


def bash(command: str) -> ToolRequest:
    return ToolRequest("Bash", {"command": command}, (), False, command)


def test_fence_lets_through_only_what_an_entry_covers(tmp_path: Path) -> None:
    inner = Inner()
    scope = Fence(("Read(src/**)", "Bash(git diff:*)"), tmp_path, "the /x command")
    fence = Fenced(inner, scope)
    read = ToolRequest("Read", {}, (Target(tmp_path / "src" / "a.py", "read", tmp_path / "src" / "a.py"),), True)
    other = ToolRequest("Read", {}, (Target(tmp_path / "a.py", "read", tmp_path / "a.py"),), True)
    assert fence.decide(read).kind == "allow" and inner.asked == ["Read"]  # inside: the inner policy decides
    assert fence.decide(other).kind == "deny"
    assert fence.decide(bash("git diff --stat")).kind == "allow"
    for outside in ("git status", "git diff && rm -rf src", "git diff > out.txt", "git diff $(rm x)", "sudo git diff"):
        decision = fence.decide(bash(outside))
        assert decision.kind == "deny" and "allows only" in decision.reason, outside
    assert scope.offers("Read") and scope.offers("Grep") and scope.offers("Bash") and not scope.offers("Write")
    assert fence.decide(ToolRequest("Skill", {"name": "verify"}, (), True)).kind == "allow"  # only narrows further


def test_fence_never_turns_an_ask_into_an_allow(tmp_path: Path) -> None:
    class Asks(Inner):
        def decide(self, request: ToolRequest) -> Decision:
            return Decision("ask", "write x", "mode")

    fence = Fenced(Asks(), Fence(("Write",), tmp_path, "the /x command"))
    write = ToolRequest("Write", {}, (Target(tmp_path / "a.py", "write", tmp_path / "a.py"),), False)
    assert fence.decide(write).kind == "ask"  # Claude Code would pre-approve; arnes only narrows


def test_completer_offers_built_in_and_file_commands(tmp_path: Path) -> None:
    folder = tmp_path / ".arnes" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\nargument-hint: '[file]'\ndescription: Review it\n---\nReview $1")
    catalog = load_catalog(HostFiles(tmp_path), BUILTINS, {"HOME": str(tmp_path / "home")})
    completer = SlashCompleter(lambda: catalog, HELP)

    def complete(text: str) -> list[tuple[str, str]]:
        found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
        return [(c.text, c.display_meta_text) for c in found]

    assert complete("/rev") == [("/review", "[file] Review it")]
    assert [name for name, _ in complete("/co")] == ["/compact", "/cost"]
    assert ("/mode", "[MODE] show or set the permission mode (default, acceptEdits, plan, bypass)") in complete("/")
    assert complete("/review src") == [] and complete("review") == []
