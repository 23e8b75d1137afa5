"""An in-process MCP server of the Agent SDK that started arnes (`create_sdk_mcp_server`), reached
through the SDK's control channel as Claude Code reaches it.

The SDK names such a server in `--mcp-config` as `{"type": "sdk", "name": ...}`: its tools are
functions in the SDK's own program. Each JSON-RPC message arnes's MCP client sends goes to the SDK
as a control request (`mcp_message`, the server's name and the message); the SDK answers a request
with its JSON-RPC response and acknowledges a notification. `sdk_streams` gives the client the pair
of streams every MCP transport gives, so the `mcp` SDK's own `ClientSession` speaks to the server
as it speaks to a stdio or HTTP one; nothing of the protocol is written here.

Order holds where MCP needs it: a notification is delivered (acknowledged) before the next message
goes, so `notifications/initialized` reaches the server before the first `tools/list`; requests
then run side by side, each waiting for its own answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

Json = dict[str, Any]
# (server name, a JSON-RPC message, seconds to wait) -> the SDK's JSON-RPC answer. Blocking: it
# runs on a worker thread. Raises when the SDK does not answer (its error, a time-out, stdin closed).
Relay = Callable[[str, Json, float], Json]
Streams = tuple["MemoryObjectReceiveStream[SessionMessage | Exception]", "MemoryObjectSendStream[SessionMessage]"]

NO_CHANNEL = (
    "an in-process SDK server (create_sdk_mcp_server) answers only through the Agent SDK that started "
    "arnes (--input-format stream-json)"
)


@contextlib.asynccontextmanager
async def sdk_streams(server: str, relay: Relay, timeout: float) -> AsyncIterator[Streams]:
    """The (read, write) streams of a client session with the SDK's server `server`."""
    import anyio
    import anyio.abc
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCRequest, jsonrpc_message_adapter

    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](16)

    async def send(message: Json) -> Json:
        return await anyio.to_thread.run_sync(relay, server, message, timeout, abandon_on_cancel=True)

    async def answer(message: Json) -> None:
        try:
            reply = await send(message)
            parsed = jsonrpc_message_adapter.validate_python(reply, by_name=False)
        except Exception as exc:  # the SDK refused, went away or sent no JSON-RPC: this request fails
            reply = {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32603, "message": str(exc)}}
            parsed = jsonrpc_message_adapter.validate_python(reply, by_name=False)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_client.send(SessionMessage(parsed))

    async def pump(tasks: anyio.abc.TaskGroup) -> None:
        async with from_client:
            async for sent in from_client:
                message: Json = sent.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                if isinstance(sent.message, JSONRPCRequest):
                    tasks.start_soon(answer, message)
                else:  # a notification (or a response): delivered before the next message goes
                    with contextlib.suppress(Exception):
                        await send(message)

    async with to_client, anyio.create_task_group() as tasks:
        tasks.start_soon(pump, tasks)
        try:
            yield client_reads, client_writes
        finally:
            tasks.cancel_scope.cancel()
