"""The terminal subscriber: one line per event, text streamed live (rich; NO_COLOR honoured)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from arnes.agent.events import (
    CompactionEvent,
    Event,
    ModelRequest,
    Nested,
    Notice,
    PermissionEvent,
    Retry,
    SessionEnd,
    SessionStart,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    VerifyEvent,
)

CALL_WIDTH = 110


def human_tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


@dataclass
class TerminalRenderer:
    console: Console = field(default_factory=lambda: Console(highlight=False, soft_wrap=True))
    _streaming: bool = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, Nested):
            self._nested(event)
            return
        c = self.console
        if isinstance(event, TextDelta):
            c.print(event.text, end="", style="cyan", markup=False)
            self._streaming = True
            return
        if self._streaming:
            c.print()
            self._streaming = False
        if isinstance(event, SessionStart):
            c.print(f"workspace: {event.workspace}", markup=False)
            c.print(f"model: {event.model} ({event.provider})", markup=False)
            if event.context_window:
                source = f" ({event.context_source})" if event.context_source else ""
                c.print(f"context window: {event.context_window} tokens{source}", markup=False)
            c.print(f"mode: {event.mode}", markup=False)
            off = event.sandbox == "off"
            c.print(f"sandbox: {event.sandbox_note or event.sandbox}", style="yellow" if off else None, markup=False)
        elif isinstance(event, ModelRequest):
            pct = round(100 * event.ctx_tokens / event.ctx_window) if event.ctx_window else 0
            style = "red" if pct >= 80 else "dim"
            c.print(f"ctx {human_tokens(event.ctx_tokens)}/{human_tokens(event.ctx_window)} ({pct}%)", style=style)
        elif isinstance(event, ToolCallEvent):
            args = json.dumps(event.input, ensure_ascii=False)
            line = f"> {event.name} {args}"
            c.print(Text(line if len(line) <= CALL_WIDTH else line[: CALL_WIDTH - 1] + "…", style="bold"))
        elif isinstance(event, PermissionEvent):
            if event.decision == "deny":
                c.print(Text(f"x {event.name} denied: {event.reason}", style="red"))
            elif event.source == "user":
                c.print(Text(f"  {event.reason}", style="dim"))
        elif isinstance(event, ToolResultEvent):
            if event.is_error and not event.output.startswith(("Permission denied", "The user denied")):
                first = event.output.splitlines()[0] if event.output else "error"
                c.print(Text(f"  error: {first}", style="yellow"))
            elif not event.is_error:
                c.print(Text(f"  ok ({event.ms} ms)", style="green"))
        elif isinstance(event, Retry):
            c.print(Text(f"  retry {event.attempt} in {event.delay:.1f}s: {event.error}", style="yellow"))
        elif isinstance(event, Notice):
            c.print(Text(event.message, style="yellow" if event.level == "warning" else "dim"))
        elif isinstance(event, VerifyEvent):
            state = "green" if event.passed else f"red (exit {event.exit_code})"
            c.print(
                f"verify round {event.round}: {event.command} -> {state}",
                style="green" if event.passed else "red",
                markup=False,
            )
            if not event.passed and event.output:
                c.print(Text("  " + "\n  ".join(event.output.splitlines()[-8:]), style="dim"))
        elif isinstance(event, CompactionEvent):
            c.print(
                f"context compacted ({event.method}): {human_tokens(event.tokens_before)} -> "
                f"{human_tokens(event.tokens_after)} tokens",
                style="magenta",
                markup=False,
            )
        elif isinstance(event, SessionEnd):
            denied = f", {event.denials} denied" if event.denials else ""
            if event.verified is not None:
                denied += ", verified green" if event.verified else ", verification red"
            c.print(
                f"[{event.stop_reason}] {event.turns} turns, {event.tool_calls} calls{denied}, "
                f"{event.input_tokens} input tokens, {event.output_tokens} output tokens",
                style="bold",
                markup=False,
            )
            if event.error:
                c.print(Text(event.error, style="red"))

    def _nested(self, event: Nested) -> None:
        """A sub-agent's steps, indented under the Delegate call."""
        inner = event.inner
        while isinstance(inner, Nested):
            inner = inner.inner
        c = self.console
        if isinstance(inner, SessionStart):
            c.print("  ┌ sub-agent started", style="dim", markup=False)
        elif isinstance(inner, ToolCallEvent):
            line = f"  │ > {inner.name} {json.dumps(inner.input, ensure_ascii=False)}"
            c.print(Text(line if len(line) <= CALL_WIDTH else line[: CALL_WIDTH - 1] + "…"))
        elif isinstance(inner, PermissionEvent) and inner.decision == "deny":
            c.print(Text(f"  │ x {inner.name} denied: {inner.reason}", style="red"))
        elif isinstance(inner, ToolResultEvent) and inner.is_error and not inner.output.startswith("Permission"):
            first = inner.output.splitlines()[0] if inner.output else "error"
            c.print(Text(f"  │   error: {first}", style="yellow"))
        elif isinstance(inner, SessionEnd):
            c.print(
                f"  └ sub-agent {inner.stop_reason}: {inner.turns} turns, {inner.tool_calls} calls",
                style="dim",
                markup=False,
            )

    def show_diff(self, diff: str) -> None:
        if diff:
            self.console.print(Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default"))
