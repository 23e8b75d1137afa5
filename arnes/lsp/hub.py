"""A session's language servers (Claude Code plugins' `lspServers`): started on first use, in the
sandbox, kept in step with the files the session reads and writes.

A server starts when a file of one of its suffixes is first asked about (the LSP tool) or
written (Write, Edit): `initialize` with the workspace as its root, then each file is opened
with its text and changed as a whole after each write. What the server publishes about a file
(`textDocument/publishDiagnostics`) is kept; after a write, arnes waits for the server's word on
that version (bounded) and adds it to the tool's result, as Claude Code shows diagnostics after
an edit. A server that fails to start says why once (its stderr tail) and is not tried again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlparse

from arnes.host.stderrtail import stderr_tail
from arnes.lsp.settings import LspEntry
from arnes.lsp.wire import Connection, LspError
from arnes.sandbox.base import Sandbox, SandboxMode, SandboxSpec

SandboxFor = Callable[[LspEntry], Sandbox]
# How long a write waits for the server's diagnostics of the new text (ARNES_LSP_WAIT overrides).
DIAGNOSTICS_WAIT = 3.0
REQUEST_TIMEOUT = 30.0
MOST_BYTES = 4 << 20  # a larger file is not sent to a server (nor asked about)
SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def file_text(path: Path) -> str | None:
    """The text of a regular file (read through no link, never blocking on a FIFO), or None: not
    a regular file, unreadable, or over MOST_BYTES."""
    from arnes.host.nofollow import read_regular

    try:
        data, _ = read_regular(path, MOST_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > MOST_BYTES else data.decode("utf-8", errors="replace")


def uri_of(path: Path) -> str:
    return path.absolute().as_uri()


def path_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


@dataclass
class _Published:
    version: int | None
    items: list[dict[str, Any]]
    serial: int


@dataclass
class _Server:
    entry: LspEntry
    process: subprocess.Popen[bytes] | None = None
    wire: Connection | None = None
    failed: str | None = None
    errlog: IO[bytes] | None = None
    box: Sandbox | None = None
    versions: dict[str, int] = field(default_factory=dict)  # uri -> the version last sent
    published: dict[str, _Published] = field(default_factory=dict)
    serial: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)


class LspHub:
    def __init__(self, entries: list[LspEntry], workspace: Path, sandbox_for: SandboxFor, cwd: Callable[[], Path]):
        self.workspace = workspace
        self._servers = [_Server(e) for e in entries if e.trusted]
        self._sandbox_for = sandbox_for
        self._cwd = cwd
        self._lock = threading.Lock()
        self.notes: list[str] = []  # failures to say once (the session shows them as warnings)
        wait = os.environ.get("ARNES_LSP_WAIT", "")
        self.wait = float(wait) if wait.replace(".", "", 1).isdigit() else DIAGNOSTICS_WAIT

    # -- which server -------------------------------------------------------------------------
    def server_for(self, path: Path) -> _Server | None:
        suffix = path.suffix.lower()
        return next((s for s in self._servers if suffix in s.entry.config.extensions), None)

    def handles(self, path: Path) -> bool:
        return self.server_for(path) is not None

    def names(self) -> list[str]:
        return [s.entry.name for s in self._servers]

    # -- talking to it ------------------------------------------------------------------------
    def request(self, path: Path, method: str, params: dict[str, Any], text: str) -> Any:
        """`method` about `path` (whose current `text` the server is sent first)."""
        server = self._ready(path)
        self._sync(server, path, text)
        assert server.wire is not None
        return server.wire.request(method, params, REQUEST_TIMEOUT)

    def workspace_request(self, method: str, params: dict[str, Any]) -> list[tuple[str, Any]]:
        """`method` asked of every server that has started, or can: (server name, result) each."""
        out: list[tuple[str, Any]] = []
        for server in self._servers:
            try:
                self._start(server)
                assert server.wire is not None
                out.append((server.entry.name, server.wire.request(method, params, REQUEST_TIMEOUT)))
            except LspError as exc:
                out.append((server.entry.name, exc))
        return out

    def after_write(self, path: Path, real: Path) -> str:
        """The server's diagnostics of the file as just written (at `real`), for the tool's result
        ("" when it has none to say, no server serves the file, or it did not answer in time)."""
        server, text = self.server_for(path), file_text(real)
        if server is None or text is None:
            return ""
        with server.changed:
            before = server.serial
        try:
            self._start(server)
            version = self._sync(server, path, text)
        except LspError as exc:
            return f"\n(language server {server.entry.name}: {exc})" if server.failed is None else ""
        uri = uri_of(path)
        with server.changed:
            server.changed.wait_for(lambda: _answers(server.published.get(uri), version, before), timeout=self.wait)
            got = server.published.get(uri)
        if got is None or not _answers(got, version, before) or not got.items:
            return ""
        return "\n" + render_diagnostics(path, self.workspace, got.items, server.entry.name)

    def close(self) -> None:
        for server in self._servers:
            wire, process = server.wire, server.process
            if wire is not None and wire.closed is None:
                with contextlib.suppress(LspError):
                    wire.request("shutdown", None, 5)
                    wire.notify("exit", None)
            if process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                    process.wait(5)
                if process.poll() is None:
                    process.kill()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.wait(5)
            if server.errlog is not None:
                server.errlog.close()
            if server.box is not None:
                with contextlib.suppress(OSError):
                    server.box.close()

    # -- inside -------------------------------------------------------------------------------
    def _ready(self, path: Path) -> _Server:
        server = self.server_for(path)
        if server is None:
            raise LspError(f"no language server is set up for {path.suffix or 'files without a suffix'}")
        self._start(server)
        return server

    def _sync(self, server: _Server, path: Path, text: str) -> int:
        """Send `text` as the file's content (open, or a whole change); the version sent."""
        assert server.wire is not None
        uri = uri_of(path)
        with self._lock:
            version = server.versions.get(uri, 0) + 1
            first = version == 1
            server.versions[uri] = version
        if first:
            language = server.entry.config.extensions.get(path.suffix.lower(), "")
            item = {"uri": uri, "languageId": language, "version": version, "text": text}
            server.wire.notify("textDocument/didOpen", {"textDocument": item})
        else:
            server.wire.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
            )
            server.wire.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        return version

    def _start(self, server: _Server) -> None:
        with self._lock:
            if server.failed is not None:
                raise LspError(server.failed)
            if server.wire is not None:
                if server.wire.closed is not None:
                    server.failed = f"it stopped: {server.wire.closed}{self._tail(server)}"
                    raise LspError(server.failed)
                return
            try:
                self._launch(server)
            except (OSError, ValueError, LspError) as exc:
                server.failed = f"language server {server.entry.name} did not start: {exc}{self._tail(server)}"
                self.notes.append(server.failed)
                raise LspError(server.failed) from None

    def _launch(self, server: _Server) -> None:
        cfg = server.entry.config
        env = {**cfg.env, "CLAUDE_PLUGIN_ROOT": str(server.entry.root), "CLAUDE_PROJECT_DIR": str(self.workspace)}
        box = self._sandbox_for(server.entry)
        cwd = self._cwd()
        confined = box.wrap([cfg.command, *cfg.args], cwd, env, lasting=True)
        server.box = box
        server.errlog = tempfile.TemporaryFile()  # noqa: SIM115  closed with the server
        try:
            server.process = subprocess.Popen(
                confined.argv,
                cwd=cwd,
                env=confined.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=server.errlog,
                pass_fds=confined.pass_fds,
                start_new_session=True,
            )
        finally:
            confined.close()
        assert server.process.stdout is not None and server.process.stdin is not None
        server.wire = Connection(
            server.process.stdout,
            server.process.stdin,
            lambda method, params: self._notified(server, method, params),
            lambda method, params: _answer(server, method, params),
        )
        root = uri_of(self.workspace)
        server.wire.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root,
                "rootPath": str(self.workspace),
                "workspaceFolders": [{"uri": root, "name": self.workspace.name}],
                "initializationOptions": cfg.initialization_options,
                "capabilities": CAPABILITIES,
                "clientInfo": {"name": "arnes"},
            },
            cfg.startup_ms / 1000,
        )
        server.wire.notify("initialized", {})
        if cfg.settings is not None:
            server.wire.notify("workspace/didChangeConfiguration", {"settings": cfg.settings})

    def _notified(self, server: _Server, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics" or not isinstance(params, dict):
            return
        uri, items = params.get("uri"), params.get("diagnostics")
        if not isinstance(uri, str) or not isinstance(items, list):
            return
        version = params.get("version")
        with server.changed:
            server.serial += 1
            server.published[uri] = _Published(
                version if isinstance(version, int) else None,
                [d for d in items if isinstance(d, dict)],
                server.serial,
            )
            server.changed.notify_all()

    def _tail(self, server: _Server) -> str:
        lines = stderr_tail(server.errlog)
        return f" (its last words: {' | '.join(lines)})" if lines else ""


def _answers(published: _Published | None, version: int, before: int) -> bool:
    """Whether what the server published speaks of `version` of the file (a server that does not
    say which version it judged: whether it published since the change was sent)."""
    if published is None:
        return False
    return published.version >= version if published.version is not None else published.serial > before


def _answer(server: _Server, method: str, params: Any) -> Any:
    """The server's own requests: its configuration from the plugin's `settings`, nothing else."""
    if method == "workspace/configuration":
        items = params.get("items", []) if isinstance(params, dict) else []
        settings = server.entry.config.settings
        return [_section(settings, i.get("section") if isinstance(i, dict) else None) for i in items]
    if method == "workspace/workspaceFolders":
        return None
    return None  # client/registerCapability, window/workDoneProgress/create, ...: accepted


def _section(settings: Any, section: Any) -> Any:
    if not isinstance(section, str) or not section:
        return settings
    for part in section.split("."):
        if not isinstance(settings, dict):
            return None
        settings = settings.get(part)
    return settings


def render_diagnostics(path: Path, workspace: Path, items: list[dict[str, Any]], server: str) -> str:
    """The diagnostics as lines the model reads: `file:line:col: severity: message (source)`."""
    try:
        shown = path.relative_to(workspace).as_posix()
    except ValueError:
        shown = str(path)
    lines = [f"Diagnostics from {server} for {shown}:"]
    for item in items[:50]:
        start = item.get("range", {}).get("start", {}) if isinstance(item.get("range"), dict) else {}
        line, col = int(start.get("line", 0)) + 1, int(start.get("character", 0)) + 1
        severity = SEVERITY.get(item.get("severity", 1), "error")
        source = f" ({item['source']})" if isinstance(item.get("source"), str) else ""
        message = " ".join(str(item.get("message", "")).split())
        lines.append(f"  {shown}:{line}:{col}: {severity}: {message}{source}")
    if len(items) > 50:
        lines.append(f"  ... and {len(items) - 50} more")
    return "\n".join(lines)


CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
        "hover": {"contentFormat": ["plaintext", "markdown"]},
        "definition": {"linkSupport": False},
        "implementation": {"linkSupport": False},
        "references": {},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "callHierarchy": {},
    },
    "workspace": {"symbol": {}, "configuration": True, "workspaceFolders": True},
    "window": {"workDoneProgress": False},
}


def make_lsp_hub(entries: list[LspEntry], workspace: Path, spec: SandboxSpec, mode: SandboxMode) -> LspHub | None:
    """The hub of a session's language servers, or None without any. Each runs in the session's
    sandbox (never without one where one exists: a plugin's server is a program like any), its
    plugin's folder readable there, starting in arnes's empty folder, not the workspace."""
    entries = [e for e in entries if e.trusted]  # a project's waits for trust
    if not entries:
        return None
    from arnes.sandbox.choose import choose_sandbox
    from arnes.sandbox.placeholders import neutral_folder

    def sandbox_for(entry: LspEntry) -> Sandbox:
        return choose_sandbox(mode, dataclasses.replace(spec, read_paths=(*spec.read_paths, entry.root)))

    return LspHub(entries, workspace, sandbox_for, neutral_folder)
