"""`--input-format stream-json`: a session that Claude Code's Agent SDKs drive over stdin and stdout.

This is what `claude_agent_sdk.query(prompt, ClaudeAgentOptions(cli_path=...))` runs: the SDK
starts the CLI with `--output-format stream-json --verbose --input-format stream-json`, sends
`initialize`, then one user message per turn, and closes stdin when it wants no more. Each user
message is one turn of one session; each turn closes as a run does (arnes/closing.py), and the
output's subscriber prints its result line. An `interrupt` request stops the running turn as
Ctrl-C does. A user message is known by its `uuid` (the caller's, or one arnes gives it, shown
with `--replay-user-messages`): `rewind_files` names the turn with it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from arnes.agent.events import Event, Notice, TurnStart
from arnes.agent.loop import Agent, RunResult
from arnes.closing import close
from arnes.errors import EXIT_OK, ConfigError, OutputClosed
from arnes.extensions.agents import given_agents
from arnes.extensions.commands import Catalog, split_invocation
from arnes.headless import control_mcp
from arnes.headless.approver import SdkApprover
from arnes.headless.channel import Channel, Json, Unanswered
from arnes.headless.control import context_usage, set_model, set_permission_mode, stop_task
from arnes.headless.control_rewind import rewind_files
from arnes.headless.facts import commands, initialize_response
from arnes.headless.output import Headless
from arnes.headless.sdk_hooks import SdkHooks
from arnes.runner import CONTINUE, Prepared, exit_code, prepare, subscribe
from arnes.ui.stdout import Stdout


def run_stream(args: argparse.Namespace, task: str) -> int:
    if task:
        raise ConfigError("with --input-format stream-json the task comes on stdin, as user messages (JSON lines)")
    if args.output_format != "stream-json":
        raise ConfigError("--input-format stream-json goes with --output-format stream-json")
    out = Stdout()
    channel = Channel(sys.stdin, out)
    stdio = getattr(args, "permission_prompt_tool", None) == "stdio"
    hooks = SdkHooks(channel)
    ready = prepare(
        args,
        approver=SdkApprover(channel) if stdio else None,
        extra_hooks=hooks.around,
        mcp_relay=control_mcp.relay(channel),
    )
    channel.session_id = ready.session.id
    return Driven(args, ready, channel, out, hooks).run()


@dataclass
class Driven:
    """One session, one turn per user message from the channel."""

    args: argparse.Namespace
    ready: Prepared
    channel: Channel
    out: Stdout
    hooks: SdkHooks
    catalog: Catalog = field(default_factory=Catalog)
    _running: bool = False
    _interrupted: bool = False
    _notes: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _agent: Agent | None = None
    _message: str = ""  # the uuid of the user message whose turn runs
    _points: dict[str, int] = field(default_factory=dict)  # user message uuid -> its turn's checkpoint

    def _turn_began(self, event: Event) -> None:
        """The checkpoint a user message's turn opened (its first `turn` point): what rewind_files takes."""
        if isinstance(event, TurnStart) and event.kind == "turn" and self._message not in self._points:
            self._points[self._message] = event.n

    def run(self) -> int:
        session, cfg = self.ready.session, self.ready.cfg
        self.catalog = commands(session)
        output = Headless.made("stream-json", session, cfg, self.out)
        session.bus.subscribe(self._turn_began)
        code = EXIT_OK
        with subscribe(self.args, session, cfg, output) as trace_path:
            agent = self._agent = Agent(session, self.ready.history)
            agent.start()
            self.channel.start(self.answer)
            try:
                for message in self.channel.messages():
                    given = message.get("uuid") if isinstance(message.get("uuid"), str) else None
                    self._message = given or str(uuid.uuid4())
                    if self.args.replay_user_messages and output.stream is not None:
                        output.stream.write(replayed(message, self._message, session.id))
                    text = user_text(message, session.bus.emit) or CONTINUE
                    output.new_turn()
                    result = self._turn(agent, text)
                    self.channel.answered()  # before its result line: whoever reads it may rewind at once
                    close(session, cfg, text, result, trace_path, user_message=given)  # the subscriber prints it
                    code = exit_code(result)
            finally:
                agent.finish()
        return code

    def _turn(self, agent: Agent, text: str) -> RunResult:
        try:
            return self._running_turn(agent, text)
        except ConfigError as exc:  # a command's model with no price under --max-cost: nothing ran
            r = agent.result
            r.stop_reason, r.error, r.text, r.limit = "error", str(exc), "", None
            return r
        except KeyboardInterrupt as exc:  # an SDK's interrupt that landed just outside the loop's own handler
            if isinstance(exc, OutputClosed) or not self._interrupted:
                raise
            agent.result.stop_reason = "interrupted"
            return agent.result

    def _running_turn(self, agent: Agent, text: str) -> RunResult:
        """One turn, a custom command's when the message starts with `/NAME`; `interrupt` may stop it."""
        from arnes.extensions.command_turn import applied, mcp_prompt, resolve
        from arnes.extensions.command_turn import prepare as prepare_command

        with self._lock:
            self._running, self._interrupted = True, False
            notes, self._notes = self._notes, []
        try:
            for note in notes:
                self.ready.session.bus.emit(Notice("warning", f"warning: {note}"))
            invocation = split_invocation(text)
            command, clash = resolve(self.catalog, self.ready.session, invocation[0]) if invocation else (None, None)
            if clash is not None:
                self.ready.session.bus.emit(Notice("warning", f"warning: {clash}"))
            if invocation is not None and command is None:  # an MCP server's prompt, or the text as it is
                served = mcp_prompt(self.ready.session, *invocation)
                return agent.turn(served if served is not None else text, self._message)
            if invocation is None or command is None:
                return agent.turn(text, self._message)
            prepared = prepare_command(command, invocation[1], self.ready.cfg.trusted, self.ready.session.provider.name)
            for note in prepared.notes:
                self.ready.session.bus.emit(Notice("warning", f"warning: {note}"))
            with applied(self.ready.session, prepared, self.ready.cfg) as prompt:
                return agent.turn(prompt, self._message)
        finally:
            with self._lock:
                self._running = False

    def answer(self, request: Json) -> Json:
        """A control request from the SDK (on the reader thread): what Claude Code would answer."""
        session = self.ready.session
        subtype = request.get("subtype")
        if subtype == "initialize":
            notes = self.hooks.register(request.get("hooks"))
            if notes:  # said on the main thread, with the next turn
                with self._lock:
                    self._notes += notes
            if request.get("agents"):  # before the first message, which lists them; said with the next turn
                given, warnings = given_agents(request["agents"], "the SDK's agents option")
                if session.agents is not None:
                    session.agents.add_given(given)
                elif given:
                    warnings.append("the SDK's agents option: this session delegates to none (Delegate is off)")
                with self._lock:
                    self._notes += warnings
            return initialize_response(session, self.catalog)
        if subtype == "interrupt":
            with self._lock:
                if self._running and not self._interrupted:
                    self._interrupted = True
                    # A real SIGINT, as Ctrl-C sends: it also wakes a main thread blocked in a wait
                    # (`_thread.interrupt_main` would only be seen once the wait ends).
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
            return {}
        if subtype == "mcp_status":
            return control_mcp.status(session.mcp)
        if subtype == "mcp_reconnect":
            return control_mcp.reconnect(session.mcp, request)
        if subtype == "mcp_toggle":
            return control_mcp.toggle(session.mcp, request)
        if subtype == "rewind_files" and self._agent is not None:
            return rewind_files(session, self._agent, self._points, request, self.channel.idle())
        if subtype == "stop_task":
            return stop_task(session, request)
        if subtype == "set_permission_mode":
            return set_permission_mode(session, self.ready.cfg, request)
        if subtype == "set_model":
            return set_model(session, self.ready.cfg, request)
        if subtype == "get_context_usage" and self._agent is not None:
            return context_usage(session, self._agent.context_usage())
        raise Unanswered(f"arnes does not answer the control request {subtype!r}")


def replayed(message: Json, message_uuid: str, session_id: str) -> Json:
    """A user message as it came, back on stdout with its uuid (Claude Code's `--replay-user-messages`)."""
    body = message.get("message")
    content = body.get("content") if isinstance(body, dict) else None
    return {
        "type": "user",
        "message": {"role": "user", "content": content if isinstance(content, (str, list)) else ""},
        "session_id": session_id,
        "parent_tool_use_id": None,
        "uuid": message_uuid,
        "isReplay": True,
    }


def user_text(message: Json, emit: Callable[[Event], None]) -> str:
    """The text of a user message (a string, or content blocks); other blocks are named and left out."""
    body = message.get("message")
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, str):
        return content.strip()
    texts, other = [], []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        else:
            other.append(str(part.get("type")) if isinstance(part, dict) else type(part).__name__)
    if other:
        emit(Notice("warning", f"warning: user message blocks arnes cannot send were left out: {', '.join(other)}"))
    return "\n\n".join(texts).strip()
