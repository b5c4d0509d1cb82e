"""The HTTP application: error translation, body limits, middleware and route modules.

``create_app(host)`` builds an aiohttp application for an ``ApiHost`` (the running
service, seen through the few parts the routes read) held under ``SERVICE_KEY``. The
error middleware turns every ``BridgeError`` into the standard error JSON with its HTTP
status and anything unexpected into ``INTERNAL`` without a traceback; each module in
``ROUTE_MODULES`` adds its routes through ``bridge.api.openapi.add_route``, then the
host's own ``route_plugins()`` (faces that ride on this server, such as MCP) do the same.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import ClientPayloadError, web

from bridge import jsonlimits
from bridge.api import openapi
from bridge.errors import (
    BridgeError,
    InternalError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    RequestTimeoutError,
)
from bridge.jsonlimits import DEFAULT_LIMITS, JsonLimits
from bridge.ratelog import RateLimitedLog

if TYPE_CHECKING:
    from bridge.auth.tokens import AgentToken
    from bridge.config import BridgeConfig
    from bridge.events import EventBus
    from bridge.invocation.client_tools import ClientToolBroker
    from bridge.invocation.runtime import InvocationRuntime
    from bridge.matter.runtime import MatterRuntime
    from bridge.mesh.node import MeshNode
    from bridge.tools.registry import ToolRegistry

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

# Modules exposing ``middleware`` (an aiohttp middleware), outermost first, inside errors.
MIDDLEWARE_MODULES: tuple[str, ...] = ("bridge.api.auth",)

# Modules exposing ``setup(app)`` that add routes.
ROUTE_MODULES: tuple[str, ...] = (
    "bridge.api.tools_routes",
    "bridge.api.compact_routes",
    "bridge.api.mesh_routes",
    "bridge.api.invoke_routes",
    "bridge.api.calls_ws_routes",
    "bridge.api.events_routes",
    "bridge.api.devices_routes",
    "bridge.api.intents_routes",
    "bridge.api.client_tools_routes",
    "bridge.api.toolmanager_routes",
    "bridge.api.tokens_routes",
)

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
    def invocation(self) -> InvocationRuntime | None:
        """Return the invocation pipeline, ``None`` before start."""

    @property
    def matter(self) -> MatterRuntime | None:
        """Return the Matter source, ``None`` when it is off."""

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
    return web.json_response({"error": err.to_json()}, status=status or err.http_status)


def json_response(data: Any, status: int = 200) -> web.Response:
    """Return ``data`` as a JSON response."""
    return web.json_response(data, status=status, dumps=_dumps)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def json_limits(request: web.Request) -> JsonLimits:
    """Return the JSON limits of ``request``'s application (defaults without a service)."""
    service = request.app.get(SERVICE_KEY)
    if service is None:
        return DEFAULT_LIMITS
    api = service.config.api
    return JsonLimits(max_bytes=api.max_body_bytes, max_depth=api.max_json_depth)


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


@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Translate errors into the JSON error form; never leak a traceback."""
    try:
        response: web.StreamResponse = await handler(request)
    except BridgeError as err:
        return error_response(err)
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[SERVICE_KEY].config.api.max_body_bytes
        return error_response(
            PayloadTooLargeError(f"request body is larger than {limit} bytes", {"max_bytes": limit})
        )
    except web.HTTPNotFound:
        return error_response(
            NotFoundError(f"no route {request.method} {request.path}", {"path": request.path})
        )
    except web.HTTPMethodNotAllowed as err:
        return error_response(
            InvalidRequestError(
                f"method {request.method} is not allowed on {request.path}",
                {"allowed": sorted(err.allowed_methods)},
            ),
            status=405,
        )
    except web.HTTPException as err:
        if err.status < 400:
            raise
        return error_response(InvalidRequestError(err.reason or "bad request"), status=err.status)
    except (ConnectionResetError, ClientPayloadError) as err:
        _RATE_LOG.info("client-gone", "client went away during %s: %s", request.method,
                       type(err).__name__)  # fmt: skip
        return error_response(InvalidRequestError("the connection was cut", {"reason": "reset"}))
    except Exception as err:
        incident = uuid.uuid4().hex[:12]
        # A bug a client can trigger at will must not flood the log: one traceback per
        # route and cause per minute, the repeats counted.
        resource = request.match_info.route.resource
        where = resource.canonical if resource is not None else request.path[:64]
        cause = f"bug:{request.method}:{where}:{type(err).__name__}"
        _RATE_LOG.log(cause, logging.ERROR, "unhandled error on %s %s (incident %s)",
                      request.method, request.path[:200], incident, exc_info=True)  # fmt: skip
        return error_response(InternalError("internal error", {"incident": incident}))
    return response


def create_app(service: ApiHost) -> web.Application:
    """Build the application for ``service`` with every middleware, route module and plugin."""
    middlewares = [error_middleware]
    middlewares += [importlib.import_module(m).middleware for m in MIDDLEWARE_MODULES]
    app = web.Application(
        middlewares=middlewares, client_max_size=service.config.api.max_body_bytes
    )
    app[SERVICE_KEY] = service
    app[openapi.OPENAPI_KEY] = openapi.OpenApiRegistry()
    openapi.setup(app)
    for name in ROUTE_MODULES:
        importlib.import_module(name).setup(app)
    for plugin in service.route_plugins():
        plugin(app)
    return app
