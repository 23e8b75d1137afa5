"""Edit's hints for a small model: the near miss is shown, and the same refused call again is named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arnes.agent.loop import Agent
from arnes.llm.script import ScriptProvider
from arnes.messages import ToolResultBlock
from arnes.session import Session
from arnes.tools.base import ToolError
from arnes.tools.editmatch import replace

PRICING = '"""Prices."""\n\nDISCOUNT_RATE = 0.10\n\n\ndef total(price):\n    return price * (1 - DISCOUNT_RATE)\n'


def test_a_near_miss_that_differs_in_case_and_name_shows_the_closest_line() -> None:
    with pytest.raises(ToolError) as err:
        replace(PRICING, "discount = 0.10", "discount = 0.15", False, "pricing.py")
    assert "closest match is at lines 3-3" in str(err.value) and "     3\tDISCOUNT_RATE = 0.10" in str(err.value)


def test_the_same_edit_after_a_refusal_that_showed_the_file_gets_a_pointed_message(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B on the discount task: refused (not read), then the very same Edit."""
    (tmp_path / "pricing.py").write_text(PRICING)
    edit: dict[str, Any] = {
        "name": "Edit",
        "input": {"file_path": "pricing.py", "old_string": "discount = 0.10", "new_string": "discount = 0.15"},
    }
    turns = [{"tool_calls": [edit]}, {"tool_calls": [edit]}, {"text": "done"}]
    session = Session(workspace=tmp_path, provider=ScriptProvider.from_turns(turns), mode="acceptEdits")
    agent = Agent(session)
    agent.run("raise the discount to 15%")
    results = [b for m in agent.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert "has not been read yet" in results[0].content
    second = results[1].content
    assert second.startswith("This is the same Edit as the one refused above, where the whole content of pricing.py")
    assert "DISCOUNT_RATE = 0.10" in second
    assert (tmp_path / "pricing.py").read_text() == PRICING
