"""The MCP server on the bridge's own HTTP port: streamable HTTP at ``/mcp``.

``setup(app)`` (a route module of ``bridge.api.app``) adds ``POST|GET|DELETE /mcp``
and runs the SDK's ``StreamableHTTPSessionManager`` for the app's lifetime. The SDK's
transport is ASGI; ``asgi_call`` is a small adapter that hands it one aiohttp request
(scope, ``receive`` with the body and then the disconnect, ``send`` streaming the
response) so no second web server or port is needed. The bearer token is checked by
the API's auth middleware like on every route (401 with the standard error JSON when
missing or bad); the verified token travels in the ASGI scope (``state`` and ``user``,
so a session can only be used with the agent that opened it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from bridge.api.app import SERVICE_KEY
from bridge.api.auth import token_of
from bridge.api.openapi import add_route
from bridge.auth.tokens import AgentToken
from bridge.matter.compact import CompactProfile
from bridge.mcp.server import TOKEN_STATE_KEY, BridgeMcpServer

_LOG = logging.getLogger(__name__)

PATH = "/mcp"
COMPACT_PATH = "/mcp/compact"
DISCONNECT_POLL_S = 1.0
SHUTDOWN_S = 5.0

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

MCP_KEY: web.AppKey[BridgeMcpServer] = web.AppKey("mcp_server", BridgeMcpServer)
MANAGER_KEY: web.AppKey[StreamableHTTPSessionManager] = web.AppKey(
    "mcp_session_manager", StreamableHTTPSessionManager
)
COMPACT_MCP_KEY: web.AppKey[BridgeMcpServer] = web.AppKey("mcp_compact_server", BridgeMcpServer)
COMPACT_MANAGER_KEY: web.AppKey[StreamableHTTPSessionManager] = web.AppKey(
    "mcp_compact_session_manager", StreamableHTTPSessionManager
)


def _scope(request: web.Request, token: AgentToken) -> dict[str, Any]:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    user = AuthenticatedUser(
        AccessToken(
            token=token.signature,
            client_id=token.agent_id,
            scopes=[],
            claims={"iss": token.issuer},
        )
    )
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.encode("latin-1"),
        "root_path": "",
        "query_string": request.query_string.encode("latin-1"),
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
        "state": {TOKEN_STATE_KEY: token},
        "user": user,
    }


async def asgi_call(
    app: AsgiApp, request: web.Request, scope: MutableMapping[str, Any]
) -> web.StreamResponse:
    """Run one ASGI HTTP exchange for ``request`` and return the streamed response."""
    finished = asyncio.Event()
    response: web.StreamResponse | None = None
    body_given = False

    def gone() -> bool:
        transport = request.transport
        return finished.is_set() or transport is None or transport.is_closing()

    async def receive() -> Message:
        nonlocal body_given
        if not body_given:
            body_given = True
            return {"type": "http.request", "body": await request.read(), "more_body": False}
        while not gone():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(finished.wait(), DISCONNECT_POLL_S)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal response
        if finished.is_set():
            return
        kind = message["type"]
        try:
            if kind == "http.response.start":
                response = web.StreamResponse(status=int(message["status"]))
                for key, value in message.get("headers", ()):
                    response.headers.add(bytes(key).decode("latin-1"),
                                         bytes(value).decode("latin-1"))  # fmt: skip
                await response.prepare(request)
            elif kind == "http.response.body" and response is not None:
                body = bytes(message.get("body", b""))
                if body:
                    await response.write(body)
                if not message.get("more_body", False):
                    await response.write_eof()
                    finished.set()
        except (ConnectionError, RuntimeError) as err:  # the client went away
            _LOG.debug("MCP response to %s ended early: %s", request.remote, err)
            finished.set()

    try:
        await app(scope, receive, send)
    except Exception:
        if response is None:
            raise
        _LOG.exception("MCP transport failed after the response started")
    finally:
        finished.set()
    if response is None:
        raise web.HTTPInternalServerError(reason="the MCP transport sent no response")
    return response


async def handle(request: web.Request) -> web.StreamResponse:
    """Serve one streamable-HTTP MCP request."""
    token = token_of(request)
    manager = request.app[MANAGER_KEY]
    return await asgi_call(manager.handle_request, request, _scope(request, token))


async def handle_compact(request: web.Request) -> web.StreamResponse:
    """Serve one streamable-HTTP MCP request of the compact profile."""
    token = token_of(request)
    manager = request.app[COMPACT_MANAGER_KEY]
    return await asgi_call(manager.handle_request, request, _scope(request, token))


class _Lifecycle:
    """Run the session manager from app start-up until shutdown begins."""

    def __init__(
        self,
        server_key: web.AppKey[BridgeMcpServer] = MCP_KEY,
        manager_key: web.AppKey[StreamableHTTPSessionManager] = MANAGER_KEY,
    ) -> None:
        self.stopping = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.server_key = server_key
        self.manager_key = manager_key

    async def ctx(self, app: web.Application) -> AsyncIterator[None]:
        server = app[self.server_key]
        manager = app[self.manager_key]
        server.start()
        started = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await self.stopping.wait()

        self.task = asyncio.get_running_loop().create_task(run())
        waiter = asyncio.ensure_future(started.wait())
        await asyncio.wait({self.task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if self.task.done():
            waiter.cancel()
            self.task.result()  # raises why the session manager did not start
        try:
            yield
        finally:
            await self.shutdown(app)
            await server.stop()

    async def shutdown(self, app: web.Application) -> None:
        """End every MCP session and stream so open responses finish (idempotent)."""
        app[self.server_key].notifier.listen.close()
        self.stopping.set()
        if self.task is None or self.task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self.task), SHUTDOWN_S)
        except TimeoutError:
            _LOG.warning("MCP session manager did not stop within %s s", SHUTDOWN_S)


def setup(app: web.Application) -> None:
    """Add ``/mcp`` and the MCP server's lifecycle to the bridge's app."""
    service = app[SERVICE_KEY]
    server = BridgeMcpServer(service.registry, lambda: service.invocation, service.events)
    app[MCP_KEY] = server
    # Plain JSON answers to POSTs (no per-call SSE stream; this server sends no progress
    # or server-to-client requests): handshake-era calls p50 6.7 -> 3.9 ms. Listen
    # streams and the session's GET stream stay SSE.
    app[MANAGER_KEY] = StreamableHTTPSessionManager(app=server.server, json_response=True)
    # The compact profile (bridge.matter.compact) on its own endpoint: a few capability
    # tools standing for the per-device ones, for clients that pay per listed tool.
    compact = BridgeMcpServer(
        service.registry, lambda: service.invocation, service.events,
        compact=CompactProfile(
            service.registry, lambda: service.matter.bridge if service.matter else None),
    )  # fmt: skip
    app[COMPACT_MCP_KEY] = compact
    app[COMPACT_MANAGER_KEY] = StreamableHTTPSessionManager(
        app=compact.server, json_response=True
    )
    for lifecycle in (_Lifecycle(), _Lifecycle(COMPACT_MCP_KEY, COMPACT_MANAGER_KEY)):
        app.cleanup_ctx.append(lifecycle.ctx)
        # Before aiohttp waits for open handlers: end the sessions whose streams are open.
        app.on_shutdown.append(lifecycle.shutdown)
    responses = {
        "200": "JSON-RPC response (application/json or an text/event-stream)",
        "202": "notification or response accepted",
        "401": "missing or invalid token",
        "404": "unknown or expired MCP session",
    }
    add_route(app, "POST", PATH, handle, operation_id="mcpPost",
              summary="MCP streamable HTTP: send a JSON-RPC message (bearer token)",
              tags=["mcp"], responses=responses)  # fmt: skip
    add_route(app, "GET", PATH, handle, operation_id="mcpGet",
              summary="MCP streamable HTTP: the session's server-to-client stream",
              tags=["mcp"], responses=responses)  # fmt: skip
    add_route(app, "DELETE", PATH, handle, operation_id="mcpDelete",
              summary="MCP streamable HTTP: end a session", tags=["mcp"],
              responses=responses)  # fmt: skip
    for method in ("POST", "GET", "DELETE"):
        add_route(app, method, COMPACT_PATH, handle_compact,
                  operation_id=f"mcpCompact{method.title()}",
                  summary=f"MCP streamable HTTP, compact profile ({method})", tags=["mcp"],
                  responses=responses)  # fmt: skip
