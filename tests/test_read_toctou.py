"""No gap between the decision and the open: a link swapped in right after a read was judged
never makes Read, Grep, Glob or ReadDoc return an outside file or a denied `.env`.

Deterministic: a policy wrapper lets the "attacker" move right after the real policy decided,
which is exactly the window a background command racing the agent would aim for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.loop import Agent
from arnes.host import nofollow
from arnes.llm.script import ScriptProvider
from arnes.messages import ToolResultBlock
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Decision, Policy, ToolRequest
from arnes.session import Session

OUTSIDE_SECRET = "OUTSIDE-SECRET-1234"
ENV_SECRET = "ENV-SECRET-5678"


class SwapAfterDecision:
    """Decides as the session would, then runs the swap: the call now opens what was swapped in."""

    def __init__(self, inner: Policy, swap: Callable[[], None]):
        self.inner, self.swap, self.swapped = inner, swap, False

    def decide(self, request: ToolRequest) -> Decision:
        decision = self.inner.decide(request)
        if not self.swapped:
            self.swapped = True
            self.swap()
        return decision


def replace_with_link(path: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        os.rename(path, path.with_name(path.name + ".moved"))
        path.symlink_to(target)

    return swap


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for folder in (ws / "sub", ws / "docs", outside):
        folder.mkdir(parents=True)
    for where in (ws / "notes.txt", ws / "sub" / "notes.txt", ws / "docs" / "guide.md"):
        where.write_text("harmless notes\n")
    (ws / ".env").write_text(f"TOKEN={ENV_SECRET}\n")
    for name in ("secret.txt", "notes.txt", "guide.md", "outside-only-name.txt"):
        (outside / name).write_text(f"{OUTSIDE_SECRET}\n")
    return ws, outside


def results(ws: Path, call: dict[str, Any], swap: Callable[[], None]) -> list[ToolResultBlock]:
    provider = ScriptProvider.from_turns([{"tool_calls": [call]}])
    rules = [SourcedRule("deny", "Read(**/.env*)", "flag")]
    session = Session(workspace=ws, provider=provider, rules=rules)
    wrapped = SwapAfterDecision(session.gate.policy, swap)
    session.gate.policy = wrapped
    agent = Agent(session)
    assert agent.run("go").stop_reason == "end_turn"
    assert wrapped.swapped
    return [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]


CASES: list[tuple[str, dict[str, Any], Callable[[Path, Path], Callable[[], None]]]] = [
    ("read, file -> outside", {"name": "Read", "input": {"file_path": "notes.txt"}},
     lambda ws, out: replace_with_link(ws / "notes.txt", out / "secret.txt")),
    ("read, file -> denied .env", {"name": "Read", "input": {"file_path": "notes.txt"}},
     lambda ws, out: replace_with_link(ws / "notes.txt", ws / ".env")),
    ("read, folder -> outside", {"name": "Read", "input": {"file_path": "sub/notes.txt"}},
     lambda ws, out: replace_with_link(ws / "sub", out)),
    ("grep, folder -> outside", {"name": "Grep", "input": {"pattern": "SECRET", "path": "sub",
                                                          "output_mode": "content"}},
     lambda ws, out: replace_with_link(ws / "sub", out)),
    ("grep, file -> denied .env", {"name": "Grep", "input": {"pattern": "SECRET", "path": "notes.txt",
                                                            "output_mode": "content"}},
     lambda ws, out: replace_with_link(ws / "notes.txt", ws / ".env")),
    ("glob, folder -> outside", {"name": "Glob", "input": {"pattern": "*", "path": "sub"}},
     lambda ws, out: replace_with_link(ws / "sub", out)),
    ("readdoc, file -> outside", {"name": "ReadDoc", "input": {"topic": "guide"}},
     lambda ws, out: replace_with_link(ws / "docs" / "guide.md", out / "guide.md")),
    ("readdoc, docs -> outside", {"name": "ReadDoc", "input": {"topic": "guide"}},
     lambda ws, out: replace_with_link(ws / "docs", out)),
]  # fmt: skip


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of opening through no link: the one system call, and O_NOFOLLOW per component."""
    if request.param == "walk":
        monkeypatch.setattr(nofollow, "_openat2", lambda: None)
    elif nofollow._openat2() is None:
        pytest.skip("no openat2 on this kernel")
    return str(request.param)


@pytest.mark.parametrize(("name", "call", "attack"), CASES, ids=[c[0] for c in CASES])
def test_a_link_swapped_in_after_the_decision_is_not_followed(
    world: tuple[Path, Path],
    resolver: str,
    name: str,
    call: dict[str, Any],
    attack: Callable[[Path, Path], Callable[[], None]],
) -> None:
    ws, outside = world
    (result,) = results(ws, call, attack(ws, outside))
    for secret in (OUTSIDE_SECRET, ENV_SECRET, "outside-only-name"):
        assert secret not in result.content, f"{name}: {result.content}"


def test_without_a_swap_the_same_calls_read_the_file(world: tuple[Path, Path]) -> None:
    """The control: the calls above work, so a refusal above is the swap's doing."""
    ws, _ = world
    for call in ({"name": "Read", "input": {"file_path": "sub/notes.txt"}},
                 {"name": "Grep", "input": {"pattern": "harmless", "path": "sub", "output_mode": "content"}},
                 {"name": "ReadDoc", "input": {"topic": "guide"}}):  # fmt: skip
        (result,) = results(ws, call, lambda: None)
        assert "harmless notes" in result.content and not result.is_error, result.content


def test_a_search_hit_with_a_link_on_its_way_now_is_dropped(world: tuple[Path, Path]) -> None:
    """ripgrep walks by name; a folder turned into a link mid-walk leaves its hits out."""
    ws, outside = world
    session = Session(workspace=ws, provider=ScriptProvider.from_turns([]))
    assert session.ctx.listable("Grep", str(ws / "sub" / "notes.txt"))
    replace_with_link(ws / "sub", outside)()
    assert not session.ctx.listable("Grep", str(ws / "sub" / "notes.txt"))
    assert not session.ctx.listable("Grep", str(ws / "sub" / "secret.txt"))
