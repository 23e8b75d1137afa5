"""The fixed cost of every request stays small, so a 4k window keeps room to work."""

from __future__ import annotations

from pathlib import Path

from arnes.agent.context import fixed_tokens
from arnes.llm.script import ScriptProvider
from arnes.session import Session

TARGET = 1500  # tokens (4 characters a token), system prompt + every tool schema


def test_system_prompt_and_tool_schemas_fit_the_budget(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns([]))
    assert {"Read", "Glob", "Grep", "Write", "Edit", "Bash", "Delegate", "ReadDoc"} <= set(session.tools.names())
    assert fixed_tokens(session.system_prompt(), session.tools.specs()) < TARGET
