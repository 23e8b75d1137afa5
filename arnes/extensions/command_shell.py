"""Claude Code's `` !`command` `` in a custom command: run before the prompt is sent, its output in
its place, as Claude Code does (its /commit command reads `git status` and `git diff` this way).
A fenced block opened with ```` ```! ```` is Claude Code's form for several lines: its lines run
as one Bash call, and the output replaces the whole block, fences included.

Nothing runs past the permission gate or outside the sandbox: each is a Bash call arnes makes,
judged by the session's rules and mode (and asked at a terminal) after your PreToolUse hooks
(`updatedInput` aside: the line runs as written or not at all), and shown as arnes's call. The
command's own `allowed-tools` may allow it too, as in Claude Code, when the command is yours: a
repository's command grants nothing, trusted or not (trust does not cover its command files, and
a pull may change them). A command that does not run leaves why in its place, so the model knows
the context is missing. The arguments (`$ARGUMENTS`, `$1`, ...) and a plugin's `${CLAUDE_PLUGIN_ROOT}`
are put into a line before it is judged, quoted for where they stand (shell_args.py): what the user
typed is data to the command, never shell syntax.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arnes.agent.events import Notice, ToolCallEvent, ToolResultEvent
from arnes.agent.hookpoints import HookPoints
from arnes.extensions.commands import shell_values
from arnes.extensions.shell_args import Unquotable, substitute
from arnes.host.paths import resolve_real
from arnes.messages import ToolCall
from arnes.permissions.engine import RuleEngine, read_rule
from arnes.permissions.gate import with_hook
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import ToolRequest
from arnes.tools.base import ToolError

if TYPE_CHECKING:
    from arnes.extensions.commands import Command
    from arnes.session import Session

# `!`git status`` as Claude Code writes it: one line, no backtick inside.
BANG = re.compile(r"!`([^`\n]+)`")
# Claude Code's multi-line form: a fenced block opened with ```! on a line of its own, closed by ```.
FENCE = re.compile(r"^```![ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MOST = 20  # commands run for one prompt at most
OUTPUT_CAP = 30_000  # characters of one command's output in the prompt


@dataclass(frozen=True)
class ShellContext:
    prompt: str  # with a mark (`fill` puts the output in) where each command was
    said: tuple[tuple[str, str], ...]  # (level, line) for the user: what ran, what did not
    placed: bool = False  # a line took the arguments (`$ARGUMENTS`, `$1`, ...): they are not appended
    outputs: tuple[tuple[str, str], ...] = ()  # (mark, output or why it did not run)

    def fill(self, text: str) -> str:
        """`text` (the prompt, its arguments put in since) with each command's output at its mark:
        after the arguments, so a `$1` that a command printed stays as printed."""
        for mark, output in self.outputs:
            text = text.replace(mark, output, 1)
        return text


def found_commands(prompt: str) -> list[re.Match[str]]:
    """Every `` !`cmd` `` and ```` ```! ```` block, in the order they are in the prompt (an inline
    one written inside a block is part of the block's script)."""
    blocks = list(FENCE.finditer(prompt))
    inline = [m for m in BANG.finditer(prompt) if not any(b.start() <= m.start() < b.end() for b in blocks)]
    return sorted([*blocks, *inline], key=lambda m: m.start())


def run_commands(session: Session, command: Command, prompt: str, arguments: str = "") -> ShellContext:
    """The prompt with every `` !`cmd` `` and ```` ```! ```` block replaced, the command's arguments
    (and a plugin's folder) put in quoted (shell_args.py); at most MOST, the rest say they were not run."""
    found = found_commands(prompt)
    if not found:
        return ShellContext(prompt, ())
    grants = _grants(session, command)
    said: list[tuple[str, str]] = []
    outputs: dict[int, str] = {}
    values = shell_values(command, arguments)
    placed = False
    for i, match in enumerate(found):
        text = match.group(1).strip()
        if not text:
            outputs[i] = "[not run: the block is empty]"
            continue
        try:
            text, had = substitute(text, values)
        except Unquotable as exc:
            placed = True
            outputs[i], line = _not_run(session, command, text, f"[not run: {exc}]")
            said.append(line)
            continue
        placed = placed or had
        if i >= MOST:
            outputs[i] = f"[not run: a command runs {MOST} of these at most]"
            continue
        outputs[i], line = _one(session, command, text, grants)
        said.append(line)
    pieces, last = [], 0
    marks = [f"\0arnes-output-{uuid.uuid4().hex}\0" for _ in found]  # no typed argument holds a NUL
    for i, match in enumerate(found):
        pieces += [prompt[last : match.start()], marks[i]]
        last = match.end()
    pieces.append(prompt[last:])
    return ShellContext("".join(pieces), tuple(said), placed, tuple((marks[i], outputs[i]) for i in range(len(found))))


def _not_run(session: Session, command: Command, text: str, why: str) -> tuple[str, tuple[str, str]]:
    """A line refused before it is a call: shown as arnes's Bash call that did not run."""
    call_id = f"arnes_command_{uuid.uuid4().hex[:8]}"
    session.bus.emit(ToolCallEvent(call_id, "Bash", {"command": text}, by="arnes"))
    return _done(session, call_id, why, True, time.perf_counter(), text, command)


def _grants(session: Session, command: Command) -> RuleEngine | None:
    """The command's `allowed-tools` as allow rules, when they may grant: your own command's only.
    A plugin you installed may also read its own folder there (its scripts, by ${CLAUDE_PLUGIN_ROOT})."""
    if not command.allowed or command.origin != "user":
        return None
    rules = [SourcedRule("allow", rule, str(command.path)) for rule in command.allowed]
    root = command.plugin_root
    own = read_rule(resolve_real(root), True, session.engine.home) if root is not None else None
    if own is not None:
        rules.append(SourcedRule("allow", own, str(command.path)))
    return RuleEngine(session.workspace, "default", rules)


def _one(session: Session, command: Command, text: str, grants: RuleEngine | None) -> tuple[str, tuple[str, str]]:
    call_id = f"arnes_command_{uuid.uuid4().hex[:8]}"
    raw = {"command": text}
    session.bus.emit(ToolCallEvent(call_id, "Bash", raw, by="arnes"))
    started = time.perf_counter()
    try:
        tool, args, _ = session.tools.parse_call("Bash", raw)
    except ToolError as exc:
        return _done(session, call_id, f"[not run: {exc}]", True, started, text, command)
    hooked = HookPoints(session).pre_tool(ToolCall(call_id, "Bash", raw))  # your guard hooks see it too
    if hooked.blocked is not None:
        return _done(session, call_id, f"[not run: a PreToolUse hook blocked it: {hooked.blocked}]", True, started,
                     text, command)  # fmt: skip
    request = ToolRequest("Bash", raw, (), tool.read_only, tool.command(args), call_id=call_id)
    if grants is not None and session.policy is not None and grants.decide(request).kind == "allow":
        decision = with_hook(session.policy.decide(request), hooked.decision)  # a deny still wins
        allowed, why = decision.kind != "deny", decision.reason
    else:
        outcome = session.gate.check(request, text, hook=hooked.decision)
        allowed, why = outcome.allowed, outcome.decision.reason
    if not allowed:
        return _done(session, call_id, f"[not run: {why}]", True, started, text, command)
    try:
        output, failed = str(tool.run(args, session.ctx)), False
    except ToolError as exc:
        output, failed = str(exc), True
    if len(output) > OUTPUT_CAP:
        output = output[:OUTPUT_CAP] + f"\n[cut at {OUTPUT_CAP} characters]"
    return _done(session, call_id, output, failed, started, text, command)


def _done(
    session: Session, call_id: str, output: str, failed: bool, started: float, text: str, command: Command
) -> tuple[str, tuple[str, str]]:
    ms = int((time.perf_counter() - started) * 1000)
    session.bus.emit(ToolResultEvent(call_id, "Bash", failed, ms, output))
    lines = text.splitlines()
    shown = lines[0] + (f" ... ({len(lines)} lines)" if len(lines) > 1 else "")  # a block's first line
    if output.startswith("[not run:"):
        line = ("warning", f"/{command.name}: `{shown}` {output[1:-1]}")
    else:
        line = ("info", f"/{command.name} ran `{shown}` for its prompt")
    session.bus.emit(Notice(*line))
    return output, line
