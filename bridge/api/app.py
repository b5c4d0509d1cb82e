"""The HTTP application: error translation, middleware and the route modules.

``create_app(host)`` builds an aiohttp application for an ``ApiHost`` (see
``bridge.api.http``). The error middleware turns every ``BridgeError`` into the
standard error JSON with its HTTP status and anything unexpected into ``INTERNAL``
without a traceback; each route module adds its routes through
``bridge.api.openapi.add_route``, then the host's own ``route_plugins()`` (faces that
ride on this server, such as MCP and the console) do the same.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from aiohttp import ClientPayloadError, web

from bridge.api import (
    automations_routes,
    bearer,
    calls_ws_routes,
    client_tools_routes,
    compact_routes,
    devices_routes,
    events_routes,
    floors_routes,
    hosts,
    intents_routes,
    invoke_routes,
    mesh_routes,
    mesh_trust_routes,
    openapi,
    tokens_routes,
    toolmanager_routes,
    tools_routes,
)
from bridge.api.http import SERVICE_KEY, ApiHost, error_response
from bridge.errors import (
    BridgeError,
    InternalError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
)
from bridge.ratelog import RateLimitedLog

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

# The route modules, each with ``setup(app)``; the bearer middleware sits inside errors.
ROUTE_MODULES = (
    tools_routes,
    compact_routes,
    mesh_routes,
    mesh_trust_routes,
    invoke_routes,
    calls_ws_routes,
    events_routes,
    devices_routes,
    floors_routes,
    intents_routes,
    client_tools_routes,
    toolmanager_routes,
    tokens_routes,
    automations_routes,
)


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
        _RATE_LOG.info(
            "client-gone", "client went away during %s: %s", request.method, type(err).__name__
        )
        return error_response(InvalidRequestError("the connection was cut", {"reason": "reset"}))
    except Exception as err:
        incident = uuid.uuid4().hex[:12]
        # A bug a client can trigger at will must not flood the log: one traceback per
        # route and cause per minute, the repeats counted.
        resource = request.match_info.route.resource
        where = resource.canonical if resource is not None else request.path[:64]
        cause = f"bug:{request.method}:{where}:{type(err).__name__}"
        _RATE_LOG.log(
            cause,
            logging.ERROR,
            "unhandled error on %s %s (incident %s)",
            request.method,
            request.path[:200],
            incident,
            exc_info=True,
        )
        return error_response(InternalError("internal error", {"incident": incident}))
    return response


def create_app(service: ApiHost) -> web.Application:
    """Build the application for ``service`` with every middleware, route module and plugin."""
    # The Host check comes right after error translation, before anything reads a
    # credential (the console's session middleware is inserted after it).
    middlewares = [error_middleware, hosts.middleware, bearer.middleware]
    app = web.Application(
        middlewares=middlewares, client_max_size=service.config.api.max_body_bytes
    )
    app[SERVICE_KEY] = service
    app[hosts.HOST_POLICY_KEY] = hosts.HostPolicy(
        (*service.config.api.allowed_hosts, service.config.api.host)
    )
    app[openapi.OPENAPI_KEY] = openapi.OpenApiRegistry()
    openapi.setup(app)
    for module in ROUTE_MODULES:
        module.setup(app)
    for plugin in service.route_plugins():
        plugin(app)
    return app
