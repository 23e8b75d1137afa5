"""The agent loop: query the model, run its tool calls through the gate, feed results back.

Flat on purpose: run -> step -> (limits, context, query) -> execute. Ending conditions are
exceptions; a tool's failure, a bad argument or a denial goes back to the model as an observation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arnes.agent.context import THRESHOLD, clear_results, compact, fixed_tokens, message_tokens
from arnes.agent.events import (
    CompactionEvent,
    MessageEvent,
    ModelRequest,
    ModelResponseEvent,
    Notice,
    PermissionEvent,
    SessionEnd,
    Steered,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnStart,
    VerifyEvent,
)
from arnes.agent.guard import LoopGuard, Stuck
from arnes.agent.hookpoints import HookPoints
from arnes.agent.madecalls import off_limits
from arnes.agent.mentions import Attached, ReadResource, attach, block_text, resources_named
from arnes.agent.rule_delivery import FILE_TOOLS, RuleDelivery, workspace_relative
from arnes.agent.run_context import RunContext
from arnes.agent.steering import Act, Nudge, Redraw, Refuse, Reply, Rewrite
from arnes.errors import ContextExceeded, LimitReached, ProviderError
from arnes.host.paths import resolve_real
from arnes.messages import (
    Appended,
    Block,
    Message,
    ModelResponse,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    block_to_json,
)
from arnes.permissions.types import Target, ToolRequest
from arnes.rewind.checkpoints import first_line
from arnes.tools.base import Tool, ToolArgs, ToolError, dropped_note
from arnes.tools.bash import as_listing
from arnes.tools.delegate import as_delegate
from arnes.tools.multiedit import as_edit
from arnes.tools.structured import MAX_REMINDERS, REMINDER
from arnes.tools.structured import NAME as STRUCTURED

MAX_WORKERS = 8
MAX_CUT = 3  # replies cut at the output cap in a row before the run stops (stop_reason max_tokens)
CUT_NOTE = (
    "[Your reply was cut off at the output limit. Continue exactly where it stopped, "
    "without repeating what you wrote. If you were writing a tool call, call the tool again with "
    "shorter arguments (a long file in parts: Write the first part, then Edit to add the rest).]"
)


@dataclass
class RunResult:
    stop_reason: str  # end_turn | max_turns | budget | stuck | interrupted | error
    text: str = ""
    turns: int = 0
    tool_calls: int = 0  # the model's own
    arnes_calls: int = 0  # made for the model by the adaptation layer (DESIGN §15), counted apart
    input_tokens: int = 0
    output_tokens: int = 0
    denials: list[dict[str, Any]] = field(default_factory=list)  # see _deny
    error: str | None = None
    limit: str | None = None
    compactions: int = 0  # a summary or dropped turns: an extra model call or lost words
    clearings: int = 0  # old tool results cleared, no model call
    verified: bool | None = None  # None: no verify command; else how the last round ended
    verify_rounds: int = 0
    unreachable: bool = False  # the error was that no model answered at all
    structured_output: Any = None  # --json-schema: the answer the model gave through StructuredOutput


class Agent:
    def __init__(self, session: RunContext, history: list[Message] | None = None):
        self.s = session
        self.messages: list[Message] = list(history or [])
        self.result = RunResult("end_turn")
        self._last_real: int | None = None  # tokens the provider counted for the last request
        self._last_estimate = 0  # our estimate of that same request
        self._known: tuple[int, int] | None = None  # (real tokens of the conversation, its length then)
        self._current_call: str | None = None
        self._cut = 0  # replies cut at the output cap in a row
        self._cut_text = ""  # prose of cut replies, the start of the answer their continuation ends
        self._cut_chunk = ""  # the last cut reply's prose alone, to tell a loop from a continuation
        self._pool = ThreadPoolExecutor(max_workers=1)
        self.guard = LoopGuard()
        self.steer = session.steering  # the model-adaptation layer, known only by its protocol
        self._made = 0  # calls arnes made for the model, for their ids
        self._shell_runs = 0  # the user's own `!` commands, for their ids
        self._task = ""  # the user's message
        # Every message of the user's so far (a resumed session's too; a sub-agent starts with its
        # parent's): "leave api.py alone" holds for the session, not one message, for what arnes
        # may never change for the model.
        self.said: list[str] = [
            b.text for m in self.messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)
        ]
        self._announced = False  # the running Act's line was said
        self._tally = Appended(0, lambda total, new: total + message_tokens(new))  # the size, kept as it grows
        self._last_error: str | None = None  # the last tool error of the last tool turn, if it had one
        self.hooks = HookPoints(session)
        self._hook_context: list[str] = []  # what SessionStart hooks said, for the next user message
        self._point = 0  # the session's last numbered point (turns, rewinds, verify rounds)
        self._said: set[str] = set()
        # Fresh draws (a `Redraw`): the conversation's length before the reply that made this
        # turn's first change (None once compacted or rewound: it cannot go back there), and
        # whether the replies are now drawn by the `draw` role.
        self._draw_from: int | None = None
        self._drawing = False
        self.rules = RuleDelivery(session.scoped_rules, session.folder_instructions)  # `paths:` rules, once each

    def rewind_conversation(self, messages: list[Message]) -> None:
        """The conversation as it was at an earlier point (read back from the trace by rewind)."""
        self.messages = list(messages)
        self._known = None
        self._draw_from = None
        self.guard.forget()
        self.rules.forget()

    # -- run ---------------------------------------------------------------------------------
    def run(self, task: str) -> RunResult:
        """One task from start to finish: the non-interactive run."""
        self.start()
        try:
            self.turn(task)
        finally:
            self.finish()
        return self.result

    def start(self) -> None:
        s = self.s
        s.begin()  # the banner, then the MCP servers connect while the user reads it
        context, env = self.hooks.session_start("resume" if self.messages else "startup")
        self._hook_context += context
        s.ctx.command_env.update(env)  # every later Bash command of the session gets them
        s.ctx.subagent = self._delegate
        self._pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="arnes-tool")

    def turn(self, task: str, message_id: str | None = None) -> RunResult:
        """The user's message, then model turns (and verify rounds) until the model is done.
        `message_id`: the uuid the sender gave the message (stream-json input), kept with it."""
        r = self.result
        r.stop_reason, r.error, r.limit, r.text = "end_turn", None, None, ""
        with self._marked("turn", task):
            return self._turn(task, message_id)

    @contextlib.contextmanager
    def _marked(self, kind: str, label: str) -> Iterator[None]:
        """A point of the session (`mark`) around what the user asked for; its checkpoint closes after."""
        s = self.s
        self.mark(kind, label)
        try:
            yield
        finally:
            if s.checkpoints is not None:
                s.checkpoints.end(jobs=s.ctx.jobs.running())

    def _attached(self, task: str) -> list[Attached]:
        """The files the user's message names with `@` (agent/mentions.py); a sub-agent's task is the model's."""
        if self.s.depth > 0 or "@" not in task:
            return []
        attached = attach(task, self.s.ctx, self._resource_reader() if resources_named(task) else None)
        for item in attached:
            self.s.bus.emit(Notice("info", f"attached {item.shown} (@{item.name})"))
        return attached

    def user_command(self, command: str) -> tuple[str, bool]:
        """Claude Code's bash mode (`!cmd` at the prompt): the user's own command, run at once in
        the sandbox with no permission rule asked (the user typed it), a rewind point before it,
        seen as a call `by` the user in the trace. (its output, whether it failed)"""
        s = self.s
        tool = s.tools.get("Bash")
        if tool is None:
            return "Bash is not among this session's tools (--tools), so `!` runs nothing", True
        self._shell_runs += 1
        call_id = f"user_shell_{self._shell_runs}"
        with self._marked("shell", f"!{command}"):
            s.bus.emit(ToolCallEvent(call_id, "Bash", {"command": command}, by="user"))
            started = time.monotonic()
            try:
                output, failed = str(tool.run(tool.args_model.model_validate({"command": command}), s.ctx)), False
            except (ToolError, ValidationError) as exc:
                output, failed = str(exc), True
        s.bus.emit(ToolResultEvent(call_id, "Bash", failed, int((time.monotonic() - started) * 1000), output))
        return output, failed

    def _resource_reader(self) -> ReadResource | None:
        """Reads an `@server:uri` as ReadMcpResourceTool would, unless a rule denies that tool."""
        s = self.s
        s.tool_specs()  # the servers' tools (resources' too) once they started: the first time, waits for them
        tool = s.tools.get("ReadMcpResourceTool")
        if tool is None or not s.quietly_allowed(ToolRequest("ReadMcpResourceTool", {})):
            return None

        def read(server: str, uri: str) -> str | None:
            try:
                return str(tool.run(tool.args_model.model_validate({"server": server, "uri": uri}), s.ctx))
            except (ToolError, ValidationError):
                return None

        return read

    def mark(self, kind: str, label: str, **extra: Any) -> int:
        """Point n of the session begins: a checkpoint of the workspace (the top-level session's),
        and a mark in the trace that a conversation rewind goes back to (DESIGN §17)."""
        s = self.s
        if s.depth > 0:
            return 0
        if s.checkpoints is not None:
            self._point = s.checkpoints.begin(kind, label, jobs=s.ctx.jobs.running(), **extra)
            if s.checkpoints.problem is not None and "checkpoints" not in self._said:
                self._said.add("checkpoints")
                s.bus.emit(Notice("warning", f"warning: {s.checkpoints.problem}"))
            while s.checkpoints.notes:
                s.bus.emit(Notice("warning", f"warning: {s.checkpoints.notes.pop(0)}"))
        else:
            self._point += 1
        s.bus.emit(TurnStart(self._point, kind, first_line(label)))
        return self._point

    def _turn(self, task: str, message_id: str | None) -> RunResult:
        s, r = self.s, self.result
        s.new_turn()
        self.guard.reset()
        self.steer.new_turn(task)
        self._task = task
        self.said.append(task)
        self._last_error = None
        self.hooks.stop_blocks, self.hooks.halt = 0, None
        r.structured_output = None
        if s.structured is not None:  # each message's answer is its own
            s.structured.value, s.structured.given, s.structured.reminders = None, False, 0
        blocked, context = self.hooks.prompt(task)
        if blocked is not None:  # not sent: the model never sees it
            r.stop_reason, r.error = "error", f"a UserPromptSubmit hook blocked the prompt: {blocked}"
            return r
        named = self.steer.task_note(task)
        said: list[Block] = [
            *([TextBlock(named)] if named else []),
            TextBlock(task),
            *(TextBlock(block_text(a)) for a in self._attached(task)),
            *(TextBlock(c) for c in [*self._hook_context, *context]),
        ]
        self._hook_context = []
        named_as = {"uuid": message_id} if message_id else {}
        if not self.messages:  # the session's context leads its first message: the system prompt stays fixed
            self._append(Message("user", [TextBlock(s.context()), *said]), message_id)
        elif self.messages[-1].role == "user":  # resumed after results or a task
            self.messages[-1] = Message("user", [*self.messages[-1].content, *said])
            s.bus.emit(MessageEvent("user", [block_to_json(b) for b in said], **named_as))
        else:
            self._append(Message("user", said), message_id)
        specs = s.tool_specs()
        system = s.system_prompt()
        rounds = 0
        self._draw_from, self._drawing = len(self.messages), False
        try:
            while True:
                while self._step(system, specs, self._pool):
                    pass
                if s.verifier is None:
                    break
                rounds += 1
                self.mark("verify", f"verify round {rounds}: {s.verifier.command}")
                s.ctx.changes.before_command()  # what the verify command writes is reported too
                verdict = s.verifier.check()
                r.verified = verdict.passed
                s.bus.emit(VerifyEvent(rounds, verdict.command, verdict.passed, verdict.exit_code, verdict.output))
                if verdict.passed or rounds > s.verifier.rounds:
                    break
                self._append(Message.user(s.verifier.feedback(verdict, rounds)))
        except LimitReached as exc:
            r.stop_reason = "budget" if exc.limit != "turns" else "max_turns"
            r.limit = exc.limit
            r.error = str(exc)
            self._answer_pending(f"Not run: {exc}")
        except Stuck as exc:
            r.stop_reason, r.limit, r.error = "stuck", "stuck", str(exc)
        except KeyboardInterrupt:
            r.stop_reason = "interrupted"
            self._answer_pending("Interrupted by the user before it ran.")
        except ProviderError as exc:
            r.stop_reason = "error"
            r.error = str(exc)
            r.unreachable = exc.unreachable
        r.verify_rounds = rounds
        if s.structured is not None and s.structured.given:
            r.structured_output = s.structured.value
        return r

    def finish(self) -> None:
        s, r = self.s, self.result
        self.hooks.session_end(r.stop_reason)
        if s.checkpoints is not None:
            for dropped in s.checkpoints.close():
                s.bus.emit(Notice("info", f"rewind: dropped the checkpoints of session {dropped} (storage cap)"))
        self._pool.shutdown(wait=False, cancel_futures=True)
        for note in s.end():
            s.bus.emit(Notice("warning", note))
        s.bus.emit(
            SessionEnd(
                r.stop_reason,
                r.turns,
                r.tool_calls,
                r.input_tokens,
                r.output_tokens,
                len(r.denials),
                r.error,
                r.verified,
                s.budget.cost if s.provider.model in s.budget.prices else None,
                r.arnes_calls,
            )
        )

    def _answer_pending(self, why: str) -> None:
        """Calls left without results (Ctrl-C, a limit) get one, in memory and in the trace."""
        if self.messages and self.messages[-1].role == "assistant" and self.messages[-1].tool_calls:
            self._append(Message("user", [ToolResultBlock(c.id, why, True) for c in self.messages[-1].tool_calls]))

    def _append(self, message: Message, message_id: str | None = None) -> None:
        self.messages.append(message)
        named_as = {"uuid": message_id} if message_id else {}
        self.s.bus.emit(MessageEvent(message.role, message.to_json()["content"], **named_as))

    def _step(self, system: str, specs: list[ToolSpec], pool: ThreadPoolExecutor) -> bool:
        """One model turn and its tool calls; False when the model has finished."""
        s, r = self.s, self.result
        if s.limits.max_turns is not None and r.turns >= s.limits.max_turns:
            raise LimitReached("turns", f"stopped after {r.turns} turns (--max-turns {s.limits.max_turns})")
        r.turns += 1
        fixed = fixed_tokens(system, specs)
        self._fit(fixed)
        estimate = fixed + self._tally(self.messages)
        s.bus.emit(ModelRequest(r.turns, self._measure(fixed), s.context_window))
        response = self._query(system, specs, fixed)
        usage = response.usage
        r.input_tokens += usage.input_tokens
        r.output_tokens += usage.output_tokens
        if usage.input_tokens:
            self._last_real, self._last_estimate = usage.input_tokens, estimate
        text = response.message.text
        s.bus.emit(
            ModelResponseEvent(
                r.turns, response.stop_reason, usage.input_tokens, usage.output_tokens, text, response.raw_text
            )
        )
        if self._draw_from is not None and not s.ctx.changes.this_turn:  # no attempt yet: a draw starts here
            self._draw_from = len(self.messages)
        self._append(response.message)
        if response.raw_text is not None:  # calls read from the reply's text (llm/recovering.py)
            made = "; ".join(_said(c) for c in response.message.tool_calls)
            s.bus.emit(Steered("text-calls", "reply", "rewrite", _cut(response.raw_text), _cut(made)))
        if usage.input_tokens:
            self._known = (usage.input_tokens + usage.output_tokens, len(self.messages))
        s.budget.charge(s.provider.model, usage)
        calls = response.message.tool_calls
        if response.stop_reason == "max_tokens":
            return self._cut_reply(calls, text, pool)
        text, self._cut, self._cut_text = self._cut_text + text, 0, ""
        if not calls:
            return self._on_reply(text, specs)
        results = self._execute(calls, pool)
        self._last_error = next((res.content for res in reversed(results) if res.is_error), None)
        nudge = self.guard.after_tools(calls, results)
        self._append(Message("user", [*results, *([TextBlock(nudge)] if nudge else [])]))
        if nudge:
            s.bus.emit(Notice("info", "the model is repeating itself; asked it to try something else"))
        if self.hooks.halt is not None:  # a hook said `continue: false`
            r.text, r.stop_reason = self.hooks.halt, "end_turn"
            return False
        self.guard.raise_if_stuck()
        return True

    def _on_reply(self, text: str, specs: list[ToolSpec]) -> bool:
        """A reply with no call: the adaptation layer decides whether it stands (False: the turn ends)."""
        s, r = self.s, self.result
        names = {spec.name for spec in specs}
        reply = Reply(
            text,
            wrote=bool(s.ctx.changes.this_turn),
            can_write=s.can_write(names),
            can_run="Bash" in names,
            last_error=self._last_error,
            verified_later=s.verifier is not None,
        )
        decision = self.steer.on_reply(reply)
        while isinstance(decision, Act):
            self._announced = False
            results = [self._make(call, decision) for call in decision.calls]
            made = [_said(c) for c, res in zip(decision.calls, results, strict=True) if res is not None]
            ran = "; ".join(made) or "nothing: the rules would not allow it unasked"
            self._steered(decision.piece, "reply", "act", decision.sent or text, ran)
            decision = self.steer.on_acted(decision, results, reply)
        if isinstance(decision, Redraw) and self._draw_from is None:  # compacted: say it instead
            decision = Nudge(decision.piece, decision.fallback, decision.sent)
        if isinstance(decision, Redraw):
            self._redraw(decision, text)
            return True
        if isinstance(decision, Nudge):
            self._steered(decision.piece, "reply", "nudge", decision.sent or text, decision.text)
            self._append(Message.user(decision.text))
            return True
        if decision.note:
            s.bus.emit(Notice("warning", decision.note))
        back = self.hooks.stop()
        if back is not None:
            self._append(Message.user(back))
            return True
        r.text = text
        r.stop_reason = "end_turn"
        return self._structured_missing()

    def _structured_missing(self) -> bool:
        """With `--json-schema`, a reply without the answer's call is reminded of it a few times,
        then the run fails as Claude Code's does (True: the turn goes on)."""
        answer, r = self.s.structured, self.result
        if answer is None or answer.given or self.s.depth > 0:
            return False
        if answer.reminders >= MAX_REMINDERS:
            r.stop_reason, r.limit = "error", "structured_output"
            r.error = f"the model ended {MAX_REMINDERS + 1} times without calling {STRUCTURED}: no structured output"
            return False
        answer.reminders += 1
        self.s.bus.emit(Notice("info", f"the answer must come through {STRUCTURED}: reminded the model "
                                       f"({answer.reminders}/{MAX_REMINDERS})"))  # fmt: skip
        self._append(Message.user(REMINDER))
        return True

    def _redraw(self, decision: Redraw, text: str) -> None:
        """The conversation back to where the turn's first attempt was made (what the model had
        read stays; its attempts and their failures go); the next replies are sampled, or follow
        the decision's own message. The trace's
        `steered` event with action `redraw` and `keep` is what resume replays (agent/resume.py)."""
        keep = self._draw_from
        assert keep is not None
        self.s.bus.emit(
            Steered(decision.piece, "reply", "redraw", _cut(decision.sent or text), _cut(decision.why), keep)
        )
        del self.messages[keep:]
        self._known, self._last_error, self._drawing = None, None, decision.sample
        self.guard.forget()
        self.rules.forget()  # a rule that came with a dropped result is said again at the next match
        if decision.then:  # a message of its own in place of the attempts, so the next redraw drops it too
            self._append(Message.user(decision.then))

    def _steered(self, piece: str, moment: str, action: str, sent: str, ran: str) -> None:
        """One intervention in the trace, on screen and in stream-json: what the model sent, what ran."""
        self.s.bus.emit(Steered(piece, moment, action, _cut(sent), _cut(ran)))

    def _make(self, call: ToolCall, act: Act) -> ToolResultBlock | None:
        """A call arnes makes for the model: through the hooks and the gate like the model's own,
        never to a test file or a file the user's message says to leave alone. None: a quiet call
        the rules would not allow without asking, or a hook blocked; it is left out, unseen."""
        s = self.s
        self._made += 1
        call = ToolCall(f"arnes_{act.piece}_{self._made}", call.name, call.input)
        try:
            request = self._request(call)[2]
        except (ToolError, OSError, ValueError) as exc:
            return None if act.quiet else ToolResultBlock(call.id, f"{call.name} was not made: {exc}", True)
        if act.quiet and not s.quietly_allowed(request):
            return None
        if not request.read_only:
            barred = off_limits("\n".join(self.said), [t.path for t in request.targets], s.workspace, call)
            if barred is not None:
                return ToolResultBlock(call.id, f"arnes did not make this {call.name} for you: {barred}", True)
        self.result.arnes_calls += 1
        if act.say and not self._announced:  # said once, before the act's first call
            s.bus.emit(Notice("info", act.say))
            self._announced = True
        s.bus.emit(ToolCallEvent(call.id, call.name, call.input, by="arnes"))
        prepared = self._admit(call)
        if isinstance(prepared, ToolResultBlock):
            return None if act.quiet else prepared
        return self._run_tool(prepared.call or call, prepared, by_model=False)

    def _query(self, system: str, specs: list[ToolSpec], fixed: int) -> ModelResponse:
        """Ask the model; a server that finds the request too long gets a compacted one, once."""
        s = self.s

        drawn = s.provider_for("draw") if self._drawing else s.provider
        provider = drawn if drawn.model == s.provider.model else s.provider

        def ask() -> ModelResponse:
            return provider.complete(system, self.messages, specs, on_text=lambda t: s.bus.emit(TextDelta(t)))

        try:
            return ask()
        except ContextExceeded as exc:
            if exc.window and exc.window < s.context_window:
                s.context_window = exc.window  # the server knows its window better than the settings
            s.bus.emit(Notice("warning", f"{exc}; compacting to {s.context_window} tokens and trying once more"))
            self._fit(fixed, force=True, trigger="auto")
            return ask()

    def _cut_reply(self, calls: list[ToolCall], text: str, pool: ThreadPoolExecutor) -> bool:
        """A reply cut by the output cap is never the end: its whole calls run, the rest is asked again."""
        r = self.result
        self._cut += 1
        # A 1.5B model, asked to continue, it wrote the same 2,048 tokens from the
        # start again, about three minutes each on a CPU; the same text twice is a loop, not progress.
        again = not calls and self._cut > 1 and text == self._cut_chunk
        self._cut_chunk = "" if calls else text
        if self._cut > MAX_CUT or again:
            r.stop_reason, r.text, self._cut_text = "max_tokens", self._cut_text + text, ""
            why = (
                "and its continuation began with the same text again (a loop)"
                if again
                else f"{MAX_CUT + 1} times in a row"
            )
            r.error = (
                f"the model's reply was cut off at the output limit {why}: "
                "raise --max-output-tokens (model.max_output_tokens) or ask for smaller steps"
            )
            self._answer_pending("Not run: the reply was cut off at the output limit.")
            return False
        if calls:
            self._cut_text = ""
            self._append(Message("user", list(self._execute(calls, pool))))
        else:
            self._cut_text += text
            self._append(Message.user(CUT_NOTE))
        return True

    # -- context -----------------------------------------------------------------------------
    def _calibrated(self, estimate: int) -> int:
        """Our estimate, scaled by how far off it was from the provider's count last time."""
        if self._last_real and self._last_estimate:
            return int(estimate * max(1.0, self._last_real / self._last_estimate))
        return estimate

    def context_usage(self) -> tuple[int, int]:
        """Tokens of the next request: the system prompt and tools, and the conversation (an
        estimate calibrated by the provider's last count). Safe from another thread: it only reads."""
        fixed = fixed_tokens(self.s.system_prompt(), self.s.tool_specs())
        return fixed, max(0, self._measure(fixed) - fixed)

    def _measure(self, fixed: int) -> int:
        """The next request's size: the provider's own count of the last one plus what came since."""
        if self._known is not None:
            real, length = self._known
            return real + self._calibrated(message_tokens(self.messages[length:]))
        return self._calibrated(fixed + message_tokens(self.messages))

    def _fit(self, fixed: int, force: bool = False, trigger: str = "auto") -> None:
        """Make room before a request would pass ~80% of the window: clear old results, else compact."""
        s = self.s
        limit = int(s.context_window * THRESHOLD)
        scale = self._calibrated(1000) / 1000
        before = self._measure(fixed)
        if before <= limit and not force:
            return
        budget = max(1, int(limit / scale) - fixed)
        done = clear_results(self.messages, budget) if trigger == "auto" else None  # no model call
        if done is None:
            self.hooks.pre_compact(trigger)
            done = compact(self.messages, budget, s.summarise, force=force)
        if done is None:
            return
        self.messages = done.messages
        self._known = None
        self._draw_from = None  # the conversation is not what it was: no fresh draw from a point in it
        if done.method == "clear":
            self.result.clearings += 1
        else:
            self.result.compactions += 1
        self.guard.forget()
        self.rules.forget()  # what the results carried may be gone: said again at the next match
        after = self._measure(fixed)
        s.bus.emit(CompactionEvent(before, after, done.method, done.removed, [m.to_json() for m in self.messages]))

    def compact_now(self) -> None:
        """/compact: summarise older turns now, whatever the size."""
        self._fit(fixed_tokens(self.s.system_prompt(), self.s.tool_specs()), force=True, trigger="manual")

    # -- tools -------------------------------------------------------------------------------
    def _execute(self, calls: list[ToolCall], pool: ThreadPoolExecutor) -> list[ToolResultBlock]:
        """Read-only calls run concurrently; a write waits for the reads before it, in order."""
        pending: list[Future[ToolResultBlock] | ToolResultBlock] = []
        for call in calls:
            self.result.tool_calls += 1
            self.s.bus.emit(ToolCallEvent(call.id, call.name, call.input))
            sent = call  # as the model sent it: what the PreToolUse hooks see (a `Task`, in Claude Code's shape)
            call = aliased = _claude_names(call)
            decision = self.steer.before_call(call)
            if isinstance(decision, Refuse):
                self._steered(decision.piece, "call", "refuse", _said(call), decision.text)
                pending.append(self._finish(call, decision.text, True, 0))
                continue
            if isinstance(decision, Rewrite):
                self._steered(decision.piece, "call", "rewrite", _said(call), f"{decision.why}: {_said(decision.call)}")
                call = ToolCall(call.id, decision.call.name, decision.call.input)
            # Hooks see Claude Code's name of a call (`Task`), and a call a piece rewrote as it will run.
            # A MultiEdit is an Edit to the hooks too (a matcher "Edit" guards it; its input keeps `edits`).
            hooked = call is aliased and sent.name != call.name and as_delegate(sent.name, sent.input) is not None
            prepared = self._admit(call, sent if hooked else None)
            if isinstance(prepared, ToolResultBlock):
                pending.append(prepared)
                continue
            call = prepared.call or call
            if prepared.read_only:
                pending.append(pool.submit(self._run_tool, call, prepared))
            else:
                for item in pending:
                    if isinstance(item, Future):
                        item.result()
                pending.append(self._run_tool(call, prepared))
        return [item.result() if isinstance(item, Future) else item for item in pending]

    def _admit(self, call: ToolCall, as_sent: ToolCall | None = None) -> _Admitted | ToolResultBlock:
        """Validate the call, ask the PreToolUse hooks, and pass what would run through the gate.

        `as_sent`: the model's call under Claude Code's name (`Task`), which the hooks see and
        whose shape their `updatedInput` has; it is made arnes's call again afterwards."""
        s = self.s
        note = ""
        try:
            tool, args, request, dropped = self._request(call)
            judged = {str(t.path): str(t.real) for t in request.targets if t.real is not None}
            said = self.hooks.pre_tool(as_sent or call, judged)  # the paths the write will use
            if said.blocked is not None:
                why = f"blocked by a PreToolUse hook: {said.blocked}"
                s.bus.emit(PermissionEvent(call.id, call.name, "deny", why, "hook"))
                self._deny(call, said.blocked, "hook")
                return self._finish(call, f"Blocked by a PreToolUse hook: {said.blocked}{said.notes}", True, 0)
            if said.updated is not None and said.updated != (as_sent or call).input:  # what runs is judged
                call = _claude_names(ToolCall(call.id, (as_sent or call).name, said.updated))
                tool, args, request, dropped = self._rewritten(call)
                note = rewrite_note(call)
            targets, command = request.targets, request.command
            subject = command or ", ".join(s.ctx.display(t.path) for t in targets) or call.name
            outcome = s.gate.check(request, subject, lambda: tool.preview(args, s.ctx), said.decision)
        except ToolError as exc:
            return self._finish(call, str(exc), True, 0)
        except (OSError, ValueError) as exc:  # a path that cannot be judged is not run
            s.bus.emit(PermissionEvent(call.id, call.name, "deny", f"could not judge the call: {exc}", "mode"))
            self._deny(call, str(exc), "mode")
            return self._finish(call, f"Permission denied: the call could not be judged ({exc}).", True, 0)
        d = outcome.decision
        s.bus.emit(PermissionEvent(call.id, call.name, d.kind, d.reason, d.source))
        if not outcome.allowed:
            self._deny(call, d.reason, d.source)
            return self._finish(call, (outcome.message or f"Permission denied: {d.reason}") + said.notes, True, 0)
        # Reads and writes both open exactly the real path that was judged, never a link swapped in.
        pins = {t.path: t.real for t in targets if t.real is not None}
        note += dropped_note(call.name, dropped) if dropped else ""
        return _Admitted(tool, args, tool.read_only, pins, d.confine, note, call, said.notes)

    def _rewritten(self, call: ToolCall) -> tuple[Tool[Any], ToolArgs, ToolRequest, list[str]]:
        """`_request` for the input a PreToolUse hook put in place of the model's (said on screen too)."""
        self.s.bus.emit(Notice("info", f"a PreToolUse hook changed the {call.name} call to {_cut(_said(call), 300)}"))
        try:
            return self._request(call)
        except ToolError as exc:
            raise ToolError(
                f"A PreToolUse hook changed this call's input, and the new input is not valid: {exc}"
            ) from None

    def _deny(self, call: ToolCall, reason: str, source: str) -> None:
        """A denial as Claude Code lists it (tool_name, tool_use_id, tool_input), arnes's words beside."""
        self.result.denials.append(
            {
                "tool_name": call.name,
                "tool_use_id": call.id,
                "tool_input": call.input,
                "tool": call.name,
                "reason": reason,
                "source": source,
            }
        )

    def _request(self, call: ToolCall) -> tuple[Tool[Any], ToolArgs, ToolRequest, list[str]]:
        """The tool, its parsed arguments and the request the policy judges (ToolError: a bad call)."""
        s = self.s
        tool, args, dropped = s.tools.parse_call(call.name, call.input)
        # Each path's real path is resolved once: the decision and the write both use it.
        targets = tuple(Target(t.path, t.access, resolve_real(t.path)) for t in tool.targets(args, s.ctx))
        return (
            tool,
            args,
            ToolRequest(call.name, call.input, targets, tool.read_only, tool.command(args), call_id=call.id),
            dropped,
        )

    def _run_tool(self, call: ToolCall, admitted: _Admitted, by_model: bool = True) -> ToolResultBlock:
        started = time.perf_counter()
        self._current_call = call.id
        ctx = self.s.ctx
        if not admitted.read_only:  # writes run one at a time, so the pins are this call's
            ctx.pinned = admitted.pins
            ctx.confined = admitted.confine
        elif admitted.pins:  # reads run in parallel: each gets its own pins
            ctx = dataclasses.replace(ctx, pinned=admitted.pins)
        try:
            output, is_error = admitted.tool.run(admitted.args, ctx), False
        except ToolError as exc:
            output, is_error = str(exc), True
        except OSError as exc:
            output, is_error = f"{call.name} failed: {exc.strerror or exc}. Check the path and try again.", True
        except (LimitReached, KeyboardInterrupt, ProviderError):
            raise
        except Exception as exc:  # a tool bug must not end the run: the model sees it, the trace keeps it
            output, is_error = f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}", True
        ms = int((time.perf_counter() - started) * 1000)
        raw = output  # the tool's own result (an `Output` carries Claude Code's shape of it, for hooks)
        output += admitted.note
        # An MCP tool's result has its own cap (Claude Code's MAX_MCP_OUTPUT_TOKENS, envlimits.py).
        cap = self.s.ctx.mcp_output_chars if call.name.startswith("mcp__") else self.s.ctx.max_output_chars
        if len(output) > cap:
            cut = len(output) - cap
            output = output[:cap] + f"\n... [{cut} characters cut; ask for less, e.g. Read with offset/limit]"
        output += admitted.hook_context
        output = self.hooks.post_tool(call, output, is_error, raw, ms)
        if not is_error and call.name in FILE_TOOLS:
            output += self.rules.after(self._touched(admitted))
        if not is_error and call.name in ("Write", "Edit") and self.s.lsp is not None:
            output += self._diagnostics(admitted)
        # The layer judges the model's own calls; its own (a test run, a format's Write) it already knows.
        note = self.steer.after_result(call, ToolResultBlock(call.id, output, is_error)) if by_model else None
        if isinstance(note, Nudge):
            self._steered(note.piece, "result", "nudge", _said(call), note.text)
            output += "\n" + note.text
        return self._finish(call, output, is_error, ms)

    def _diagnostics(self, admitted: _Admitted) -> str:
        """What a plugin's language server says of the file as just written (as Claude Code shows
        diagnostics after an edit); a server that failed to start is said to the user once."""
        hub, written = self.s.lsp, getattr(admitted.args, "file_path", None)
        if hub is None or not isinstance(written, str):
            return ""
        try:
            path = self.s.ctx.path(written)
        except ToolError:
            return ""
        said = hub.after_write(path, admitted.pins.get(path) or path) if hub.handles(path) else ""
        while hub.notes:
            self.s.bus.emit(Notice("warning", f"warning: {hub.notes.pop(0)}"))
        return said

    def _touched(self, admitted: _Admitted) -> str | None:
        """The workspace-relative path a file tool worked on, for the rules scoped to it."""
        written = getattr(admitted.args, "file_path", None) or getattr(admitted.args, "notebook_path", None)
        if not isinstance(written, str):
            return None
        try:
            return workspace_relative(self.s.ctx.path(written), self.s.workspace)
        except ToolError:
            return None

    def _finish(self, call: ToolCall, output: str, is_error: bool, ms: int) -> ToolResultBlock:
        self.s.bus.emit(ToolResultEvent(call.id, call.name, is_error, ms, output))
        return ToolResultBlock(call.id, output, is_error)

    # -- sub-agents --------------------------------------------------------------------------
    def _delegate(self, task: str, read_only: bool, agent: str | None = None) -> str:
        """Run a sub-agent with a clean context; only its conclusion comes back."""
        child = self.s.delegate(agent, read_only=read_only, parent_call=self._current_call or "delegate")
        below = Agent(child)
        below.said = [*self.said]  # what the user said to leave alone holds below too
        result = below.run(task)
        self.result.input_tokens += result.input_tokens
        self.result.output_tokens += result.output_tokens
        if result.stop_reason in ("budget", "interrupted"):
            raise_for(result)
        if result.stop_reason != "end_turn":
            detail = result.error or result.stop_reason
            raise ToolError(f"The sub-agent stopped before finishing ({detail}). Its last words: {result.text or '-'}")
        return result.text or "(the sub-agent finished without a conclusion)"


def raise_for(result: RunResult) -> None:
    """Turn a run that did not finish into the exception its caller's exit code comes from."""
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    if result.stop_reason == "stuck":
        raise Stuck(result.error or "the model kept repeating itself")
    if result.stop_reason in ("budget", "max_turns"):
        raise LimitReached(result.limit or result.stop_reason, result.error or "a limit stopped the run")
    if result.stop_reason == "error":
        raise ProviderError(result.error or "the model failed")


@dataclass(frozen=True)
class _Admitted:
    tool: Any
    args: Any
    read_only: bool
    pins: dict[Path, Path] = field(default_factory=dict)
    confine: bool = False
    note: str = ""  # said after the result: a hook's rewrite, the unknown keys dropped from the call
    call: ToolCall | None = None  # the call that runs (a PreToolUse hook may have changed its input)
    hook_context: str = ""  # the PreToolUse hooks' additionalContext, after the result (never cut off)


def rewrite_note(call: ToolCall) -> str:
    """The line after a result whose input a PreToolUse hook changed: the model reads what ran."""
    return f"\n[arnes: a PreToolUse hook changed this call's input to {_cut(json.dumps(call.input), 500)}]"


def _claude_names(call: ToolCall) -> ToolCall:
    """A call under Claude Code's name for one of arnes's tools (`Task`, `MultiEdit`, `LS`) as
    arnes's own (Delegate, Edit, Bash's `ls`)."""
    delegated = as_delegate(call.name, call.input)
    if delegated is not None:
        return ToolCall(call.id, "Delegate", delegated)
    listing = as_listing(call.name, call.input)
    if listing is not None:
        return ToolCall(call.id, "Bash", listing)
    edit = as_edit(call.name, call.input)
    return call if edit is None else ToolCall(call.id, "Edit", edit)


def _said(call: ToolCall) -> str:
    return f"{call.name} {json.dumps(call.input, ensure_ascii=False)}"


def _cut(text: str, most: int = 2000) -> str:
    return text if len(text) <= most else text[:most] + f" ... [{len(text) - most} characters more]"
