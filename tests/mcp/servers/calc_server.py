"""A small real MCP server for the McpHub tests, written with the SDK's MCPServer.

``python calc_server.py stdio`` or ``python calc_server.py http PORT`` (127.0.0.1 only).
Tools: ``add(a, b)`` (structured output), ``shout(text)``, ``fail(reason)`` (raises),
``wipe()`` (annotated destructive), and ``odd tool!`` (a name our rules must rewrite).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer(name="calc")


class Sum(BaseModel):
    total: int


@server.tool(description="Add two integers.", annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> Sum:
    return Sum(total=a + b)


@server.tool(description="Return the text in upper case.")
def shout(text: str) -> str:
    return text.upper()


@server.tool(description="Always fails with the given reason.")
def fail(reason: str) -> str:
    raise ValueError(f"failed on purpose: {reason}")


@server.tool(description="Delete everything.", annotations=ToolAnnotations(destructive_hint=True))
def wipe() -> str:
    return "wiped"


@server.tool(name="odd tool!", description="A tool whose name needs rewriting.")
def odd() -> str:
    return "odd"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
