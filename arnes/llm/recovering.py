"""Calls printed as text, read as calls: one wrapper around any provider (llm/recovery.py reads them).

Small local models print `<tool_call>{...}</tool_call>`, a fenced JSON call or a bare object
instead of a native call. A frontier model printing an example call in prose must not have it
run, so the wrapper is part of the model-adaptation layer: the runner puts it around providers
whose profile steers (llm/profiles.py), and the loop reports each recovery as a `steered` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arnes.llm.base import TextSink
from arnes.llm.recovery import call_id, cut_call, cut_in_last, split_tool_calls
from arnes.llm.wrapper import ProviderWrapper
from arnes.messages import Message, ModelResponse, StopReason, TextBlock, ToolCall, ToolSpec


@dataclass
class RecoveringProvider(ProviderWrapper):
    """A reply with no native call whose text holds calls: those calls, each with its own id; the
    reply as printed stays in `raw_text`."""

    cap: int  # the output cap: a recovered call cut by it is marked cut, never run half

    def complete(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], on_text: TextSink | None = None
    ) -> ModelResponse:
        response = self.inner.complete(system, messages, tools, on_text)
        text = response.message.text
        if response.message.tool_calls or not text or not tools:
            return response
        prose, recovered = split_tool_calls(text, [t.name for t in tools])
        if not recovered:
            return response
        calls = [ToolCall(call_id(), c.name, c.input) for c in recovered]
        stop: StopReason = response.stop_reason
        if stop == "max_tokens":
            if cut_in_last(calls, True):
                calls[-1] = cut_call(calls[-1], self.cap)
        else:
            stop = "tool_use"
        blocks: list[TextBlock | ToolCall] = [TextBlock(prose)] if prose else []
        return ModelResponse(Message("assistant", [*blocks, *calls]), stop, response.usage, text)
