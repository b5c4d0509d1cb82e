"""``GET /v1/events``: a WebSocket streaming tool-call status, registry and approval events.

Details: docs/modules.md, ``bridge.api.events_routes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from aiohttp import WSMsgType, web

from bridge.api.bearer import reverify, token_of
from bridge.api.http import encode_json, service_of
from bridge.api.openapi import add_route, query_param
from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken
from bridge.auth.visibility import may_read_device, may_see
from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.events import Event, EventBus
from bridge.limits import SUBSCRIPTIONS_BOUND, Seats
from bridge.sources.client_tools import TOOL_USE
from bridge.tools.definition import ToolDefinition

DEFAULT_TYPES = ("tool_call.", "registry.", "approval.", "tool_use")
ALLOWED_PREFIXES = (
    "tool_call.",
    "registry.",
    "approval.",
    "device.",
    "commissioning.",
    "mesh.",
    "tool_use",
    "job.",
    "automation.",
)
MAX_SESSION = 128
RECHECK_S = 5.0  # how often an open socket's token is verified again (and at its expiry)
WS_POLICY_VIOLATION = 1008
MAX_CLIENT_FRAME = 64 * 1024  # this socket takes no messages; a big frame closes it
COMMISSION_PERMISSION = "device:manage:commission"  # that of POST /v1/devices/commission


def _visible(event: Event, token: AgentToken, session: str | None) -> bool:
    # A call's events belong to the token that made it (by id, not by agent name).
    if event.type == TOOL_USE:
        wanted = event.data.get("sessionId")
        return event.data.get("tokenId") == token.id and (wanted is None or wanted == session)
    if event.type.startswith("tool_call."):
        return event.data.get("tokenId") == token.id or any(
            covers(p, "admin:events") for p in token.permissions
        )
    if event.type.startswith("job."):
        return event.data.get("tokenId") == token.id or any(
            covers(p, "admin:jobs") for p in token.permissions
        )
    if event.type.startswith("automation."):
        # A rule's runs and changes: to its creator and to who may read every rule.
        return event.data.get("creator") == token.agent_id or any(
            covers(p, "automations:read") or covers(p, "automations:manage")
            for p in token.permissions
        )
    if event.type.startswith("approval."):
        return any(covers(p, "admin:approve") for p in token.permissions)
    if event.type.startswith("registry."):
        # A tool's name only to a token that may see the tool (the listing rule).
        defn = event.subject
        return isinstance(defn, ToolDefinition) and may_see(token.permissions, defn)
    if event.type.startswith("commissioning."):
        # The commissioning's codes, node ids and new tools: for who may commission.
        return any(covers(p, COMMISSION_PERMISSION) for p in token.permissions)
    if event.type.startswith("device."):
        # A device's state and availability only to a token that may read that device.
        device = event.data.get("device_id")
        return isinstance(device, str) and may_read_device(token.permissions, device)
    return True


async def events(request: web.Request) -> web.StreamResponse:
    """Stream events to a WebSocket client until it disconnects."""
    token = token_of(request)
    raw = request.query.get("types")
    types = tuple(t for t in (raw or "").split(",") if t) or DEFAULT_TYPES
    bad = [t for t in types if not t.startswith(ALLOWED_PREFIXES)]
    if bad:
        raise InvalidRequestError(
            f"unknown event type prefix(es): {', '.join(bad)}", {"allowed": list(ALLOWED_PREFIXES)}
        )
    session = request.query.get("session")
    if session is not None and not 0 < len(session) <= MAX_SESSION:
        raise InvalidRequestError(f"session must have 1-{MAX_SESSION} characters")
    ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=MAX_CLIENT_FRAME)
    if not ws.can_prepare(request).ok:
        raise InvalidRequestError("GET /v1/events needs a WebSocket upgrade")
    seats = request.app[SUBSCRIPTIONS_KEY]
    seat = seats.take(token.id)  # RATE_LIMITED / OVERLOADED past the bounds, before 101
    try:
        await ws.prepare(request)
        service = service_of(request)
        bus = service.events
        runs_client_tools = (
            service.client_tools.connected(token.id, session)
            if any(TOOL_USE.startswith(t) for t in types)
            else contextlib.nullcontext()
        )
        with runs_client_tools:
            await _stream(ws, bus, types, token, session, lambda: reverify(request))
    finally:
        seats.release(seat)
    return ws


def _recheck_in(token: AgentToken) -> float:
    return max(0.05, min(RECHECK_S, token.expires_at - time.time()))


async def _stream(
    ws: web.WebSocketResponse,
    bus: EventBus,
    types: tuple[str, ...],
    token: AgentToken,
    session: str | None,
    recheck: Callable[[], AgentToken],
) -> None:
    async with bus.subscription(*types) as sub:
        reader = asyncio.get_running_loop().create_task(_drain_client(ws))
        reported = 0
        getter: asyncio.Future[Event] | None = None
        # Whether this token may see a device's events, by device (its permissions are
        # fixed for the token's life; the cache starts over if the token is replaced).
        devices: dict[str, bool] = {}
        permissions = token.permissions
        try:
            while not ws.closed and not reader.done():
                if getter is None:
                    getter = asyncio.ensure_future(sub.get())
                waiting: set[asyncio.Future[Any]] = {getter, reader}
                await asyncio.wait(
                    waiting, timeout=_recheck_in(token), return_when=asyncio.FIRST_COMPLETED
                )
                if reader.done():
                    break
                try:
                    token = recheck()
                except UnauthenticatedError as err:
                    # Expired (or otherwise no longer valid): no further event goes out.
                    await ws.close(
                        code=WS_POLICY_VIOLATION,
                        message=f"token {err.details.get('reason', 'invalid')}".encode()[:120],
                    )
                    break
                if token.permissions != permissions:
                    devices.clear()
                    permissions = token.permissions
                if not getter.done():
                    continue
                batch = [getter.result()]
                getter = None
                # Whatever else is queued goes out now, without a wait (and a task) each.
                while not sub.queue.empty():
                    batch.append(sub.queue.get_nowait())
                if sub.dropped > reported:
                    await _send(
                        ws, {"type": "events.dropped", "data": {"count": sub.dropped - reported}}
                    )
                    reported = sub.dropped
                for event in batch:
                    device = event.data.get("device_id")
                    if event.type.startswith("device.") and isinstance(device, str):
                        seen = devices.get(device)
                        if seen is None:
                            seen = devices[device] = _visible(event, token, session)
                    else:
                        seen = _visible(event, token, session)
                    if seen:
                        await _send(ws, event.to_json())
        except (ConnectionResetError, RuntimeError):
            pass
        finally:
            if getter is not None:
                getter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await getter
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await ws.close()


async def _send(ws: web.WebSocketResponse, doc: dict[str, Any]) -> None:
    """Send one event as a text frame (encoded once, as UTF-8 bytes)."""
    await ws.send_frame(encode_json(doc), WSMsgType.TEXT)


async def _drain_client(ws: web.WebSocketResponse) -> None:
    async for msg in ws:
        if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
            break


# Open event and call-channel sockets, bounded per token and per node (both routes).
SUBSCRIPTIONS_KEY: web.AppKey[Seats] = web.AppKey("event_subscriptions", Seats)


def setup(app: web.Application) -> None:
    """Add the events WebSocket route."""
    app[SUBSCRIPTIONS_KEY] = Seats(SUBSCRIPTIONS_BOUND)
    add_route(
        app,
        "GET",
        "/v1/events",
        events,
        operation_id="streamEvents",
        summary="WebSocket stream of tool-call status, registry and approval events",
        tags=["events"],
        parameters=[
            query_param("types", "comma-separated event type prefixes"),
            query_param("token", "the bearer token, for clients that cannot set headers"),
            query_param("session", "session id: receive the tool_use of this session's calls"),
        ],
        responses={
            "101": "switching to WebSocket",
            "400": "not a WebSocket request",
            "401": "missing or invalid token",
            "429": "this token has its most open event sockets (RATE_LIMITED)",
            "503": "the node has its most open event sockets (OVERLOADED)",
        },
    )
