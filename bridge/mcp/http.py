"""The MCP server on the bridge's own HTTP port: streamable HTTP at ``/mcp``.

Details: docs/modules.md, ``bridge.mcp.http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web

from bridge import jsonlimits
from bridge.api.bearer import token_of
from bridge.api.http import (
    SERVICE_KEY,
    ApiHost,
    check_json_content_type,
    json_limits,
    read_body,
)
from bridge.api.openapi import add_route
from bridge.auth.tokens import AgentToken
from bridge.limits import MCP_BOUND, MCP_SESSION_IDLE_S, MCP_SESSIONS

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from bridge.mcp.server import BridgeMcpServer

_LOG = logging.getLogger(__name__)
# The SDK logs every session opened and closed at INFO: one line per client request,
# which any token holder could turn into a flood. Its warnings and errors still show.
SDK_CHATTY_LOGGERS = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http")

PATH = "/mcp"
COMPACT_PATH = "/mcp/compact"
DISCONNECT_POLL_S = 1.0
SHUTDOWN_S = 5.0
SESSION_HEADER = "mcp-session-id"
_SEAT = "seat:"  # a session being opened, counted before it has an id

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def _wire(text: str) -> bytes:
    """Return a raw path or query as bytes (ASCII once percent-encoded, as HTTP sends it)."""
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        return quote(text, safe="/?&=%:@!$'()*+,;~-._").encode("ascii", "replace")


def _scope(request: web.Request, token: AgentToken) -> dict[str, Any]:
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    from bridge.mcp.server import TOKEN_STATE_KEY

    peer = request.transport.get_extra_info("peername") if request.transport else None
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    user = AuthenticatedUser(
        AccessToken(
            token=token.signature,
            client_id=token.id,  # the token, not the free-text agent name
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
        "raw_path": _wire(request.raw_path),
        "root_path": "",
        "query_string": _wire(request.rel_url.raw_query_string),
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
        "state": {TOKEN_STATE_KEY: token},
        "user": user,
    }


async def asgi_call(
    app: AsgiApp, request: web.Request, scope: MutableMapping[str, Any], body: bytes | None = None
) -> web.StreamResponse:
    """Run one ASGI HTTP exchange for ``request`` and return the streamed response.

    ``body`` is the request body when the caller already read it.
    """
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
            data = body if body is not None else await request.read()
            return {"type": "http.request", "body": data, "more_body": False}
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
                    response.headers.add(
                        bytes(key).decode("latin-1"), bytes(value).decode("latin-1")
                    )
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
    """Serve one streamable-HTTP MCP request (per-device profile)."""
    return await _serve(request, request.app[LAZY_KEY])


async def handle_compact(request: web.Request) -> web.StreamResponse:
    """Serve one streamable-HTTP MCP request of the compact profile."""
    return await _serve(request, request.app[COMPACT_LAZY_KEY])


async def _serve(request: web.Request, lazy: _LazyMcp) -> web.StreamResponse:
    token = token_of(request)
    manager = await lazy.manager()
    body: bytes | None = None
    messages = 1  # a GET (the event stream) or a DELETE (end the session)
    if request.method == "POST":
        # The boundary's one rule before the SDK parses: size, depth, strings, numbers.
        check_json_content_type(request)
        limits = json_limits(request)
        body = await read_body(request, limits.max_bytes)
        messages = _uncharged_messages(jsonlimits.loads(body, limits))
    # Rate limits apply to every route: each JSON-RPC request or notification takes one
    # call from the token's limit, except ``tools/call``, which the pipeline charges
    # itself (once per call, whatever the face).
    runtime = lazy.service.invocation  # running: the bearer check above needed it
    if runtime is not None:
        for _ in range(messages):
            runtime.invoker.charge(token)
    if request.method != "POST" or SESSION_HEADER in request.headers:
        return await asgi_call(manager.handle_request, request, _scope(request, token), body)
    # A POST without a session id opens a session: bounded per token and per node.
    seat = lazy.sessions.reserve(manager, token.id)
    try:
        response = await asgi_call(manager.handle_request, request, _scope(request, token), body)
    except BaseException:
        lazy.sessions.release(seat)
        raise
    lazy.sessions.settle(
        seat, response.headers.get(SESSION_HEADER) if response.status < 400 else None
    )
    return response


def _uncharged_messages(doc: Any) -> int:
    """Return how many JSON-RPC messages in ``doc`` the pipeline does not charge.

    That is every request or notification (one or a batch) but ``tools/call``; a reply
    carries no method.
    """
    batch = doc if isinstance(doc, list) else [doc]
    return sum(
        1
        for m in batch
        if isinstance(m, dict) and "method" in m and m.get("method") != "tools/call"
    )


class _SessionOwners:
    """Which token opened each MCP session (to bound sessions per token).

    One table for both profiles (per-device and compact): a token's sessions are
    counted together, whichever path opened them.
    """

    def __init__(self) -> None:
        # session id (or seat) -> (token id, the manager that holds the session)
        self._owners: dict[str, tuple[str, int]] = {}

    def reserve(self, manager: StreamableHTTPSessionManager, token_id: str) -> str:
        """Hold a seat for a session ``token_id`` is opening; raise past the bounds."""
        # The SDK has no public view of its open sessions (they end by DELETE or idle
        # timeout inside it); its table is only read here, to forget ended ones.
        live = getattr(manager, "_server_instances", None)
        if live is not None:
            self._owners = {
                sid: owner
                for sid, owner in self._owners.items()
                if owner[1] != id(manager) or sid in live or sid.startswith(_SEAT)
            }
        MCP_BOUND.check([tid for tid, _ in self._owners.values()], token_id)
        seat = f"{_SEAT}{uuid.uuid4().hex}"
        self._owners[seat] = (token_id, id(manager))
        return seat

    def settle(self, seat: str, session_id: str | None) -> None:
        """Turn a seat into the session it opened (or free it when none was opened)."""
        owner = self._owners.pop(seat, None)
        if session_id and owner is not None:
            self._owners[session_id] = owner

    def release(self, seat: str) -> None:
        """Free a seat whose opening request failed."""
        self._owners.pop(seat, None)


class _LazyMcp:
    """The MCP server and its session manager: built and run from the first request on."""

    def __init__(self, service: ApiHost, *, compact: bool = False) -> None:
        self.service = service
        self.compact = compact
        self.server: BridgeMcpServer | None = None
        self._manager: StreamableHTTPSessionManager | None = None
        self._started = asyncio.Event()
        self.stopping = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.sessions = _SessionOwners()

    async def manager(self) -> StreamableHTTPSessionManager:
        """Return the running session manager, importing and starting it the first time."""
        if self.stopping.is_set():
            raise web.HTTPServiceUnavailable(reason="the MCP server is shutting down")
        if self.task is None:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from bridge.mcp.server import BridgeMcpServer

            service = self.service
            profile = None
            if self.compact:
                # A few capability tools standing for the per-device ones, for clients
                # that pay per listed tool (bridge.matter.sync.compact).
                from bridge.matter import compact_profile

                profile = compact_profile(service.registry, lambda: service.matter)
            server = BridgeMcpServer(
                service.registry, lambda: service.invocation, service.events, compact=profile
            )
            # Plain JSON answers to POSTs (no per-call SSE stream; this server sends no
            # progress or server-to-client requests): handshake-era calls p50 6.7 -> 3.9
            # ms. Listen streams and the session's GET stream stay SSE.
            # Sessions bounded per node and closed after MCP_SESSION_IDLE_S without a
            # request (the SDK's defaults, 10,000 for 30 minutes, let one token hold them).
            manager = StreamableHTTPSessionManager(
                app=server.server,
                json_response=True,
                session_idle_timeout=MCP_SESSION_IDLE_S,
                max_sessions=MCP_SESSIONS,
            )
            server.start()
            self.server, self._manager = server, manager

            async def run() -> None:
                async with manager.run():
                    self._started.set()
                    await self.stopping.wait()

            self.task = asyncio.get_running_loop().create_task(run())
        task = self.task
        waiter = asyncio.ensure_future(self._started.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not self._started.is_set():
            task.result()  # raises why the session manager did not start
        assert self._manager is not None  # noqa: S101 - set with the task
        return self._manager

    async def ctx(self, app: web.Application) -> AsyncIterator[None]:
        """Stop the server (if it was ever started) when the app is cleaned up."""
        try:
            yield
        finally:
            await self.shutdown(app)
            if self.server is not None:
                await self.server.stop()

    async def shutdown(self, app: web.Application) -> None:
        """End every MCP session and stream so open responses finish (idempotent)."""
        self.stopping.set()
        if self.server is not None:
            self.server.notifier.listen.close()
        if self.task is None or self.task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self.task), SHUTDOWN_S)
        except TimeoutError:
            _LOG.warning("MCP session manager did not stop within %s s", SHUTDOWN_S)


LAZY_KEY: web.AppKey[_LazyMcp] = web.AppKey("mcp_lazy", _LazyMcp)
COMPACT_LAZY_KEY: web.AppKey[_LazyMcp] = web.AppKey("mcp_compact_lazy", _LazyMcp)


def setup(app: web.Application) -> None:
    """Add ``/mcp`` and the MCP server's lifecycle to the bridge's app."""
    for name in SDK_CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    sessions = _SessionOwners()
    for key, compact in ((LAZY_KEY, False), (COMPACT_LAZY_KEY, True)):
        lifecycle = _LazyMcp(app[SERVICE_KEY], compact=compact)
        lifecycle.sessions = sessions
        app[key] = lifecycle
        app.cleanup_ctx.append(lifecycle.ctx)
        # Before aiohttp waits for open handlers: end the sessions whose streams are open.
        app.on_shutdown.append(lifecycle.shutdown)
    responses = {
        "200": "JSON-RPC response (application/json or an text/event-stream)",
        "202": "notification or response accepted",
        "401": "missing or invalid token",
        "404": "unknown or expired MCP session",
    }
    add_route(
        app,
        "POST",
        PATH,
        handle,
        operation_id="mcpPost",
        summary="MCP streamable HTTP: send a JSON-RPC message (bearer token)",
        tags=["mcp"],
        responses=responses,
    )
    add_route(
        app,
        "GET",
        PATH,
        handle,
        operation_id="mcpGet",
        summary="MCP streamable HTTP: the session's server-to-client stream",
        tags=["mcp"],
        responses=responses,
    )
    add_route(
        app,
        "DELETE",
        PATH,
        handle,
        operation_id="mcpDelete",
        summary="MCP streamable HTTP: end a session",
        tags=["mcp"],
        responses=responses,
    )
    for method in ("POST", "GET", "DELETE"):
        add_route(
            app,
            method,
            COMPACT_PATH,
            handle_compact,
            operation_id=f"mcpCompact{method.title()}",
            summary=f"MCP streamable HTTP, compact profile ({method})",
            tags=["mcp"],
            responses=responses,
        )
