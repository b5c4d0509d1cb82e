"""The stdio MCP server of ``atmosphere-bridge mcp``: a running bridge's tools for desktop agents.

Details: docs/modules.md, ``bridge.mcp.proxy``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge import __version__
from bridge.errors import InternalError
from bridge.mcp.server import SERVER_NAME, ChangeNotifier, ToolServer, error_result

_LOG = logging.getLogger(__name__)

RELISTEN_MIN_S = 0.5
RELISTEN_MAX_S = 30.0


def mcp_endpoint(url: str) -> str:
    """Return the MCP endpoint of a bridge given its API base URL (or the endpoint itself)."""
    base = url.rstrip("/")
    return base if base.endswith("/mcp") else f"{base}/mcp"


class StdioProxy:
    """Relay an MCP server on stdio to the bridge's streamable-HTTP MCP endpoint."""

    def __init__(self, endpoint: str, upstream: Client) -> None:
        self.endpoint = endpoint
        self.upstream = upstream
        self.notifier = ChangeNotifier()
        self.server: Server[Any] = ToolServer(
            SERVER_NAME,
            version=__version__,
            title="Atmosphere Matter Bridge",
            instructions=upstream.instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.notifier.listen,
        )
        self.server.middleware = []

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.notifier.remember(ctx)
        cursor = params.cursor if params is not None else None
        listing = await self.upstream.list_tools(cursor=cursor, cache_mode="refresh")
        return types.ListToolsResult(
            tools=listing.tools, next_cursor=listing.next_cursor, ttl_ms=0, cache_scope="private"
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self.notifier.remember(ctx)
        try:
            result = await self.upstream.call_tool(params.name, dict(params.arguments or {}))
        except Exception as err:  # the bridge went away or answered garbage
            _LOG.warning("call of %s through %s failed: %s", params.name, self.endpoint, err)
            return error_result(
                InternalError(
                    f"the bridge at {self.endpoint} did not answer the call: {err}",
                    {"endpoint": self.endpoint},
                ).to_json()
            )
        return result

    async def follow_changes(self) -> None:
        """Turn the bridge's list-changed events into ours, re-listening when the stream drops."""
        delay = RELISTEN_MIN_S
        while True:
            try:
                async with self.upstream.listen(tools_list_changed=True) as sub:
                    delay = RELISTEN_MIN_S
                    async for _event in sub:
                        self.notifier.touch()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as err:
                _LOG.warning("list-changed stream from %s dropped: %s", self.endpoint, err)
            await anyio.sleep(delay)
            delay = min(delay * 2, RELISTEN_MAX_S)

    async def serve(self) -> None:
        """Serve MCP on stdin/stdout until stdin closes."""
        options = self.server.create_initialization_options()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.follow_changes)
            async with stdio_server() as (read_stream, write_stream):
                await self.server.run(read_stream, write_stream, options)
            tg.cancel_scope.cancel()
        await self.notifier.close()


async def serve_stdio(endpoint: str, token: str) -> None:
    """Connect to the bridge's MCP endpoint with ``token`` and serve it on stdio."""
    headers = {"Authorization": f"Bearer {token}"}
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        upstream = await stack.enter_async_context(
            Client(streamable_http_client(endpoint, http_client=http), cache=None)
        )
        await StdioProxy(endpoint, upstream).serve()
