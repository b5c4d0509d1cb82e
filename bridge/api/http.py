"""What every route module of the HTTP API shares: the host, the JSON reader, the replies.

``ApiHost`` is the running service as the routes see it (held under ``SERVICE_KEY``);
``read_json`` reads a body with the bridge's limits and checks it against the schema
the route declared; ``json_response``/``error_response`` encode a reply once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from aiohttp import ClientPayloadError, web

from bridge import jsonlimits
from bridge.api import openapi
from bridge.errors import (
    BridgeError,
    InvalidRequestError,
    PayloadTooLargeError,
    RequestTimeoutError,
)
from bridge.jsonlimits import DEFAULT_LIMITS, JsonLimits

if TYPE_CHECKING:
    from bridge.auth.tokens import AgentToken
    from bridge.automations import AutomationRunner
    from bridge.config import ApiConfig, BridgeConfig
    from bridge.events import EventBus
    from bridge.invocation.messages import ToolResponse
    from bridge.invocation.pipeline import Pipeline
    from bridge.matter import MatterComponent
    from bridge.mesh.node import MeshNode
    from bridge.sources.client_tools import ClientToolBroker
    from bridge.tools.registry import ToolRegistry

RoutePlugin = Callable[[web.Application], None]


class SpokenReply(Protocol):
    """An answer to a spoken sentence, as the API serves it."""

    def to_json(self) -> dict[str, Any]:
        """Return the reply's JSON form."""


class SpokenCommands(Protocol):
    """The voice face's sentence handler, as the API calls it."""

    async def handle(
        self, text: str, language: str, *, token: AgentToken | None, area: str | None = None
    ) -> SpokenReply:
        """Recognise ``text`` and run it with ``token`` (place-less sentences act in ``area``)."""


class ApiHost(Protocol):
    """What the HTTP API reads of the running bridge (``BridgeService`` is one)."""

    @property
    def config(self) -> BridgeConfig:
        """Return the configuration."""

    @property
    def events(self) -> EventBus:
        """Return the event bus."""

    @property
    def registry(self) -> ToolRegistry:
        """Return the tool registry."""

    @property
    def client_tools(self) -> ClientToolBroker:
        """Return the broker that runs client tools through event sockets."""

    @property
    def invocation(self) -> Pipeline | None:
        """Return the invocation pipeline, ``None`` before start."""

    @property
    def matter(self) -> MatterComponent | None:
        """Return the Matter source, ``None`` when it is off."""

    @property
    def automations(self) -> AutomationRunner | None:
        """Return the automations runner, ``None`` when it is off."""

    @property
    def intents(self) -> SpokenCommands | None:
        """Return the spoken-command handler, ``None`` when it is off."""

    @property
    def mesh(self) -> MeshNode | None:
        """Return the mesh node, ``None`` when it is off."""

    def status(self) -> dict[str, Any]:
        """Return the health summary."""

    def route_plugins(self) -> Sequence[RoutePlugin]:
        """Return the ``setup(app)`` of faces served on this app besides the API's own."""


SERVICE_KEY: web.AppKey[ApiHost] = web.AppKey("service")


def service_of(request: web.Request) -> ApiHost:
    """Return the service behind ``request``'s application."""
    return request.app[SERVICE_KEY]


def error_response(err: BridgeError, status: int | None = None) -> web.Response:
    """Return the JSON error response for ``err``."""
    return json_response({"error": err.to_json()}, status=status or err.http_status)


def json_response(data: Any, status: int = 200) -> web.Response:
    """Return ``data`` as a JSON response (UTF-8, encoded once)."""
    return _json_body(encode_json(data), status)


def _json_body(body: bytes, status: int) -> web.Response:
    return web.Response(body=body, status=status, content_type="application/json", charset="utf-8")


def encode_json(data: Any) -> bytes:
    """Return ``data`` as compact UTF-8 JSON.

    orjson where it can (NaN and infinities become ``null``); values it refuses (integers
    beyond 64 bits, keys it cannot turn into strings, strings with lone surrogates) go
    through the standard encoder, with surrogates escaped so the bytes stay valid UTF-8.
    Anything that is no JSON type at all is written as its ``str``: an answer, not a 500.
    """
    try:
        return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(data, separators=(",", ":"), default=str).encode("ascii")


_RESULT_NULL = b'"result":null'


def response_json(response: ToolResponse, extra: dict[str, Any] | None = None) -> web.Response:
    """Answer a ``tool_response`` with its HTTP status, encoding its result only once."""
    return _json_body(response_bytes(response, extra), response.http_status)


def response_bytes(response: ToolResponse, extra: dict[str, Any] | None = None) -> bytes:
    """Return a ``tool_response`` as UTF-8 JSON, encoding its result only once.

    When the invoker already encoded the result (``result_json``), that text is put in
    the place of the result instead of encoding the value again.
    """
    doc = response.to_json()
    if extra:
        doc.update(extra)
    text = response.result_json
    if text is None or not response.ok or "NaN" in text or "Infinity" in text:
        # (The invoker's text may spell NaN/Infinity, which JSON has not: the encoder
        # below writes them as null, as for every other answer.)
        return encode_json(doc)
    try:
        encoded = text.encode("utf-8") if isinstance(text, str) else text
    except UnicodeEncodeError:  # a lone surrogate in the result: encode it escaped
        return encode_json(doc)
    doc["result"] = None
    # Keys and string values are JSON-escaped, so the first literal '"result":null' is the
    # top-level key (it precedes every caller-chosen value in the document's order).
    return encode_json(doc).replace(_RESULT_NULL, b'"result":' + encoded, 1)


def json_limits(request: web.Request) -> JsonLimits:
    """Return the JSON limits of ``request``'s application (defaults without a service)."""
    service = request.app.get(SERVICE_KEY)
    if service is None:
        return DEFAULT_LIMITS
    return _limits_of(service.config.api)


_LIMITS: dict[int, tuple[ApiConfig, JsonLimits]] = {}


def _limits_of(api: ApiConfig) -> JsonLimits:
    # One JsonLimits per (frozen) API configuration, not one per request.
    known = _LIMITS.get(id(api))
    if known is not None and known[0] is api:
        return known[1]
    limits = JsonLimits(max_bytes=api.max_body_bytes, max_depth=api.max_json_depth)
    if len(_LIMITS) > 64:
        _LIMITS.clear()
    _LIMITS[id(api)] = (api, limits)
    return limits


def _body_timeout(request: web.Request) -> float:
    service = request.app.get(SERVICE_KEY)
    return service.config.api.body_timeout_s if service is not None else 30.0


async def read_body(request: web.Request, max_bytes: int) -> bytes:
    """Return the whole body (at most ``max_bytes``, within the body timeout).

    Raise ``PayloadTooLargeError`` past ``max_bytes`` and ``RequestTimeoutError`` when the
    client sends it too slowly. Reads to the end, not only what is buffered.
    """
    length = request.content_length
    if length is not None and length > max_bytes:
        raise PayloadTooLargeError(
            f"request body is larger than {max_bytes} bytes", {"max_bytes": max_bytes}
        )
    content = request.content
    if content.is_eof() and content.exception() is None:
        # The whole body already arrived with the head (the usual small request).
        body = content.read_nowait()
        if len(body) > max_bytes:
            raise PayloadTooLargeError(
                f"request body is larger than {max_bytes} bytes", {"max_bytes": max_bytes}
            )
        return body
    chunks: list[bytes] = []
    total = 0
    try:
        async with asyncio.timeout(_body_timeout(request)):
            while chunk := await request.content.readany():
                total += len(chunk)
                if total > max_bytes:
                    raise PayloadTooLargeError(
                        f"request body is larger than {max_bytes} bytes", {"max_bytes": max_bytes}
                    )
                chunks.append(chunk)
    except TimeoutError as err:
        raise RequestTimeoutError(
            "the request body arrived too slowly", {"body_timeout_s": _body_timeout(request)}
        ) from err
    except ClientPayloadError as err:  # cut or malformed chunked/compressed body
        raise InvalidRequestError(
            "the request body is malformed or was cut short", {"reason": "bad_body"}
        ) from err
    return b"".join(chunks)


def check_json_content_type(request: web.Request) -> None:
    """Raise ``InvalidRequestError`` unless the body is declared as UTF-8 JSON (or undeclared)."""
    if request.content_type not in ("application/json", "", "application/octet-stream"):
        raise InvalidRequestError(
            f"request body must be application/json, got {request.content_type[:64]}"
        )
    charset = (request.charset or "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise InvalidRequestError(f"request body must be UTF-8 JSON, got charset {charset[:32]}")


async def read_json(request: web.Request, *, max_bytes: int | None = None) -> Any:
    """Return the request's JSON body, read with limits and checked against the route's schema.

    Raise ``InvalidRequestError`` (not JSON, too deep, bad strings or numbers, off-schema),
    ``PayloadTooLargeError`` or ``RequestTimeoutError``.
    """
    check_json_content_type(request)
    limits = json_limits(request)
    if max_bytes is not None:
        limits = replace(limits, max_bytes=max_bytes)
    body = jsonlimits.loads(await read_body(request, limits.max_bytes), limits)
    openapi.validate_body(request, body)
    return body


# How often the running calls check that their HTTP clients are still connected.
HANG_UP_CHECK_S = 1.0


class HangUps:
    """Cancel a running call whose HTTP client hung up (every ``HANG_UP_CHECK_S``).

    aiohttp runs a handler to its end after its client has gone (handler cancellation is
    off: a write must not stop half-way), so a call nobody will read — a 60 s
    ``core:wait_for_event``, a call waiting for approval — would keep its seat among the
    token's calls in flight, and its subscription, until it ended by itself. Such a call
    is cancelled as a call socket's calls are when the socket closes. One timer for all
    of the app's running calls, armed only while there are some: a call costs a dict
    entry, not a timer of its own.
    """

    def __init__(self) -> None:
        self._running: dict[asyncio.Task[Any], web.Request] = {}
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, request: web.Request) -> asyncio.Task[Any] | None:
        """Watch the calling task's client until ``done``; return the task."""
        task = asyncio.current_task()
        if task is None:
            return None
        self._running[task] = request
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HANG_UP_CHECK_S, self._check)
        return task

    def done(self, task: asyncio.Task[Any] | None) -> None:
        """Stop watching ``task`` (its call ended)."""
        if task is not None:
            self._running.pop(task, None)

    def close(self) -> None:
        """Stop the checks (the app is shutting down)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        for task, request in list(self._running.items()):
            transport = request.transport
            if transport is None or transport.is_closing():
                del self._running[task]
                task.cancel()
        if self._running:
            self._timer = asyncio.get_running_loop().call_later(HANG_UP_CHECK_S, self._check)


HANG_UPS_KEY: web.AppKey[HangUps] = web.AppKey("hang_ups", HangUps)


async def until_hang_up[T](request: web.Request, call: Awaitable[T]) -> T:
    """Await ``call`` (a route's tool call), cancelled if the client hangs up meanwhile.

    Every route that runs a call goes through here: ``POST /v1/invoke``, the compact
    profile's calls and a peer's forwarded call.
    """
    hang_ups = request.app[HANG_UPS_KEY]
    task = hang_ups.watch(request)
    try:
        return await call
    finally:
        hang_ups.done(task)


def watch_hang_ups(app: web.Application) -> None:
    """Give ``app`` its hang-up checks, once (stopped when the app is cleaned up).

    Called by the setup of every route module that runs calls (``until_hang_up``).
    """
    if HANG_UPS_KEY in app:
        return
    app[HANG_UPS_KEY] = HangUps()

    async def stop(app: web.Application) -> None:
        app[HANG_UPS_KEY].close()

    app.on_cleanup.append(stop)
