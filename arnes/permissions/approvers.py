"""Who answers an `ask`: a person at the terminal, nobody (deny), or a script in tests."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from rich.console import Console
from rich.text import Text

from arnes.safe import one_line, terminal_console, visible

AnswerKind = Literal["allow_once", "allow_always", "deny"]
NO_TTY = "(no terminal to ask)"


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str
    subject: str  # the path or command, as the user should see it
    reason: str
    preview: str | None = None  # the diff of a write
    suggested_rule: str | None = None  # offered as "always"
    parts: tuple[str, ...] = ()  # what a compound command runs, part by part
    input: dict[str, Any] = field(default_factory=dict)  # the call's arguments, as the model sent them
    call_id: str = ""  # the model's id for the call


@dataclass(frozen=True)
class ApprovalAnswer:
    kind: AnswerKind
    feedback: str | None = None
    rule: str | None = None
    more_rules: tuple[str, ...] = ()  # "always" with several session rules (the SDK's updatedPermissions)


class Approver(Protocol):
    interactive: bool

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer: ...


def parse_answer(raw: str, suggested_rule: str | None) -> ApprovalAnswer:
    """y once, a always (when offered), n no; any other text is a no that goes back to the model."""
    answer = raw.strip()
    low = answer.lower()
    if low in ("y", "yes", "s", "si", "sí"):
        return ApprovalAnswer("allow_once")
    if suggested_rule and low in ("a", "always"):
        return ApprovalAnswer("allow_always", rule=suggested_rule)
    if low in ("", "n", "no"):
        return ApprovalAnswer("deny")
    return ApprovalAnswer("deny", feedback=answer)


class NoTerminalApprover:
    """Nobody to ask means no: an unattended run never turns into bypass."""

    interactive = False

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer("deny", feedback=NO_TTY)


@dataclass
class ScriptedApprover:
    """Answers from a list, for tests; records what it was asked."""

    answers: list[str]
    asked: list[ApprovalRequest] = field(default_factory=list)
    interactive = True

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        raw = self.answers.pop(0) if self.answers else "n"
        return parse_answer(raw, request.suggested_rule)


@dataclass
class TerminalApprover:
    """Shows on stderr the whole subject, every part of a compound command, the reason, the diff
    and the rule "always" would add; reads the answer from the terminal.

    Everything shown came from the model or the workspace, so it passes `visible()`: an escape
    sequence in a command cannot redraw this prompt into another command.
    """

    console: Console = field(default_factory=lambda: terminal_console(stderr=True, soft_wrap=False))
    read_line: Callable[[], str] | None = None
    interactive = True

    def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        c = self.console
        c.print()
        # A call that names no path or command (ExitPlanMode, an MCP tool) has its name as subject: once.
        subject = "" if request.subject == request.tool else request.subject
        lines = visible(subject, tabs=False).split("\n")
        c.print(Text.assemble(("? ", "bold yellow"), (f"{one_line(request.tool)} ", "bold"), lines[0]))
        for more in lines[1:]:  # a multi-line command: every line, marked as the command's
            c.print(Text.assemble(("  | ", "dim"), more))
        for part in request.parts:
            opaque = part.removeprefix("cannot see inside: ")
            if opaque == part or opaque not in request.reason:  # else the reason line says it already
                c.print(Text.assemble(("  - ", "dim"), one_line(part)))
        c.print(Text(f"  {one_line(request.reason)}", style="dim"))
        if request.preview:
            show_diff(c, request.preview)
        if request.suggested_rule:
            c.print(Text.assemble("  [a] always adds the session rule ", (one_line(request.suggested_rule), "bold")))
        choices = "[y] yes / [a] always / [n] no" if request.suggested_rule else "[y] yes / [n] no"
        c.print(f"  {choices} (or type what to do instead): ", end="", markup=False)
        try:
            raw = self.read_line() if self.read_line else _read_stdin()
        except EOFError:  # Ctrl-D at the prompt: a plain no from the person who is there
            c.print()
            return ApprovalAnswer("deny")
        return parse_answer(raw, request.suggested_rule)


def show_diff(c: Console, diff: str) -> None:
    """A unified diff, coloured by its line marks; its text is the file's, so made visible first."""
    from rich.syntax import Syntax

    text = visible(diff.rstrip("\n"))
    c.print(Syntax(text, "diff", theme="ansi_dark", background_color="default", word_wrap=True))


def _read_stdin(stream: TextIO | None = None) -> str:
    line = (stream or sys.stdin).readline()
    if not line:
        raise EOFError
    return line


def choose_approver(stdin: TextIO, stderr: TextIO) -> Approver:
    """The terminal approver only when both stdin and stderr are terminals; otherwise nobody."""
    if stdin.isatty() and stderr.isatty():
        return TerminalApprover()
    return NoTerminalApprover()


def claude_answer(body: Mapping[str, Any], given: Mapping[str, Any], who: str) -> ApprovalAnswer:
    """Claude Code's permission answer (`{"behavior": "allow", "updatedInput"}` or `{"behavior":
    "deny", "message"}`, from an SDK's can_use_tool or a permission prompt tool) as arnes's: an
    allow that changes the call's input is a no, since arnes runs only calls its gate judged."""
    if body.get("behavior") == "allow":
        changed = body.get("updatedInput")
        if changed is not None and changed != given:
            return ApprovalAnswer("deny", feedback=f"{who} changed the call's input; arnes runs only calls it judged")
        return ApprovalAnswer("allow_once")
    return ApprovalAnswer("deny", feedback=str(body.get("message") or "") or None)
