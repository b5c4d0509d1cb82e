"""A persistent call channel: ``tool_invoke`` in, ``tool_response`` out, over one WebSocket.

Details: docs/modules.md, ``bridge.api.calls_ws_routes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from typing import Any

from aiohttp import WSMsgType, web

from bridge import jsonlimits
from bridge.api.bearer import token_of
from bridge.api.events_routes import SUBSCRIPTIONS_KEY
from bridge.api.http import json_limits, response_bytes, service_of
from bridge.api.openapi import add_route
from bridge.auth.tokens import AgentToken
from bridge.errors import BridgeError, InvalidRequestError, UnauthenticatedError, running
from bridge.invocation.messages import ResponseStatus, ToolRequest, ToolResponse
from bridge.invocation.pipeline import Pipeline
from bridge.jsonlimits import DEFAULT_LIMITS, JsonLimits

_LOGGER = logging.getLogger(__name__)

MAX_IN_FLIGHT = 64
MAX_DEPTH = 32
CLOSE_TOKEN_REJECTED = 4401


def parse_message(text: str, max_depth: int = MAX_DEPTH, limits: JsonLimits | None = None) -> Any:
    """Return one frame's JSON; raise ``InvalidRequestError`` for anything else.

    The frame's size is bounded by the socket (``max_msg_size``); the shared JSON reader
    (``jsonlimits``, as for HTTP bodies) bounds nesting, strings, items and numbers and
    refuses what JSON has not (NaN, lone surrogates).
    """
    try:
        return jsonlimits.loads(text, _frame_limits(limits or DEFAULT_LIMITS, max_depth))
    except InvalidRequestError as err:  # worded for a frame: "message …", not "body …"
        message = err.message
        for old in ("body ", "JSON "):
            if message.startswith(old):
                message = "message " + message[len(old) :]
        raise InvalidRequestError(message, err.details) from None


@functools.lru_cache(maxsize=16)
def _frame_limits(limits: JsonLimits, max_depth: int) -> JsonLimits:
    return dataclasses.replace(limits, max_depth=min(limits.max_depth, max_depth))


def _error_response(error: BridgeError, request_id: str, node_id: str) -> ToolResponse:
    return ToolResponse(
        request_id=request_id,
        call_id="",
        tool=None,
        status=ResponseStatus.ERROR,
        error=error.to_json(),
        duration_ms=0.0,
        node_id=node_id,
    )


class _Channel:
    """One client's socket: reads messages, runs calls, writes answers."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        runtime: Pipeline,
        raw: str,
        token: AgentToken,
        limits: JsonLimits = DEFAULT_LIMITS,
    ) -> None:
        self.ws = ws
        self.limits = limits
        self.runtime = runtime
        self.raw = raw
        self.token = token
        self.node_id = runtime.invoker.node_id
        self.slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        self.calls: set[asyncio.Task[None]] = set()
        self.send_lock = asyncio.Lock()

    async def run(self) -> None:
        expiry = asyncio.get_running_loop().create_task(self._close_at_expiry())
        try:
            async for msg in self.ws:
                if msg.type is WSMsgType.TEXT:
                    await self.slots.acquire()
                    task = asyncio.get_running_loop().create_task(self._one(msg.data))
                    self.calls.add(task)
                    task.add_done_callback(self._done)
                elif msg.type is WSMsgType.BINARY:
                    await self._send(
                        _error_response(
                            InvalidRequestError("send each tool_invoke as a text frame of JSON"),
                            "",
                            self.node_id,
                        )
                    )
                elif msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
        finally:
            expiry.cancel()
            for task in tuple(self.calls):
                task.cancel()
            for task in tuple(self.calls):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            with contextlib.suppress(asyncio.CancelledError):
                await expiry

    def _done(self, task: asyncio.Task[None]) -> None:
        self.calls.discard(task)
        self.slots.release()

    async def _one(self, text: str) -> None:
        request_id = ""
        try:
            doc = parse_message(text, limits=self.limits)
            if isinstance(doc, dict) and isinstance(doc.get("id"), str):
                request_id = doc["id"][:128]
            request = ToolRequest.from_json(doc)
        except BridgeError as err:
            await self._send(_error_response(err, request_id, self.node_id))
            return
        own_token = request.token is not None
        token: AgentToken | None = None
        if not own_token:
            # The connection's token, verified again for this call (cached; expiry and
            # revocation checked). A rejection goes through the invoker, which audits it.
            try:
                token = self.runtime.verifier.verify(self.raw)
            except UnauthenticatedError:
                request = dataclasses.replace(request, token=self.raw)
        response = await self.runtime.invoker.invoke(request, token=token)
        await self._send(response)
        problem = response.problem
        if (
            not own_token
            and isinstance(problem, UnauthenticatedError)
            and problem.details.get("reason") != "replayed"
        ):
            await self.ws.close(code=CLOSE_TOKEN_REJECTED, message=b"token no longer valid")

    async def _send(self, response: ToolResponse) -> None:
        if self.ws.closed:
            return
        body = response_bytes(response)  # the result encoded once, as for HTTP
        async with self.send_lock:
            with contextlib.suppress(ConnectionResetError, RuntimeError):
                await self.ws.send_frame(body, WSMsgType.TEXT)

    async def _close_at_expiry(self) -> None:
        skew = self.runtime.verifier.clock_skew_s
        await asyncio.sleep(max(0.0, self.token.expires_at + skew - time.time()))
        await self.ws.close(code=CLOSE_TOKEN_REJECTED, message=b"token expired")


def _raw_token(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    return header.partition(" ")[2].strip() or request.query.get("token", "")


async def calls_ws(request: web.Request) -> web.StreamResponse:
    """Run ``tool_invoke`` messages from one WebSocket until it closes."""
    token = token_of(request)
    runtime = running(service_of(request).invocation, "invocation")
    ws = web.WebSocketResponse(
        heartbeat=30.0, max_msg_size=service_of(request).config.api.max_body_bytes
    )
    if not ws.can_prepare(request).ok:
        raise InvalidRequestError("GET /v1/calls/ws needs a WebSocket upgrade")
    seats = request.app[SUBSCRIPTIONS_KEY]
    seat = seats.take(token.id)  # shares the bound of /v1/events: one per open socket
    try:
        await ws.prepare(request)
        try:
            await _Channel(ws, runtime, _raw_token(request), token, json_limits(request)).run()
        finally:
            await ws.close()
    finally:
        seats.release(seat)
    return ws


def setup(app: web.Application) -> None:
    """Add the call channel route."""
    add_route(
        app,
        "GET",
        "/v1/calls/ws",
        calls_ws,
        operation_id="callChannel",
        summary="WebSocket channel: tool_invoke messages in, tool_response messages "
        "out, many calls in flight",
        tags=["invoke"],
        responses={
            "101": "switching to WebSocket",
            "400": "not a WebSocket request",
            "401": "missing or invalid token",
            "429": "this token has its most open sockets (RATE_LIMITED)",
            "503": "the node has its most open sockets (OVERLOADED)",
        },
    )
