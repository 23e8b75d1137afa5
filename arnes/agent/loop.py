"""The agent loop: query the model, run its tool calls through the gate, feed results back.

Flat on purpose: run -> step -> (limits, query) -> execute. Ending conditions are exceptions;
a tool's failure, a bad argument or a denial goes back to the model as an observation.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from arnes.agent.events import (
    ModelRequest,
    ModelResponseEvent,
    PermissionEvent,
    SessionEnd,
    SessionStart,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from arnes.errors import LimitReached, ProviderError
from arnes.messages import Message, ToolCall, ToolResultBlock, estimate_tokens
from arnes.permissions.types import ToolRequest
from arnes.session import Session
from arnes.tools.base import ToolError

MAX_WORKERS = 8


@dataclass
class RunResult:
    stop_reason: str  # end_turn | max_turns | budget | interrupted | error
    text: str = ""
    turns: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    denials: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    limit: str | None = None


class Agent:
    def __init__(self, session: Session):
        self.s = session
        self.messages: list[Message] = []
        self.result = RunResult("end_turn")
        self._ctx_tokens = 0

    # -- run ---------------------------------------------------------------------------------
    def run(self, task: str) -> RunResult:
        s = self.s
        s.bus.emit(
            SessionStart(
                s.id, str(s.workspace), s.provider.name, s.provider.model, s.mode, s.sandbox.name, s.sandbox.describe()
            )
        )
        self.messages.append(Message.user(task))
        specs = s.tools.specs()
        system = s.system_prompt()
        self._ctx_tokens = estimate_tokens(system + json.dumps([sp.input_schema for sp in specs]) + task)
        pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="arnes-tool")
        try:
            while self._step(system, specs, pool):
                pass
        except LimitReached as exc:
            self.result.stop_reason = "budget" if exc.limit != "turns" else "max_turns"
            self.result.limit = exc.limit
            self.result.error = str(exc)
        except KeyboardInterrupt:
            self.result.stop_reason = "interrupted"
        except ProviderError as exc:
            self.result.stop_reason = "error"
            self.result.error = str(exc)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            s.close()
            r = self.result
            s.bus.emit(
                SessionEnd(
                    r.stop_reason, r.turns, r.tool_calls, r.input_tokens, r.output_tokens, len(r.denials), r.error
                )
            )
        return self.result

    def _step(self, system: str, specs: list[Any], pool: ThreadPoolExecutor) -> bool:
        """One model turn and its tool calls; False when the model has finished."""
        s, r = self.s, self.result
        if s.limits.max_turns is not None and r.turns >= s.limits.max_turns:
            raise LimitReached("turns", f"stopped after {r.turns} turns (--max-turns {s.limits.max_turns})")
        r.turns += 1
        s.bus.emit(ModelRequest(r.turns, self._ctx_tokens, s.context_window))
        response = s.provider.complete(system, self.messages, specs, on_text=lambda t: s.bus.emit(TextDelta(t)))
        usage = response.usage
        r.input_tokens += usage.input_tokens
        r.output_tokens += usage.output_tokens
        if usage.input_tokens:
            self._ctx_tokens = usage.input_tokens + usage.output_tokens
        else:
            self._ctx_tokens += estimate_tokens(json.dumps(response.message.to_json()))
        text = response.message.text
        s.bus.emit(ModelResponseEvent(r.turns, response.stop_reason, usage.input_tokens, usage.output_tokens, text))
        self.messages.append(response.message)
        calls = response.message.tool_calls
        if not calls:
            r.text = text
            r.stop_reason = "end_turn"
            return False
        results = self._execute(calls, pool)
        self.messages.append(Message("user", list(results)))
        self._ctx_tokens += sum(estimate_tokens(b.content) for b in results)
        return True

    # -- tools -------------------------------------------------------------------------------
    def _execute(self, calls: list[ToolCall], pool: ThreadPoolExecutor) -> list[ToolResultBlock]:
        """Read-only calls run concurrently; a write waits for the reads before it, in order."""
        pending: list[Future[ToolResultBlock] | ToolResultBlock] = []
        for call in calls:
            self.result.tool_calls += 1
            self.s.bus.emit(ToolCallEvent(call.id, call.name, call.input))
            prepared = self._admit(call)
            if isinstance(prepared, ToolResultBlock):
                pending.append(prepared)
            elif prepared.read_only:
                pending.append(pool.submit(self._run_tool, call, prepared))
            else:
                for item in pending:
                    if isinstance(item, Future):
                        item.result()
                pending.append(self._run_tool(call, prepared))
        return [item.result() if isinstance(item, Future) else item for item in pending]

    def _admit(self, call: ToolCall) -> _Admitted | ToolResultBlock:
        """Validate the call and pass it through the permission gate."""
        s = self.s
        try:
            tool, args = s.tools.parse(call.name, call.input)
            targets = tuple(tool.targets(args, s.ctx))
        except ToolError as exc:
            return self._finish(call, str(exc), True, 0)
        command = tool.command(args)
        request = ToolRequest(call.name, call.input, targets, tool.read_only, command)
        subject = command or ", ".join(s.ctx.display(t.path) for t in targets) or call.name
        outcome = s.gate.check(request, subject, lambda: tool.preview(args, s.ctx))
        d = outcome.decision
        s.bus.emit(PermissionEvent(call.id, call.name, d.kind, d.reason, d.source))
        if not outcome.allowed:
            self.result.denials.append({"tool": call.name, "reason": d.reason, "source": d.source})
            return self._finish(call, outcome.message or f"Permission denied: {d.reason}", True, 0)
        return _Admitted(tool, args, tool.read_only)

    def _run_tool(self, call: ToolCall, admitted: _Admitted) -> ToolResultBlock:
        started = time.perf_counter()
        try:
            output, is_error = admitted.tool.run(admitted.args, self.s.ctx), False
        except ToolError as exc:
            output, is_error = str(exc), True
        except OSError as exc:
            output, is_error = f"{call.name} failed: {exc.strerror or exc}. Check the path and try again.", True
        except Exception as exc:  # a tool bug must not end the run: the model sees it, the trace keeps it
            output, is_error = f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}", True
        ms = int((time.perf_counter() - started) * 1000)
        cap = self.s.ctx.max_output_chars
        if len(output) > cap:
            output = (
                output[:cap] + f"\n... [{len(output) - cap} characters cut; ask for less, e.g. Read with offset/limit]"
            )
        return self._finish(call, output, is_error, ms)

    def _finish(self, call: ToolCall, output: str, is_error: bool, ms: int) -> ToolResultBlock:
        self.s.bus.emit(ToolResultEvent(call.id, call.name, is_error, ms, output))
        return ToolResultBlock(call.id, output, is_error)


@dataclass(frozen=True)
class _Admitted:
    tool: Any
    args: Any
    read_only: bool
