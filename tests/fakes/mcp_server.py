"""A real MCP server on the official SDK, for end-to-end tests of arnes's MCP client.

`python mcp_server.py stdio` serves on stdin/stdout; `python mcp_server.py http` binds
127.0.0.1 on a free port, prints the port on stdout once it listens (connections queue from
then on, so a test needs no sleep), and serves streamable HTTP at /mcp. `exit` quits at once;
`complain` writes 30 lines on stderr, the last naming what it lacks, and quits. Words after the
mode are the server's arguments (the `args` tool shows them).
"""

from __future__ import annotations

import base64
import os
import socket
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, TextContent

server = MCPServer("fake")
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> str:
    return f"sum={a + b}"


@server.tool(description="Fail on purpose.")
def fail(why: str) -> str:
    raise ValueError(f"failed because {why}")


@server.tool(description="A picture and a caption.")
def picture() -> list[TextContent | ImageContent]:
    return [TextContent(type="text", text="caption"), ImageContent(type="image", data=PIXEL, mimeType="image/png")]


@server.tool(description="Try to reach the network and the home folder from inside the server.")
def probe() -> str:
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2).close()
        net = "network reachable"
    except OSError as exc:
        net = f"network blocked ({exc.__class__.__name__})"
    return f"{net}; HOME_SECRET={os.environ.get('HOME_SECRET', '<unset>')}"


@server.tool(description="Where the server runs: its folder, ARNES_TEST_VALUE and ARNES_PROJECT_DIR.")
def where() -> str:
    value, project = os.environ.get("ARNES_TEST_VALUE", "<unset>"), os.environ.get("ARNES_PROJECT_DIR", "<unset>")
    return f"cwd={os.getcwd()} value={value} project={project}"


@server.tool(description="The words the server was started with after its mode, and CLAUDE_PLUGIN_ROOT when set.")
def args() -> str:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return " ".join(sys.argv[2:]) + (f" root={root}" if root is not None else "")


@server.tool(description="Answer a permission prompt: allow any call but Bash; deny Bash, saying why.")
def approve(tool_name: str, input: dict[str, object], tool_use_id: str = "") -> str:
    import json

    if tool_name == "Bash":
        return json.dumps({"behavior": "deny", "message": f"no shell from the bot ({input.get('command')})"})
    if input.get("file_path") == "changed.py":
        return json.dumps({"behavior": "allow", "updatedInput": {**input, "file_path": "elsewhere.py"}})
    return json.dumps({"behavior": "allow", "updatedInput": input})


@server.resource("notes://readme", description="The project's notes.", mime_type="text/plain")
def readme() -> str:
    return "The release is on Friday."


@server.resource("notes://logo", description="A picture.", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n"


@server.prompt(description="Review a pull request.")
def review(number: str, focus: str = "everything") -> str:
    return f"Review pull request #{number}, looking at {focus}."


INSTANCE = os.urandom(8).hex()  # a pid would not do: in the sandbox's own pid namespace it is always the same


@server.tool(description="This run of the server: a restarted server gives a new value.")
def instance() -> str:
    return INSTANCE


@server.tool(description="Never answer.")
async def hang() -> str:
    import anyio

    await anyio.Event().wait()  # nobody sets it
    return "unreachable"


def main() -> None:
    how = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if how == "exit":
        sys.exit(3)
    if how == "complain":
        for n in range(1, 30):
            print(f"starting step {n}", file=sys.stderr)
        print("Error: FAKE_SERVICE_URL is required (set it in the server's env)", file=sys.stderr)
        sys.exit(3)
    if how == "stdio":
        server.run("stdio")
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)  # the test reads this line: from now on connections queue
    app = server.sse_app() if how == "sse" else server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
