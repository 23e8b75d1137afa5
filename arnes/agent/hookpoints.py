"""The moments of the loop where hooks run, and what their answers do to it (DESIGN §13).

The loop calls one method per moment; each builds Claude Code's input for the event, runs the
session's `HookRunner`, files every run in the trace (`hook` events), says on stderr which hook
failed, and hands back only what the loop needs: a block reason, a permission decision, context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arnes.agent.events import HookEvent, Notice
from arnes.agent.run_context import HookSite
from arnes.extensions.hooks import HookOutcome
from arnes.host.paths import absolute, resolve_real
from arnes.messages import ToolCall
from arnes.permissions.gate import HookDecision
from arnes.tools.responses import tool_response

MAX_STOP_BLOCKS = 3  # a Stop hook sends the model back at most this often per task: no endless loop
PATH_KEYS = ("file_path", "notebook_path")  # the file tools' path arguments, absolute in Claude Code


def hook_input(call: ToolCall, workspace: Path, judged: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The call's input as a hook sees it: a file path made absolute, as Claude Code's always is.

    Hooks written for Claude Code test `tool_input.file_path` against `$CLAUDE_PROJECT_DIR/*` or
    `*/secrets/*`; the model's `src/app.py` would fail the first and slip past the second. The
    path is the very file the tool opens: `~` expanded and `..` folded on the text, as the tools
    do (host/paths.py `absolute`), then its links resolved; the model's own text is in the trace.
    `judged`: the real paths the gate judged and the tool will open (path as written -> real),
    resolved once before the hook runs, so a link swapped while it runs cannot part them.
    """
    given = dict(call.input)
    for key in PATH_KEYS:
        value = given.get(key)
        if isinstance(value, str) and value and "\0" not in value:
            written = absolute(workspace, value)
            given[key] = (judged or {}).get(str(written)) or str(resolve_real(written))
    return given


@dataclass(frozen=True)
class PreTool:
    """What the PreToolUse hooks said about one call."""

    blocked: str | None = None  # why the call does not run
    decision: HookDecision | None = None  # their permission decision, for the gate
    updated: dict[str, Any] | None = None  # `updatedInput`: the call runs with this, judged again
    context: tuple[str, ...] = ()  # `additionalContext`: for the model, with the call's result

    @property
    def notes(self) -> str:
        """The context as the model reads it after the result, as PostToolUse's is (`post_tool`)."""
        return "".join(f"\n\n[PreToolUse hook] {text}" for text in self.context)


@dataclass
class HookPoints:
    s: HookSite
    stop_blocks: int = 0  # this task's Stop hook blocks so far
    halt: str | None = None  # a hook said `continue: false`: the run ends with this reason

    def _run(self, event: str, extra: dict[str, Any], match: str | None = None) -> HookOutcome | None:
        s = self.s
        if s.hooks is None or not s.hooks.has(event):
            return None
        payload = {
            "session_id": s.id,
            "transcript_path": str(s.transcript_path.absolute()) if s.transcript_path else "",
            "cwd": str(s.workspace),
            "permission_mode": s.mode,
            **extra,
        }
        outcome = s.hooks.run(event, payload, match)
        for run in outcome.runs:
            s.bus.emit(HookEvent(run.event, run.command, run.exit_code, run.decision, run.ms, run.output, run.error))
        for line in outcome.failures:
            s.bus.emit(Notice("warning", f"warning: {line}"))
        for line in outcome.messages:  # Claude Code's "warning message shown to the user"
            s.bus.emit(Notice("warning", f"warning: {event} hook: {line}"))
        if outcome.stop and self.halt is None:
            self.halt = outcome.stop
            s.bus.emit(Notice("warning", f"a {event} hook ended the run: {outcome.stop}"))
        return outcome

    def pre_tool(self, call: ToolCall, judged: Mapping[str, str] | None = None) -> PreTool:
        given = hook_input(call, self.s.workspace, judged)
        got = self._run("PreToolUse", {"tool_name": call.name, "tool_input": given, "tool_use_id": call.id}, call.name)
        if got is None:
            return PreTool()
        context = tuple(got.context)  # Claude Code adds it for the model whatever the hooks decided
        if got.blocked or got.stop:  # `continue: false` stops the call too, as in Claude Code
            return PreTool(blocked=got.reason or got.stop, context=context)
        decision = HookDecision(got.permission, got.permission_reason) if got.permission else None
        return PreTool(decision=decision, updated=got.updated_input, context=context)

    def post_tool(self, call: ToolCall, output: str, is_error: bool, raw: str, ms: int) -> str:
        """The result as the model sees it: with the hooks' context, or their objection, after it.
        `raw` is the tool's own result, whose Claude Code shape the hooks get as `tool_response`."""
        if is_error or self.s.hooks is None or not self.s.hooks.has("PostToolUse", call.name):
            return output  # Claude Code runs PostToolUse on success only
        response = tool_response(call.name, call.input, raw, self.s.workspace, ms)
        given = hook_input(call, self.s.workspace)
        got = self._run("PostToolUse", {"tool_name": call.name, "tool_input": given, "tool_response": response,
                                        "tool_use_id": call.id}, call.name)  # fmt: skip
        if got is None:
            return output
        if got.updated_output is not None and call.name.startswith("mcp__"):
            # Claude Code's `updatedMCPToolOutput`: the server's words are replaced (a redaction),
            # arnes's own notes after them stay
            output = got.updated_output + (output[len(raw) :] if output.startswith(raw) else "")
        elif got.updated_output is not None:
            self.s.bus.emit(Notice("warning", f"warning: a PostToolUse hook's updatedMCPToolOutput applies to MCP "
                                              f"tools only; {call.name}'s output is kept"))  # fmt: skip
        notes = [f"[PostToolUse hook] {text}" for text in got.context]
        if got.blocked:
            notes.append(f"[PostToolUse hook objects] {got.reason}")
        return "\n\n".join([output, *notes]) if notes else output

    def prompt(self, task: str) -> tuple[str | None, list[str]]:
        """(why the prompt is not sent, or None; context to add to it)."""
        got = self._run("UserPromptSubmit", {"prompt": task}) if self.s.depth == 0 else None  # not a sub-agent's task
        if got is None:
            return None, []
        return (got.reason if got.blocked else None), got.context

    def stop(self) -> str | None:
        """What the model is told when a Stop hook sends it back to work, or None: it may stop."""
        event = "Stop" if self.s.depth == 0 else "SubagentStop"
        if self.stop_blocks >= MAX_STOP_BLOCKS or self.halt:
            return None
        got = self._run(event, {"stop_hook_active": self.stop_blocks > 0})
        if got is None or not got.blocked or self.halt:
            return None
        self.stop_blocks += 1
        self.s.bus.emit(Notice("info", f"a {event} hook sent the model back to work ({self.stop_blocks}/"
                                       f"{MAX_STOP_BLOCKS}): {got.reason.splitlines()[0]}"))  # fmt: skip
        return f"A {event} hook says the task is not finished yet:\n{got.reason}"

    def session_start(self, source: str) -> tuple[list[str], dict[str, str]]:
        """(context for the first message, the variables the hooks' CLAUDE_ENV_FILE set for commands)."""
        got = self._run("SessionStart", {"source": source}, source) if self.s.depth == 0 else None
        return (got.context, got.env) if got else ([], {})

    def session_end(self, stop_reason: str) -> None:
        """Claude Code's reasons are `clear`, `logout`, `prompt_input_exit` and `other`; a session of
        arnes ends as `other`, with how its last turn stopped beside it."""
        if self.s.depth == 0:
            self._run("SessionEnd", {"reason": "other", "stop_reason": stop_reason})

    def pre_compact(self, trigger: str) -> None:
        self._run("PreCompact", {"trigger": trigger, "custom_instructions": ""}, trigger)
