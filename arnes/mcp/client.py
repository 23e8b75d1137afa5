"""The MCP client: each configured server on its own task in one background event loop.

Start-up never waits: `start` returns at once and the servers connect and list their tools
behind the banner. The first model request waits for them (bounded by each server's `timeout`),
so the tools are there when the model first looks. A server that fails, hangs or dies is marked
failed with the reason, and its tools answer with that reason; the session goes on.
The `mcp` SDK (the optional extra `arnes[mcp]`) takes most of a second to import: the background
thread imports it, so the banner never waits for it; asyncio too is imported (and the loop made)
only by `start`, after the banner (it cost ~15 ms of the banner path).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from arnes.host.paths import search_path, user_program_env
from arnes.host.stderrtail import stderr_tail
from arnes.mcp.expand import ExpansionError
from arnes.mcp.sdk_relay import NO_CHANNEL, Relay, sdk_streams
from arnes.mcp.settings import ServerEntry
from arnes.sandbox.base import Confined, Sandbox
from arnes.sandbox.placeholders import neutral_folder

if TYPE_CHECKING:
    import asyncio

    from mcp import ClientSession

MISSING_SDK = "the MCP SDK is not installed: pip install 'arnes[mcp]'"
MOST_RESOURCES = 500  # of one server's list: a server with thousands would fill the context

SandboxFor = Callable[[ServerEntry], Sandbox | None]  # None: run this server unconfined
# The entry as it starts: its `${VAR}`s expanded (mcp/expand.py); ExpansionError: it does not start.
Resolve = Callable[[ServerEntry], ServerEntry]


@dataclass
class ListedTool:
    name: str
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ListedPrompt:
    """A prompt a server offers: Claude Code runs it as `/mcp__SERVER__NAME arguments`."""

    name: str
    description: str
    arguments: tuple[str, ...]  # in the server's order: the words after the command fill them


@dataclass
class ServerState:
    """What `arnes mcp list` and the banner show of one server."""

    entry: ServerEntry
    state: str = "starting"  # starting | started | not started: untrusted | failed: WHY
    tools: list[ListedTool] = field(default_factory=list)
    prompts: list[ListedPrompt] = field(default_factory=list)
    resources: bool = False  # it says it has resources (ListMcpResourcesTool / ReadMcpResourceTool)
    sandbox: str = ""
    ready: threading.Event = field(default_factory=threading.Event)
    session: ClientSession | None = None
    stop: asyncio.Event | None = None
    task: asyncio.Task[None] | None = None
    errlog: IO[str] | None = None  # the server's stderr, for the reason it failed
    stderr_tail: list[str] = field(default_factory=list)  # its last lines when it failed
    boxes: list[Sandbox] = field(default_factory=list)  # the sandboxes it ran in: their stand-ins go at the end

    def shown_tail(self) -> str:
        """Its stderr's last lines, each on a line of its own under the one that names the server."""
        return "".join(f"\n    stderr| {line}" for line in self.stderr_tail)

    def fail(self, why: str) -> None:
        if self.state in ("starting", "started"):
            self.state = f"failed: {why}"
        self.session = None
        self.ready.set()


class McpHub:
    """The servers of one session, their state and their tools; `call` runs one tool."""

    def __init__(
        self,
        entries: list[ServerEntry],
        workspace: Path,
        sandbox_for: SandboxFor,
        resolve: Resolve,
        relay: Relay | None = None,
    ):
        self.workspace = workspace
        self._sandbox_for = sandbox_for
        self._resolve = resolve
        self._relay = relay  # the Agent SDK's control channel: its in-process servers (mcp/sdk_relay.py)
        self.servers = {e.name: ServerState(e) for e in entries}
        for st in self.servers.values():
            if st.entry.held:  # Claude Code's approval keys leave it out (mcp/approval.py)
                st.state = f"not started: {st.entry.held}"
                st.ready.set()
            elif not st.entry.trusted:
                st.state = "not started: untrusted (`arnes trust` or --trust to start it)"
                st.ready.set()
        self._loop: asyncio.AbstractEventLoop | None = None  # made by `start`
        self._thread = threading.Thread(target=self._run, name="arnes-mcp", daemon=True)

    def _run(self) -> None:
        try:
            import mcp.client.stdio  # off the start-up path: see the module docstring
            import mcp.client.streamable_http  # noqa: F401
        except ImportError:
            for st in self.servers.values():
                st.fail(MISSING_SDK)
        assert self._loop is not None
        self._loop.run_forever()

    def start(self) -> None:
        """Connect every trusted server in the background; returns at once (a second call does nothing)."""
        if self._thread.is_alive():
            return
        import asyncio

        self._loop = loop = asyncio.new_event_loop()
        self._thread.start()
        for st in self.servers.values():
            if not st.ready.is_set():
                loop.call_soon_threadsafe(self._launch, st)

    def _launch(self, st: ServerState) -> None:
        import asyncio

        if st.ready.is_set() or self._loop is None:  # failed already (no SDK)
            return
        try:
            entry = self._resolve(st.entry)  # only now: a project's file is expanded once it may start
        except ExpansionError as exc:
            st.fail(f"not started: {st.entry.source}: mcpServers.{st.entry.name}: {exc}")
            return
        if entry.config.transport == "sdk" and self._relay is None:
            st.fail(NO_CHANNEL)
            return
        st.stop = asyncio.Event()
        st.task = task = self._loop.create_task(self._serve(st, entry))
        self._loop.call_later(st.entry.config.timeout, self._give_up, st, task)

    def _give_up(self, st: ServerState, task: asyncio.Task[None]) -> None:
        if st.state == "starting" and st.task is task:  # not a later start's (`restart`)
            st.stderr_tail = stderr_tail(st.errlog)  # before fail(): whoever waits reads it next
            st.fail(
                f"no answer within {st.entry.config.timeout:g} s "
                '(raise its "timeout", or MCP_TIMEOUT, for a slow server)'
            )
            st.task.cancel()

    async def _serve(self, st: ServerState, entry: ServerEntry) -> None:
        import asyncio

        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        confined: Confined | None = None
        # Outside the exit stack: it must still be open when a failure is reported below.
        st.errlog = errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            async with contextlib.AsyncExitStack() as stack:
                cfg = entry.config
                if cfg.transport == "stdio":
                    confined, cwd = self._confine(st, entry)
                    params = StdioServerParameters(
                        command=confined.argv[0], args=confined.argv[1:], env=confined.env, cwd=cwd
                    )
                    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
                elif cfg.transport == "sdk" and self._relay is not None:  # a server in the Agent SDK's program
                    st.sandbox = "the Agent SDK's own process"
                    read, write = await stack.enter_async_context(
                        sdk_streams(cfg.name or entry.name, self._relay, cfg.tool_timeout)
                    )
                elif cfg.transport == "sse":  # the older HTTP+SSE transport, still served and configured
                    from mcp.client.sse import sse_client

                    url = cfg.url or ""
                    read, write = await stack.enter_async_context(
                        sse_client(url, headers=cfg.headers, timeout=cfg.timeout)
                    )
                else:
                    import httpx2 as httpx  # the SDK's own HTTP client

                    client = httpx.AsyncClient(headers=cfg.headers, timeout=cfg.timeout)
                    await stack.enter_async_context(client)
                    url = cfg.url or ""
                    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
                session = await stack.enter_async_context(ClientSession(read, write))
                started = await session.initialize()
                listed = await session.list_tools()
                if confined is not None:  # the server runs: bubblewrap has read its seccomp filter
                    confined.close()
                st.tools = [
                    ListedTool(t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
                    for t in listed.tools
                    if cfg.offers(t.name)
                ]
                st.prompts = await _prompts(session) if started.capabilities.prompts is not None else []
                st.resources = started.capabilities.resources is not None
                st.session, st.state = session, "started"
                st.ready.set()
                assert st.stop is not None
                await st.stop.wait()
        except asyncio.CancelledError:  # given up on (its time-out) or the session's end
            st.fail("stopped")
        except BaseException as exc:
            st.stderr_tail = stderr_tail(errlog)
            st.fail(_reason(exc) + (" (the end of its stderr follows)" if st.stderr_tail else ""))
        finally:
            if confined is not None:
                confined.close()
            if st.state == "started":
                st.stderr_tail = stderr_tail(errlog)
                st.fail("the server closed the connection")
            errlog.close()

    def _confine(self, st: ServerState, entry: ServerEntry) -> tuple[Confined, Path]:
        """The server's command in the sandbox and the folder it starts in. Its own `env` is set
        inside the sandbox only: what starts it on the host (a shell, bwrap, the Landlock helper)
        runs with arnes's clean environment, never with a repository's `BASH_ENV`, `LD_PRELOAD`
        or relative `PATH`. The user's own servers start in an empty folder of arnes's, not in
        the workspace, whose files `python -m NAME`, npx and uv would otherwise find first."""
        cfg = entry.config
        argv = [cfg.command or "", *cfg.args]
        cwd = neutral_folder() if entry.user else self.workspace
        env = {**cfg.env, "ARNES_PROJECT_DIR": str(self.workspace), "CLAUDE_PROJECT_DIR": str(self.workspace)}
        sandbox = self._sandbox_for(entry)
        if sandbox is None or sandbox.name == "off":
            from mcp.client.stdio import get_default_environment

            st.sandbox = "unconfined"
            # The user's own program, on the host: PATH finds nothing a sandboxed command could write.
            default = user_program_env(get_default_environment(), self.workspace)
            return Confined(argv, {**default, **env}), cwd
        st.sandbox = sandbox.name
        st.boxes.append(sandbox)
        confined = sandbox.wrap(argv, cwd, env, lasting=True)
        if not confined.pass_fds:
            return confined, cwd
        # The SDK starts the process without inherited descriptors: a shell reopens them from
        # this process (the seccomp filter and the variables wait in pipes) before it becomes
        # the sandbox.
        pid = os.getpid()
        reopen = "; ".join(f"exec {fd}</proc/{pid}/fd/{fd}" for fd in confined.pass_fds)
        script = f'{reopen}; exec "$@"'
        shell = shutil.which("bash", path=search_path(confined.env.get("PATH", os.defpath))) or "/bin/bash"
        return Confined([shell, "-c", script, "arnes-mcp", *confined.argv], confined.env, confined.pass_fds), cwd

    # -- for the session -----------------------------------------------------------------------
    def wait(self) -> None:
        """Wait until every server has started or failed (each bounded by its own timeout)."""
        self.start()
        for st in self.servers.values():
            st.ready.wait(st.entry.config.timeout + 5)
            if not st.ready.is_set():
                st.fail(f"no answer within {st.entry.config.timeout:g} s")

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool: (text for the model, is_error). Raises ConnectionError when it cannot run."""
        timeout = self.servers[server].entry.config.tool_timeout
        result = self._request(server, lambda s: s.call_tool(tool, arguments, read_timeout_seconds=timeout), "the call")
        return render(result), bool(getattr(result, "isError", False) or getattr(result, "is_error", False))

    def prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """A server's prompt filled with `arguments`, as the text of its messages (Claude Code's
        `/mcp__SERVER__NAME`). Raises ConnectionError when the server cannot give it."""
        from types import SimpleNamespace

        result = self._request(server, lambda s: s.get_prompt(name, arguments), f"its prompt {name!r}")
        # each message holds one block (text, an image, a resource): rendered as a tool result's are
        parts = [render(SimpleNamespace(content=[m.content])) for m in getattr(result, "messages", [])]
        return "\n\n".join(part for part in parts if part != "(no output)")

    def _request(self, server: str, make: Callable[[ClientSession], Coroutine[Any, Any, Any]], what: str) -> Any:
        """One request to a running server on the hub's loop, within its `tool_timeout`; every way
        it can fail is a ConnectionError saying which server and why."""
        st = self.servers[server]
        session = st.session
        if session is None or self._loop is None:
            raise ConnectionError(f"the MCP server {server!r} is not running ({st.state})")
        import asyncio

        timeout = st.entry.config.tool_timeout
        future = asyncio.run_coroutine_threadsafe(make(session), self._loop)
        late = f'the MCP server {server!r} did not answer within {timeout:g} s ("tool_timeout" in its settings)'
        try:
            return future.result(timeout + 5)
        except (FutureTimeout, TimeoutError) as exc:
            future.cancel()
            raise ConnectionError(late) from exc
        except Exception as exc:  # the connection broke, the server died, or the SDK's own time-out
            if "timed out" in str(exc):
                raise ConnectionError(late) from exc
            if st.session is None:
                last = f" (its stderr: {st.stderr_tail[-1]})" if st.stderr_tail else ""
                raise ConnectionError(f"the MCP server {server!r} stopped: {st.state}{last}") from exc
            raise ConnectionError(f"the MCP server {server!r} failed {what}: {_reason(exc)}") from exc

    # -- resources (mcp/resource_tools.py) --------------------------------------------------------
    def with_resources(self) -> list[str]:
        """The running servers that say they have resources."""
        return [name for name, st in self.servers.items() if st.state == "started" and st.resources]

    def list_resources(self, server: str) -> list[dict[str, str]]:
        """A server's resources (its first MOST_RESOURCES), in Claude Code's shape."""
        result = self._request(server, lambda s: s.list_resources(), "to list its resources")
        return [
            {
                "uri": str(r.uri),
                "name": r.name,
                "mimeType": r.mime_type or "",
                "description": r.description or "",
                "server": server,
            }
            for r in list(getattr(result, "resources", []))[:MOST_RESOURCES]
        ]

    def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """One resource's contents: text as it is, binary named with its size."""
        result = self._request(server, lambda s: s.read_resource(uri), f"to read {uri}")
        contents: list[dict[str, Any]] = []
        for part in getattr(result, "contents", []) or []:
            item: dict[str, Any] = {"uri": str(part.uri), "mimeType": part.mime_type or ""}
            text = getattr(part, "text", None)
            if isinstance(text, str):
                item["text"] = text
            else:
                blob = getattr(part, "blob", "") or ""
                item["text"] = f"[binary content, {len(blob) * 3 // 4 - blob[-2:].count('=')} bytes, not shown]"
            contents.append(item)
        return contents

    # -- for the SDK's control requests (headless/control_mcp.py) ----------------------------------
    def offers(self, server: str, tool: str) -> bool:
        """Whether the server runs now and lists the tool: what the next request offers."""
        st = self.servers.get(server)
        return st is not None and st.state == "started" and any(t.name == tool for t in st.tools)

    def turn_off(self, name: str, why: str) -> None:
        """Stop one server (its process ends) until `restart`; its tools answer that it is off."""
        st = self.servers[name]
        self._stop(st)
        st.state, st.session = f"not started: {why}", None
        st.ready.set()

    def restart(self, name: str) -> ServerState:
        """Stop the server if it runs, start it again and wait until it started or failed (its
        `timeout`). Only a server that may start here: the caller checks `entry.starts`."""
        st = self.servers[name]
        assert st.entry.starts
        self._stop(st)
        st.state, st.session, st.tools, st.stderr_tail = "starting", None, [], []
        st.ready = threading.Event()
        if self._loop is None:
            self.start()  # launches every server not ready yet, this one too
        else:
            self._loop.call_soon_threadsafe(self._launch, st)
        if not st.ready.wait(st.entry.config.timeout + 5):
            st.fail(f"no answer within {st.entry.config.timeout:g} s")
        return st

    def _stop(self, st: ServerState) -> None:
        """End the server's task, starting or started (as its time-out does), and wait for it."""
        loop, task = self._loop, st.task
        if loop is None or task is None or task.done():
            return
        import asyncio

        async def stop() -> None:
            task.cancel()
            await asyncio.wait([task], timeout=5)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), loop).result(10)

    def close(self) -> None:
        """Stop every server (stdio processes are ended by the SDK) and the loop."""
        loop = self._loop
        if not self._thread.is_alive() or loop is None:
            return
        import asyncio

        async def stop_all() -> None:
            tasks = []
            for st in self.servers.values():
                if st.stop is not None:
                    st.stop.set()
                if st.task is not None:
                    tasks.append(st.task)
            if tasks:
                await asyncio.wait(tasks, timeout=5)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(5)
        # The servers are gone: the empty stand-ins their bubblewraps made go too (not before:
        # removed while the session runs, a mount point is unmounted in its other sandboxes).
        for st in self.servers.values():
            for box in st.boxes:
                with contextlib.suppress(OSError):
                    box.close()


async def _prompts(session: ClientSession) -> list[ListedPrompt]:
    """The prompts a server that says it has some lists (one that fails to list them offers none)."""
    try:
        listed = await session.list_prompts()
    except Exception:
        return []
    return [
        ListedPrompt(p.name, p.description or "", tuple(a.name for a in (p.arguments or []))) for p in listed.prompts
    ]


def render(result: Any) -> str:
    """A tool result as text: text as it is, an image or other content as a one-line note."""
    parts: list[str] = []
    for block in getattr(result, "content", []) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            mime = getattr(block, "mimeType", None) or getattr(block, "mime_type", None) or "?"
            parts.append(f"[{kind} ({mime}, {len(getattr(block, 'data', '') or '') * 3 // 4} bytes) not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {getattr(block, 'uri', '?')}]")
        elif kind == "resource":
            inner = getattr(block, "resource", None)
            text = getattr(inner, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {getattr(inner, 'uri', '?')} not shown]")
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    structured = getattr(result, "structuredContent", None) or getattr(result, "structured_content", None)
    if not parts and structured is not None:
        import json

        parts.append(json.dumps(structured, ensure_ascii=False))
    return "\n".join(parts) or "(no output)"


def _reason(exc: BaseException) -> str:
    """One line saying why, from the innermost error of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {shlex.quote(exc.filename or text)}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
