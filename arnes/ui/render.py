"""The terminal subscriber: one line per event, text streamed live (rich; NO_COLOR honoured).

Every string shown here came from the model, a tool, a file or a command, so it passes
`visible()` (arnes/ui/safe.py) before it reaches the terminal.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from arnes.agent.events import (
    CheckerEvent,
    CompactionEvent,
    Event,
    MessageEvent,
    ModelRequest,
    Nested,
    Notice,
    PermissionEvent,
    Retry,
    RunClosed,
    SessionEnd,
    SessionStart,
    Steered,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    VerifyEvent,
)
from arnes.permissions.approvers import show_diff
from arnes.safe import one_line, terminal_console, visible
from arnes.ui.closing import show_closing
from arnes.ui.preview import label, preview
from arnes.ui.spinner import Spinner

CALL_WIDTH = 110  # a call's arguments past this are cut (a Write's content); a command never is
DENIED = ("Permission denied", "The user denied")
REASON_LINES = 12  # of a checker's findings on screen; the trace keeps them all


def human_tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def human_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def steered_line(event: Steered) -> str:
    """`steered (self-check, act): ran the tests: python -m pytest -q` — one line per intervention."""
    ran = one_line(event.ran)
    ran = ran if len(ran) <= CALL_WIDTH else ran[: CALL_WIDTH - 1] + "…"
    return f"~ steered ({one_line(event.piece)}, {event.action}): {ran}"


def call_line(name: str, args: dict[str, Any], prefix: str = "> ") -> Text:
    """`> Bash npm test` (a command whole, every line) or `> Read {"file_path": ...}` (cut)."""
    command = args.get("command")
    if name == "Bash" and isinstance(command, str):
        rest = {k: v for k, v in args.items() if k != "command"}
        lines = visible(command, tabs=False).split("\n")
        text = Text.assemble((f"{prefix}{one_line(name)} ", "bold"), lines[0])
        for more in lines[1:]:
            text.append(f"\n{' ' * len(prefix)}| ", style="dim")
            text.append(more)
        if rest:
            text.append(" " + one_line(json.dumps(rest, ensure_ascii=False)), style="dim")
        return text
    line = one_line(f"{prefix}{name} {json.dumps(args, ensure_ascii=False)}")
    return Text(line if len(line) <= CALL_WIDTH else line[: CALL_WIDTH - 1] + "…", style="bold")


@dataclass
class TerminalRenderer:
    console: Console = field(default_factory=terminal_console)
    errors: TextIO | None = None  # where a closing's advice goes; None: stderr as it is then
    _streaming: bool = False
    _calls: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _last_line: str | None = None  # the call whose line was printed last: its result needs no label
    _batch: int = 0  # how many calls the model's last message made (more than one: label them all)
    _ctx_shown: int = 0  # the context only grows between compactions; the meter must not go down
    _started: float = field(default_factory=time.monotonic)
    _spinner: Spinner | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)  # results arrive from tool threads

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._stop_spinner()
            if isinstance(event, Nested):
                self._nested(event)
            else:
                self._show(event)

    def _show(self, event: Event) -> None:
        c = self.console
        if isinstance(event, TextDelta):
            c.print(visible(event.text), end="", style="cyan", markup=False)
            self._streaming = True
            return
        if isinstance(event, MessageEvent):  # not shown; counts the calls of the coming batch
            if event.role == "assistant":
                self._batch = sum(1 for block in event.content if block.get("type") == "tool_call")
            return
        if self._streaming:
            c.print()
            self._streaming = False
        self._last_line = event.id if isinstance(event, ToolCallEvent) else self._last_line
        if isinstance(event, SessionStart):
            self._started = time.monotonic()
            c.print(f"workspace: {visible(event.workspace)}", markup=False)
            c.print(f"model: {visible(event.model)} ({event.provider})", markup=False)
            if event.context_window:
                source = f" ({event.context_source})" if event.context_source else ""
                c.print(f"context window: {event.context_window} tokens{source}", markup=False)
            c.print(f"mode: {event.mode}", markup=False)
            if event.output_style:
                c.print(f"output style: {visible(event.output_style)}", markup=False)
            off = event.sandbox == "off"
            c.print(f"sandbox: {event.sandbox_note or event.sandbox}", style="yellow" if off else None, markup=False)
        elif isinstance(event, ModelRequest):
            self._meter(event)
        elif isinstance(event, ToolCallEvent):
            self._calls[event.id] = (event.name, event.input)
            c.print(call_line(event.name, event.input, "> (arnes) " if event.by == "arnes" else "> "))
        elif isinstance(event, Steered):
            c.print(Text(steered_line(event), style="magenta"))
        elif isinstance(event, PermissionEvent):
            if event.decision == "deny":
                c.print(Text(f"x {one_line(event.name)} denied: {one_line(event.reason)}", style="red"))
                self._last_line = None
            elif event.source == "user":
                c.print(Text(f"  {one_line(event.reason)}", style="dim"))
        elif isinstance(event, ToolResultEvent):
            self._result(event)
        elif isinstance(event, Retry):
            c.print(Text(f"  retry {event.attempt} in {event.delay:.1f}s: {one_line(event.error)}", style="yellow"))
            self._spin("retrying")
        elif isinstance(event, Notice):
            c.print(Text(visible(event.message), style={"warning": "yellow", "error": "red"}.get(event.level, "dim")))
        elif isinstance(event, VerifyEvent):
            self._verify(event)
        elif isinstance(event, CheckerEvent):
            self._checker(event)
        elif isinstance(event, CompactionEvent):
            self._ctx_shown = 0
            what = (
                f"cleared {event.removed} old tool result{'s' if event.removed != 1 else ''} to make room"
                if event.method == "clear"
                else f"context compacted ({event.method})"
            )
            c.print(
                f"{what}: {human_tokens(event.tokens_before)} -> {human_tokens(event.tokens_after)} tokens",
                style="magenta",
                markup=False,
            )
        elif isinstance(event, SessionEnd):
            self._end(event)
        elif isinstance(event, RunClosed):
            show_closing(self.console, self.errors or sys.stderr, event)

    def _meter(self, event: ModelRequest) -> None:
        # An estimate that overshot the provider's later count must not read as the context shrinking.
        self._ctx_shown = tokens = max(self._ctx_shown, event.ctx_tokens)
        pct = round(100 * tokens / event.ctx_window) if event.ctx_window else 0
        style = "red" if pct >= 80 else "dim"
        if self.console.is_terminal:  # started first, shown last: once "ctx" is on screen, little is left to do
            self._spinner = Spinner(self.console.file)
            self._spinner.start()
        self.console.print(f"ctx {human_tokens(tokens)}/{human_tokens(event.ctx_window)} ({pct}%)", style=style)
        if self._spinner is not None:
            self._spinner.show()

    def _spin(self, label: str) -> None:
        """A spinner on a terminal until the next event (which stops it first)."""
        if self.console.is_terminal:
            self._spinner = Spinner(self.console.file, label)
            self._spinner.start()
            self._spinner.show()

    def _result(self, event: ToolResultEvent) -> None:
        c = self.console
        name, args = self._calls.pop(event.id, (event.name, {}))
        tag = f"[{one_line(label(name, args))}] " if self._batch > 1 or event.id != self._last_line else ""
        self._last_line = None
        failed_command = event.is_error and event.output.startswith("exit code: ")
        if event.is_error and not failed_command:
            if not event.output.startswith(DENIED):
                first = event.output.splitlines()[0] if event.output else "error"
                c.print(Text(f"  {tag}error: {one_line(first)}", style="yellow"))
            return
        shown = preview(name, args, event.output)  # a red command's output is what matters most
        mark, style = ("failed", "yellow") if failed_command else ("ok", "green")
        text = Text(f"  {tag}{mark} · {one_line(shown.summary)} · {event.ms} ms", style=style)
        room = max(20, c.width - 6)  # a preview line stays one row; the trace has the whole output
        for line in shown.lines:
            coloured = shown.diff and line[:1] in "-+"
            clean = one_line(line)
            clean = clean if len(clean) <= room else clean[: room - 1] + "…"
            text.append("\n    │ ", style="dim")
            text.append(clean, style=("red" if line[0] == "-" else "green") if coloured else "dim")
        c.print(text)

    def _verify(self, event: VerifyEvent) -> None:
        c = self.console
        state = "green" if event.passed else f"red (exit {event.exit_code})"
        c.print(
            f"verify round {event.round}: {visible(event.command)} -> {state}",
            style="green" if event.passed else "red",
            markup=False,
        )
        if not event.passed and event.output:
            c.print(Text("  " + "\n  ".join(visible(event.output).splitlines()[-8:]), style="dim"))

    def _checker(self, event: CheckerEvent) -> None:
        """The checker's verdict and why: its findings are the point, not the word PASS."""
        passed = event.verdict == "PASS"
        self.console.print(
            f"checker round {event.round}: {event.verdict}", style="green" if passed else "red", markup=False
        )
        reasons = event.reasons.strip().splitlines()
        shown = [one_line(r) for r in reasons[-REASON_LINES:]]
        if len(reasons) > REASON_LINES:
            shown.insert(0, f"… {len(reasons) - REASON_LINES} earlier lines in the trace")
        if shown:
            self.console.print(Text("\n".join(f"  {r}" for r in shown), style="dim"))

    def _end(self, event: SessionEnd) -> None:
        c = self.console
        denied = f", {event.denials} denied" if event.denials else ""
        if event.verified is not None:
            denied += ", verified green" if event.verified else ", verification red"
        cost = f", ${event.cost:.4f}" if event.cost else ""
        c.print(
            f"[{event.stop_reason}] {event.turns} turns, {event.tool_calls} calls"
            f"{f' (+{event.arnes_calls} by arnes)' if event.arnes_calls else ''}{denied}, "
            f"{event.input_tokens} input tokens, {event.output_tokens} output tokens{cost}, "
            f"{human_seconds(time.monotonic() - self._started)}",
            style="bold",
            markup=False,
        )
        if event.error:
            c.print(Text(visible(event.error), style="red"))

    def _nested(self, event: Nested) -> None:
        """A sub-agent's steps, indented under the Delegate call."""
        inner = event.inner
        while isinstance(inner, Nested):
            inner = inner.inner
        c = self.console
        self._last_line = None
        if isinstance(inner, SessionStart):
            c.print("  ┌ sub-agent started", style="dim", markup=False)
        elif isinstance(inner, ModelRequest):
            self._spin("sub-agent thinking")
        elif isinstance(inner, ToolCallEvent):
            c.print(call_line(inner.name, inner.input, prefix="  │ > "))
        elif isinstance(inner, PermissionEvent) and inner.decision == "deny":
            c.print(Text(f"  │ x {one_line(inner.name)} denied: {one_line(inner.reason)}", style="red"))
        elif isinstance(inner, ToolResultEvent) and inner.is_error and not inner.output.startswith(DENIED):
            first = inner.output.splitlines()[0] if inner.output else "error"
            c.print(Text(f"  │   error: {one_line(first)}", style="yellow"))
        elif isinstance(inner, SessionEnd):
            c.print(
                f"  └ sub-agent {inner.stop_reason}: {inner.turns} turns, {inner.tool_calls} calls",
                style="dim",
                markup=False,
            )

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    def stop(self) -> None:
        """Erase the spinner (a turn ended without another event, e.g. Ctrl-C at the prompt)."""
        with self._lock:
            self._stop_spinner()

    def show_diff(self, diff: str) -> None:
        if diff:
            show_diff(self.console, diff)
