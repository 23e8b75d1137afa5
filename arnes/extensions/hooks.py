"""Hooks with Claude Code's contract (DESIGN §13, §16): commands run at moments of the loop.

The loop asks a `HookRunner` for one event at a time and gets one `HookOutcome`: whether to block
(exit 2, or `decision: "block"`), a permission decision and a rewritten input (`updatedInput`) for
PreToolUse, context for the model, and the record of every command run (for the trace). What the
decision may do is not decided here: the permission gate applies it (to the rewritten input, when
there is one), and a hook's allow never overrides a deny or ask rule.

A hook that fails (an exit other than 0 and 2, a crash, a time-out, JSON that does not parse) is a
non-blocking error, as in Claude Code: named in one line, and the call goes on. `hooks_fail:
"closed"` makes such a PreToolUse failure block the call instead, for those who want a guard that
fails closed.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from arnes.extensions.hook_env import ENV_RUNNER, read_env_file
from arnes.extensions.hook_if import HookCondition
from arnes.extensions.hooks_config import FailMode, HookEntry, matches
from arnes.extensions.plugins import ROOT_ENV
from arnes.host.paths import user_program_env
from arnes.nesting import json_loads
from arnes.sandbox.base import NoSandbox, Sandbox, SandboxSpec
from arnes.tools.processes import run_foreground

Permission = Literal["allow", "ask", "deny"]
PERMISSIONS: dict[str, Permission] = {"allow": "allow", "ask": "ask", "deny": "deny"}
OUTPUT_CAP = 20_000  # characters of a hook's stdout/stderr that are read
TRACE_CAP = 2_000  # characters of it that go into the trace
# Events whose plain stdout (not JSON) is context for the model, as in Claude Code.
STDOUT_IS_CONTEXT = ("UserPromptSubmit", "SessionStart")


@dataclass(frozen=True)
class HookRun:
    """One command's run: what the trace's `hook` event records."""

    event: str
    command: str
    exit_code: int | None
    decision: str  # continue | block | allow | ask | deny | update | allow+update | ask+update | failed
    ms: int
    output: str
    error: str | None = None  # why the hook failed, if it did


@dataclass
class HookOutcome:
    """What every matching hook of one event said, combined: a block or deny wins, contexts add up."""

    blocked: bool = False
    reason: str = ""
    permission: Permission | None = None
    permission_reason: str = ""
    context: list[str] = field(default_factory=list)
    updated_input: dict[str, Any] | None = None  # PreToolUse `updatedInput`: the input the call runs with
    updated_output: str | None = None  # PostToolUse `updatedMCPToolOutput`: what the model reads instead
    env: dict[str, str] = field(default_factory=dict)  # SessionStart's CLAUDE_ENV_FILE: for every later Bash command
    stop: str | None = None  # `continue: false`: the run ends, with this reason
    failures: list[str] = field(default_factory=list)  # one line each, for the user
    messages: list[str] = field(default_factory=list)  # `systemMessage`: shown to the user, not the model
    runs: list[HookRun] = field(default_factory=list)

    def block(self, reason: str) -> None:
        self.blocked = True
        self.reason = f"{self.reason}\n{reason}".strip() if self.reason else reason

    def decide(self, kind: Permission, reason: str) -> None:
        order = {"allow": 0, "ask": 1, "deny": 2}
        if self.permission is None or order[kind] > order[self.permission]:
            self.permission, self.permission_reason = kind, reason


class HookRunner(Protocol):
    """The seam the loop calls: one event, its JSON input, and what to match the hooks' matchers on."""

    def run(self, event: str, payload: dict[str, Any], match: str | None = None) -> HookOutcome: ...

    def has(self, event: str, match: str | None = None) -> bool: ...


@dataclass
class Hooks:
    """The configured hooks that may run here, each in the session's sandbox unless the user lifted it."""

    entries: list[HookEntry]
    workspace: Path
    sandbox: Sandbox
    spec: SandboxSpec | None = None
    fail: FailMode = "open"
    # Read-only tools run in parallel, and their PostToolUse hooks with them; the sandbox wraps
    # (and settles) one command at a time, as for Bash.
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _conditions: dict[str, HookCondition] = field(default_factory=dict)  # each `if`, compiled once

    def has(self, event: str, match: str | None = None) -> bool:
        return any(e.runs and e.event == event and matches(e.matcher, match) for e in self.entries)

    def run(self, event: str, payload: dict[str, Any], match: str | None = None) -> HookOutcome:
        outcome = HookOutcome()
        seen: set[tuple[str, str | None, bool]] = set()
        for entry in self.entries:
            if not entry.runs or entry.event != event or not matches(entry.matcher, match):
                continue
            if outcome.updated_input is not None:  # a later hook sees the input the call would run with
                payload = {**payload, "tool_input": outcome.updated_input}
            if entry.hook.if_ is not None and not self._holds(entry.hook.if_, payload):
                continue
            # The same command from two files runs once, as in Claude Code; but only where it would
            # run the same way: a repository's copy of your plugin's guard command, run in its
            # sandbox without CLAUDE_PLUGIN_ROOT, must not take the place of yours.
            key = (entry.hook.command, entry.plugin_root, entry.user)
            if key in seen:
                continue
            seen.add(key)
            with self._lock:
                self._one(entry, {**payload, "hook_event_name": event}, outcome)
        return outcome

    def _holds(self, rule: str, payload: dict[str, Any]) -> bool:
        """Whether the call in `payload` matches a hook's `if` (hook_if.py); checked before the
        hook's process starts, as Claude Code does."""
        tool, given = payload.get("tool_name"), payload.get("tool_input")
        if not isinstance(tool, str) or not isinstance(given, dict):
            return False  # no tool call: an `if` never holds (config.py keeps such hooks out already)
        with self._lock:
            condition = self._conditions.get(rule)
            if condition is None:
                condition = self._conditions[rule] = HookCondition(rule, self.workspace)
        return condition.holds(tool, given)

    def _one(self, entry: HookEntry, payload: dict[str, Any], outcome: HookOutcome) -> None:
        event, command = entry.event, entry.hook.command
        sandbox = self.sandbox if entry.sandboxed else NoSandbox(self.spec)  # "sandbox": false, the user's own
        started = time.perf_counter()
        data = json.dumps(payload, ensure_ascii=False).encode()
        argv = ["bash", "-c", command]
        marker = f"arnes-env-file-{secrets.token_hex(16)}" if event == "SessionStart" else None
        if marker is not None:  # Claude Code's CLAUDE_ENV_FILE (hook_env.py)
            argv = ["bash", "-c", ENV_RUNNER, "bash", command, marker]
        known: dict[str, str] = {}
        try:
            with sandbox.wrap(argv, self.workspace) as cmd:
                known = {**cmd.env, **outcome.env}  # what commands get, for `$PATH` in the file
                env = {**cmd.env, "CLAUDE_PROJECT_DIR": str(self.workspace), "ARNES_PROJECT_DIR": str(self.workspace)}
                if entry.user:  # the user's program, in the workspace: it must not import the repository's files
                    env = user_program_env(env, self.workspace)
                if entry.plugin_root is not None:
                    env[ROOT_ENV] = entry.plugin_root
                done = run_foreground(cmd.argv, self.workspace, entry.hook.timeout, OUTPUT_CAP, env, cmd.pass_fds, data)
        except OSError as exc:
            self._failed(entry, outcome, f"could not start: {exc.strerror or exc}", None, "", started)
            return
        finally:
            sandbox.settle()
        out, err = done.stdout, done.stderr
        if marker is not None:
            out = self._env_file(entry, out, marker, known, outcome, done.timed_out)
        shown = (out + ("\n[stderr]\n" + err if err else "")).strip()
        if done.timed_out:
            self._failed(entry, outcome, f"timed out after {entry.hook.timeout:g} s", None, shown, started)
            return
        code = done.exit_code
        offline = entry.sandboxed and not (self.spec is not None and self.spec.network)
        if code != 0 and offline and _could_not_run(event, err, data):  # `uv run` fetching, with no network
            why = (f"exited with {code}: it needed the network, which the sandbox does not give hooks "
                   f"({err.strip().splitlines()[-1][:200]}); install what it needs first (`uv sync`), or give "
                   'your own hook "sandbox": false in your user settings')  # fmt: skip
            self._failed(entry, outcome, why, code, shown, started)
            return
        if code == 2:
            outcome.block(err.strip() or f"blocked by the {event} hook `{command}` (exit 2, no reason given)")
            outcome.runs.append(HookRun(event, command, code, "block", ms_since(started), shown[:TRACE_CAP]))
            return
        if code != 0:
            why = f"exited with {code}" + (f": {err.strip().splitlines()[-1]}" if err.strip() else "")
            self._failed(entry, outcome, why, code, shown, started)
            return
        try:
            decision = apply_output(event, out, outcome)
        except ValueError as exc:
            self._failed(entry, outcome, str(exc), code, shown, started)
            return
        outcome.runs.append(HookRun(event, command, code, decision, ms_since(started), shown[:TRACE_CAP]))

    def _env_file(
        self, entry: HookEntry, out: str, marker: str, known: dict[str, str], outcome: HookOutcome, cut: bool
    ) -> str:
        """The hook's own stdout; the variables its CLAUDE_ENV_FILE sets go to `outcome.env`, and
        each line not used is said (the file's text is in neither the trace nor the context)."""
        head, found, text = out.rpartition(f"\n{marker}\n")
        if not found:
            if not cut:
                outcome.failures.append(f"SessionStart hook `{entry.hook.command}`: its CLAUDE_ENV_FILE was not read "
                                        f"(it printed more than {OUTPUT_CAP:,} characters)")  # fmt: skip
            return out.split(f"\n{marker}", 1)[0]
        got, said = read_env_file(text, known, self.workspace)
        outcome.env.update(got)
        outcome.failures += [f"SessionStart hook `{entry.hook.command}`: CLAUDE_ENV_FILE: {line}" for line in said]
        return head

    def _failed(
        self, entry: HookEntry, outcome: HookOutcome, why: str, code: int | None, shown: str, started: float
    ) -> None:
        record_failure(outcome, entry.event, entry.hook.command, self.fail, why, code, shown, started)


def record_failure(
    outcome: HookOutcome, event: str, label: str, fail: FailMode, why: str, code: int | None, shown: str, started: float
) -> None:
    """A hook that failed: one line for the user; a PreToolUse call blocked only when `fail` is closed."""
    line = f"{event} hook `{label}` failed: {why}"
    if event == "PreToolUse" and fail == "closed":
        outcome.block(f'{line}; the call is blocked (hooks_fail is "closed")')
    elif event == "PreToolUse":
        line += '; the call goes on (hooks_fail is "open")'
    outcome.failures.append(line)
    outcome.runs.append(HookRun(event, label, code, "failed", ms_since(started), shown[:TRACE_CAP], why))


def apply_output(event: str, out: str, outcome: HookOutcome) -> str:
    """Read an exit-0 hook's stdout (JSON or plain text) into the outcome; the decision it made.
    ValueError, saying why, for output that starts like JSON and is not an object of it."""
    text = out.strip()
    if not text.startswith("{"):
        if text and event in STDOUT_IS_CONTEXT:
            outcome.context.append(text)
        return "continue"
    try:
        data = json_loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"its output starts like JSON but does not parse ({exc.msg} at {exc.pos})") from exc
    except ValueError as exc:
        raise ValueError(f"its JSON output is not read: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("its JSON output is not an object")
    decided = "continue"
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    if updated is not None and not isinstance(updated, dict):
        raise ValueError(f"its updatedInput is not an object of the tool's arguments (got {type(updated).__name__})")
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        outcome.context.append(context.strip())
    shown = data.get("systemMessage")
    if isinstance(shown, str) and shown.strip():
        outcome.messages.append(shown.strip())
    legacy = {"approve": "allow", "block": "deny"}.get(str(data.get("decision"))) if event == "PreToolUse" else None
    permission = PERMISSIONS.get(str(specific.get("permissionDecision") or legacy))
    if updated is not None and permission != "deny":
        outcome.updated_input = updated
        decided = "update"
    if event == "PostToolUse" and "updatedMCPToolOutput" in specific:
        outcome.updated_output = mcp_output_text(specific["updatedMCPToolOutput"])
        decided = "update"
    if event == "PreToolUse" and permission is not None:
        reason = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
        outcome.decide(permission, reason)
        decided = f"{permission}+update" if decided == "update" else permission
    elif data.get("decision") == "block":
        outcome.block(str(data.get("reason") or f"a {event} hook blocked it (no reason given)"))
        decided = "block"
    if data.get("continue") is False:
        outcome.stop = str(data.get("stopReason") or f"a {event} hook ended the run")
        decided = "stop"
    return decided


def mcp_output_text(value: Any) -> str:
    """A hook's replacement for an MCP tool's result, as the text the model reads: a string as it
    is; MCP content blocks (a list, or an object with `content`) by their text, another block named
    by its type; anything else as JSON."""
    if isinstance(value, str):
        return value
    blocks = value.get("content") if isinstance(value, dict) and isinstance(value.get("content"), list) else value
    if isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks):
        return "\n".join(
            str(b["text"]) if b.get("type") == "text" and "text" in b else f"[{b.get('type', 'block')}]" for b in blocks
        )
    return json.dumps(value, ensure_ascii=False)


# What a program prints when it cannot reach the network (uv, pip, npm, curl, Python's socket): a
# hook that could not run is a failure of the hook, not its decision, even when it exits 2 (uv does).
_NO_NETWORK = re.compile(
    r"dns error|failed to lookup address|could not resolve host|temporary failure in name resolution"
    r"|name or service not known|network is unreachable|getaddrinfo (?:failed|ENOTFOUND|EAI_AGAIN)",
    re.IGNORECASE,
)


def _could_not_run(event: str, err: str, payload: bytes) -> bool:
    """Whether a hook's failure is the sandbox's missing network rather than its decision. Never
    for PreToolUse: a guard's block must not turn into "the call goes on" because the command it
    quotes back holds these words; nor when the words came in with the hook's own input."""
    found = _NO_NETWORK.search(err)
    if found is None or event == "PreToolUse":
        return False
    return found.group(0).lower().encode() not in payload.lower()


def ms_since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
