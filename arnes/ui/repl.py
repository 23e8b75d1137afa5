"""The interactive prompt: history, multi-line input (Alt-Enter), slash commands (built in, and the
project's and user's own command files, tab-completed), and Ctrl-C that cancels the turn, not the session."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rich.console import Console

from arnes.agent.events import Notice
from arnes.agent.loop import Agent
from arnes.config import EffectiveConfig
from arnes.config_flags import bypass_refused
from arnes.errors import ArnesError, ConfigError
from arnes.extensions.commands import Catalog, load_catalog, split_invocation, unknown_message
from arnes.extensions.locations import one_warning
from arnes.llm.base import Provider
from arnes.permissions.types import MODES, Mode
from arnes.safe import terminal_console, visible
from arnes.session import Session
from arnes.tools.files import session_diffs
from arnes.ui.render import TerminalRenderer
from arnes.ui.slash import BUILTINS, HELP

CYCLE: tuple[Mode, ...] = ("default", "acceptEdits", "plan")  # Shift+Tab's order, Claude Code's


def next_mode(mode: Mode) -> Mode:
    """The mode Shift+Tab moves to: the next of the cycle; from a mode outside it (bypass, chosen at
    the start), the first: a key never widens a session into bypass."""
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)] if mode in CYCLE else CYCLE[0]


@dataclass(frozen=True)
class ReplActions:
    """What the prompt's commands reach above the UI (the runner, the subcommands), passed in by
    commands/interactive.py so that this module imports nothing from the layers that call it."""

    provider_help: Callable[[str], str]  # an unreachable model's error -> how to configure one
    switch_model: Callable[[str], Provider]  # /model NAME -> the provider from now on
    handoff: Callable[[], None]  # the quick handoff checks on the way out
    permissions: Callable[[Console], None]  # /permissions: the rules, and what the folder may grant
    workflows: Mapping[str, Callable[[argparse.Namespace, list[str]], int]]  # /features /next /check /checker
    # /rewind [N] and /undo (commands/rewind.py): (agent, say, ask, rest)
    rewind: Callable[[Agent, Callable[[str], None], Callable[[str], str], str], None]
    undo: Callable[[Agent, Callable[[str], None], Callable[[str], str]], None]


@dataclass
class Repl:
    args: argparse.Namespace
    session: Session
    cfg: EffectiveConfig
    agent: Agent
    actions: ReplActions
    console: Console = field(default_factory=terminal_console)
    read: Callable[[], str] | None = None  # injectable for tests; default prompt_toolkit
    ask: Callable[[str], str] | None = None  # a question inside a command (/rewind); default prompt_toolkit
    catalog: Catalog = field(default_factory=Catalog)  # the command files, read again before each line
    _shell_said: list[str] = field(default_factory=list)  # `!` commands since the last message, with outputs

    def run(self) -> int:
        read = self.read or self._prompt_toolkit()
        self.console.print(
            "arnes: type a task, /help for commands, !cmd to run one yourself, Ctrl-D to leave",
            style="dim",
            markup=False,
        )
        self.agent.start()
        self._reload_commands()
        unused = [f"command file not used: {r.why}" for r in self.catalog.refused]
        if (said := one_warning("command files", unused)) is not None:
            self.session.bus.emit(Notice("warning", f"warning: {said}"))
        try:
            while True:
                try:
                    text = read().strip()
                except KeyboardInterrupt:
                    continue  # Ctrl-C at the prompt clears the line
                except EOFError:
                    break
                if not text:
                    continue
                if text.startswith("!"):
                    self._shell(text[1:].strip())
                    continue
                if text.startswith("/"):
                    self._reload_commands()  # a file written during the session works without a restart
                    if not self.command(text):
                        break
                    continue
                self._turn(text)
        finally:
            self.agent.finish()
        self._leave()
        return 0

    def _shell(self, command: str) -> None:
        """`!cmd`: the user's own command, run now; it and its output go with the next message."""
        if not command:
            self.console.print("`!` runs the command after it: !ls, !git status", style="dim", markup=False)
            return
        output, failed = self.agent.user_command(command)
        self.console.print(visible(output), style="red" if failed else None, markup=False)
        self._shell_said.append(f"<bash-input>{command}</bash-input>\n<bash-stdout>{output}</bash-stdout>")

    def _turn(self, text: str) -> None:
        if self._shell_said:  # what the user ran since the last message, as Claude Code's bash mode sends it
            text, self._shell_said = "\n\n".join([*self._shell_said, text]), []
        result = self.agent.turn(text)
        if result.stop_reason == "interrupted":  # through the renderer: it erases its spinner first
            self.session.bus.emit(Notice("warning", "turn cancelled (Ctrl-C); the session goes on"))
        elif result.stop_reason == "error" and result.error and result.unreachable:
            self.session.bus.emit(Notice("error", self.actions.provider_help(result.error)))
        elif result.stop_reason == "error" and result.error:  # it answered: configuring one is beside the point
            self.session.bus.emit(Notice("error", f"arnes: {result.error}"))

    def _reload_commands(self) -> None:
        self.catalog = load_catalog(self.session.host, BUILTINS)

    def _custom(self, text: str) -> bool:
        """`/NAME ARGS` from a command file, as one turn with its tools and model; False: no such file."""
        from arnes.extensions.command_turn import applied, mcp_prompt, prepare, resolve

        invocation = split_invocation(text)
        if invocation is None:
            return False
        try:
            command, note = resolve(self.catalog, self.session, invocation[0])
            if note is not None:
                self.session.bus.emit(Notice("warning", f"warning: {note}"))
            served = mcp_prompt(self.session, *invocation) if command is None else None
        except ConfigError as exc:  # the skill's folder changed since the start, the server failed
            self.console.print(visible(str(exc)), style="red", markup=False)
            return True
        if served is not None:  # an MCP server's prompt: the user's message, as Claude Code sends it
            self._turn(served)
            return True
        if command is None:
            return False
        prepared = prepare(command, invocation[1], self.cfg.trusted, self.session.provider.name)
        for note in prepared.notes:
            self.session.bus.emit(Notice("warning", f"warning: {note}"))
        try:
            with applied(self.session, prepared, self.cfg) as prompt:
                if prepared.model:
                    self.session.bus.emit(Notice("info", f"/{command.name} runs with model {prepared.model}"))
                self._turn(prompt)
        except ConfigError as exc:  # its model has no price under --max-cost: nothing ran
            self.console.print(f"/{command.name}: {visible(str(exc))}", style="red", markup=False)
        return True

    def _help(self) -> None:
        c = self.console
        for usage, what in HELP.items():
            c.print(f"  {usage:<16} {what}", markup=False)
        bang = "run a command yourself, in the sandbox; it and its output go with your next message"
        c.print(f"  {'!COMMAND':<16} {bang}", markup=False)
        if self.catalog.commands:
            c.print("commands from files (.arnes/commands, .claude/commands, ~/.config/arnes/commands):", markup=False)
        for command in self.catalog.commands.values():
            usage = visible(f"/{command.name} {command.hint}".strip(), newlines=False)
            what = visible(command.description, newlines=False)
            c.print(f"  {usage:<16} {what} ({command.origin})", markup=False)

    def _leave(self) -> None:
        """On the way out: only a session that changed files gets the quick handoff checks (no test run)."""
        changed = self.session.ctx.changes.changed()
        if not changed:
            return
        names = visible(", ".join(self.session.ctx.display(p) for p in changed))
        self.console.print(f"files changed this session: {names}", markup=False)
        self.console.print("handoff check (run `arnes handoff` for the build and the tests too):", markup=False)
        self.actions.handoff()

    def _prompt_toolkit(self) -> Callable[[], str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings

        from arnes.dotdir import ensure_arnes_dir
        from arnes.ui.history import WorkspaceHistory

        ensure_arnes_dir(self.session.workspace)
        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event):  # type: ignore[no-untyped-def]  # prompt_toolkit's handler signature
            event.current_buffer.insert_text("\n")

        @keys.add("escape", "escape")
        def _rewind(event):  # type: ignore[no-untyped-def]  # Esc Esc, as in Claude Code: /rewind
            event.app.exit(result="/rewind")

        @keys.add("s-tab")
        def _cycle(event):  # type: ignore[no-untyped-def]  # Shift+Tab, as in Claude Code: the next mode
            from prompt_toolkit.application import run_in_terminal

            mode = next_mode(self.session.mode)
            self.session.set_mode(mode)
            run_in_terminal(lambda: self.console.print(f"mode: {mode}", markup=False))

        from prompt_toolkit.completion import merge_completers

        from arnes.ui.completion import MentionCompleter, SlashCompleter

        hidden = self.session.ctx.hidden
        completer = merge_completers(
            [
                SlashCompleter(lambda: self.catalog, HELP),
                MentionCompleter(self.session.workspace, lambda path: hidden("Read", path)),
            ]
        )
        prompt: PromptSession[str] = PromptSession(
            history=WorkspaceHistory(self.session.host),
            key_bindings=keys,
            completer=completer,
            complete_while_typing=False,  # Tab completes: a menu racing the typing can drop the Tab's insert
        )
        return lambda: prompt.prompt("arnes> ")

    # -- slash commands ----------------------------------------------------------------------
    def command(self, text: str) -> bool:
        """Run one slash command; False means leave."""
        name, _, rest = text.partition(" ")
        rest = rest.strip()
        c, s = self.console, self.session
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self._help()
        elif name == "/diff":
            self._diff()
        elif name == "/undo":
            self.actions.undo(self.agent, self._say, self._ask)
        elif name == "/rewind":
            self.actions.rewind(self.agent, self._say, self._ask, rest)
        elif name == "/cost":
            b = s.budget
            c.print(f"{b.input_tokens} input tokens, {b.output_tokens} output tokens, ${b.cost:.4f}", markup=False)
        elif name == "/compact":
            before = len(self.agent.messages)
            self.agent.compact_now()
            c.print(f"compacted: {before} -> {len(self.agent.messages)} messages", markup=False)
        elif name == "/mode":
            self._mode(rest)
        elif name == "/model":
            self._model(rest)
        elif name == "/permissions":
            self.actions.permissions(c)
        elif name.lstrip("/") in BUILTINS or not self._custom(text):
            self._workflow(name, rest)
        return True

    def _say(self, text: str) -> None:
        self.console.print(visible(text), markup=False)

    def _ask(self, question: str) -> str:
        if self.ask is not None:
            return self.ask(question)
        from prompt_toolkit import prompt

        try:
            return prompt(question)
        except (EOFError, KeyboardInterrupt):
            return ""

    def _workflow(self, name: str, rest: str) -> None:
        handler = self.actions.workflows.get(name)
        if handler is None:
            from arnes.extensions.command_turn import skill_names

            builtins = [usage.split()[0] for usage in HELP]
            said = unknown_message(name.lstrip("/"), self.catalog, builtins, skill_names(self.session))
            self.console.print(visible(said, newlines=False), style="yellow", markup=False)
            return
        try:
            handler(self.args, shlex.split(rest) if name == "/checker" else [])  # shlex may raise ValueError
        except (ArnesError, ValueError) as exc:  # a bad file, a limit, a dead model; shlex on a stray quote
            self.console.print(f"{name}: {visible(str(exc))}", style="red", markup=False)
        except KeyboardInterrupt:
            self.console.print(f"{name} cancelled (Ctrl-C); the session goes on", style="yellow", markup=False)
        except SystemExit:
            self.console.print(f"usage: {name} {'TASK' if name == '/checker' else ''}", style="yellow", markup=False)

    def _diff(self) -> None:
        diffs = session_diffs(self.session.ctx)
        if not diffs:
            self.console.print("no changes this session", markup=False)
        for _, diff in diffs:
            TerminalRenderer(self.console).show_diff(diff)

    def _mode(self, rest: str) -> None:
        s = self.session
        if rest:
            if rest not in MODES:
                self.console.print(f"modes: {', '.join(MODES)}", style="yellow", markup=False)
                return
            if rest == "bypass" and (refused := bypass_refused(self.cfg)):
                self.console.print(refused, style="yellow", markup=False)
                return
            mode: Mode = next(m for m in MODES if m == rest)
            s.set_mode(mode)
        self.console.print(f"mode: {s.engine.mode}", markup=False)

    def _model(self, rest: str) -> None:
        s = self.session
        if rest:
            s.provider = self.actions.switch_model(rest)
        self.console.print(f"model: {visible(s.provider.model)} ({s.provider.name})", markup=False)
