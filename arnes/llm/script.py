"""The scripted provider (DESIGN §6): replays model turns from JSON, so tests need no model."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arnes.errors import ConfigError, validation_summary
from arnes.llm.base import TextSink
from arnes.messages import (
    Message,
    ModelResponse,
    StopReason,
    TextBlock,
    ToolCall,
    ToolSpec,
    Usage,
    estimate_tokens,
)
from arnes.nesting import json_loads


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ScriptedTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    sleep: float = Field(0.0, description="seconds to wait after streaming the text, before answering (tests Ctrl-C)")


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptedTurn]
    summary: str | None = Field(None, description="the answer to compaction's summary calls")


@dataclass
class ScriptProvider:
    """Answers turn N of the script on call N; after the last, `done.` with no tool call."""

    script: Script
    name: str = "script"
    model: str = "script"
    position: int = field(default=0)

    @classmethod
    def from_file(cls, path: str) -> ScriptProvider:
        try:
            raw = json_loads(Path(path).read_text(encoding="utf-8"))
            return cls(Script.model_validate(raw))
        except OSError as exc:
            raise ConfigError(f"cannot read script {path}: {exc.strerror}") from exc
        except ValidationError as exc:  # a ValueError too: first
            raise ConfigError(
                f"script {path} is not a valid script: {validation_summary(exc)} "
                '(expected {"turns": [{"text": "...", "tool_calls": [{"name": "Read", "input": {...}}]}]})'
            ) from exc
        except ValueError as exc:  # not JSON, not UTF-8, or nested too deep (nesting.py)
            raise ConfigError(f"script {path} is not valid JSON: {exc}") from exc

    @classmethod
    def from_turns(cls, turns: list[dict[str, Any]]) -> ScriptProvider:
        return cls(Script.model_validate({"turns": turns}))

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        if not tools:  # compaction's summary call: answered aside, the script's turns stay in step
            text = self.script.summary or f"Earlier work: {len(messages)} message(s) summarised."
            return ModelResponse(Message("assistant", [TextBlock(text)]), "end_turn", Usage(0, estimate_tokens(text)))
        turns = self.script.turns
        turn = turns[self.position] if self.position < len(turns) else ScriptedTurn(text="done.")
        self.position += 1
        # A slow turn streams its text first: a test sees it and knows the request is under way.
        if turn.text and on_text:
            on_text(turn.text)
        if turn.sleep:
            time.sleep(turn.sleep)
        blocks: list[TextBlock | ToolCall] = []
        if turn.text:
            blocks.append(TextBlock(turn.text))
        for i, call in enumerate(turn.tool_calls):
            blocks.append(ToolCall(f"call_{self.position}_{i}", call.name, dict(call.input)))
        prompt_chars = len(system) + len(json.dumps([t.input_schema for t in tools]))
        prompt_chars += sum(len(json.dumps(m.to_json())) for m in messages)
        usage = Usage(
            input_tokens=max(1, prompt_chars // 4),
            output_tokens=estimate_tokens(turn.text) + 10 * len(turn.tool_calls),
        )
        stop: StopReason = "tool_use" if turn.tool_calls else "end_turn"
        return ModelResponse(Message("assistant", list(blocks)), stop, usage)
