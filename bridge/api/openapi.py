"""The OpenAPI document of the HTTP API, built from the routes as they are added.

Route modules add routes with ``add_route(app, method, path, handler, ...)``, which
registers the handler on the router and its operation in the app's
``OpenApiRegistry``; ``GET /v1/openapi.json`` serves the document, so it always
matches the router (``router_operations`` lets a test compare the two).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bridge import __version__
from bridge.api.request_token import token_of
from bridge.auth.visibility import may_hold
from bridge.errors import BridgeError, InvalidRequestError
from bridge.invocation import messages
from bridge.tools.schemacheck import SchemaCheck

RouteHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            **messages.ERROR_OBJECT_SCHEMA,
            "required": list(messages.ERROR_OBJECT_SCHEMA["properties"]),
        }
    },
}

# The answer as served: the message's own schema with every field present.
TOOL_RESPONSE_SCHEMA: dict[str, Any] = {
    **messages.TOOL_RESPONSE_SCHEMA,
    "required": list(messages.TOOL_RESPONSE_SCHEMA["properties"]),
    "properties": {
        **messages.TOOL_RESPONSE_SCHEMA["properties"],
        "execution": {
            **messages.EXECUTION_SCHEMA,
            "required": list(messages.EXECUTION_SCHEMA["properties"]),
        },
    },
}


def json_content(description: str, ref: str) -> dict[str, Any]:
    """Return an OpenAPI response object whose JSON body is the component ``ref``."""
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """One documented route."""

    method: str
    path: str
    operation_id: str
    summary: str
    tags: tuple[str, ...] = ()
    parameters: tuple[Mapping[str, Any], ...] = ()
    request_body: Mapping[str, Any] | None = None
    body_error: type[BridgeError] = InvalidRequestError
    permission: str | None = None
    responses: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the OpenAPI operation object."""
        op: dict[str, Any] = {"operationId": self.operation_id, "summary": self.summary}
        if self.tags:
            op["tags"] = list(self.tags)
        if self.parameters:
            op["parameters"] = [dict(p) for p in self.parameters]
        if self.request_body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": dict(self.request_body)}},
            }
        responses = {
            status: {"description": desc} if isinstance(desc, str) else dict(desc)
            for status, desc in (self.responses or {"200": "OK"}).items()
        }
        responses.setdefault(
            "default",
            {
                "description": "error",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        )
        op["responses"] = responses
        return op


class OpenApiRegistry:
    """The operations added so far, keyed by ``(METHOD, path)``, and their body checks."""

    def __init__(self) -> None:
        self.operations: dict[tuple[str, str], Operation] = {}
        self.checks: dict[tuple[str, str], SchemaCheck] = {}
        # The same checks by the router's route object: one lookup per request.
        self.by_route: dict[web.AbstractRoute, SchemaCheck] = {}

    def add(self, op: Operation, body: SchemaCheck | None = None) -> None:
        """Record ``op`` (``body``: its body's check); raise ``ValueError`` on a duplicate."""
        key = (op.method, op.path)
        if key in self.operations:
            raise ValueError(f"route {op.method} {op.path} is documented twice")
        if any(o.operation_id == op.operation_id for o in self.operations.values()):
            raise ValueError(f"operationId {op.operation_id} is used twice")
        self.operations[key] = op
        if body is not None:
            self.checks[key] = body

    def document(self, granted: tuple[str, ...] | None = None) -> dict[str, Any]:
        """Return the OpenAPI 3.1 document: every route, or those ``granted`` may use."""
        paths: dict[str, dict[str, Any]] = {}
        for (method, path), op in sorted(self.operations.items(), key=lambda kv: kv[0][::-1]):
            if granted is not None and op.permission and not may_hold(granted, op.permission):
                continue
            paths.setdefault(path, {})[method.lower()] = op.to_json()
        return {
            "openapi": "3.1.0",
            "info": {"title": "Atmosphere Matter Bridge", "version": __version__},
            "paths": paths,
            "components": {
                "schemas": {"Error": ERROR_SCHEMA, "ToolResponse": TOOL_RESPONSE_SCHEMA}
            },
        }


OPENAPI_KEY = web.AppKey("openapi", OpenApiRegistry)


def path_param(name: str, description: str) -> dict[str, Any]:
    """Return an OpenAPI path parameter object."""
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string"},
    }


def query_param(
    name: str, description: str, schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return an OpenAPI query parameter object."""
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": dict(schema or {"type": "string"}),
    }


def add_route(
    app: web.Application,
    method: str,
    path: str,
    handler: RouteHandler,
    *,
    operation_id: str,
    summary: str,
    tags: Iterable[str] = (),
    parameters: Iterable[Mapping[str, Any]] = (),
    request_body: Mapping[str, Any] | SchemaCheck | None = None,
    body_error: type[BridgeError] = InvalidRequestError,
    permission: str | None = None,
    responses: Mapping[str, Any] | None = None,
) -> None:
    """Add ``handler`` to the router and document it; ``request_body`` is also its validator.

    ``request_body`` is a schema, or a message's own ``SchemaCheck`` (the one its
    ``from_json`` uses, so every entrance refuses a bad message alike). A body off a bare
    schema is refused with ``body_error`` (``INVALID_REQUEST`` unless the route says
    otherwise). ``permission`` is what the route needs (templates allowed): the OpenAPI
    view of a token that cannot hold it leaves the route out.
    """
    route = app.router.add_route(method, path, handler)
    registry = app[OPENAPI_KEY]
    body: SchemaCheck | None
    if request_body is None or isinstance(request_body, SchemaCheck):
        body = request_body
    else:
        body = SchemaCheck(request_body, error_class=body_error)
    registry.add(
        Operation(
            method=method.upper(),
            path=path,
            operation_id=operation_id,
            summary=summary,
            tags=tuple(tags),
            parameters=tuple(parameters),
            request_body=None if body is None else body.schema,
            body_error=body_error if body is None else body.error_class,
            permission=permission,
            responses=dict(responses or {}),
        ),
        body,
    )
    if body is not None:
        registry.by_route[route] = body


def router_operations(app: web.Application) -> set[tuple[str, str]]:
    """Return ``(METHOD, path)`` of every route the router serves (HEAD helpers excluded)."""
    ops: set[tuple[str, str]] = set()
    for route in app.router.routes():
        if route.method == "HEAD":
            continue
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        if isinstance(path, str):
            ops.add((route.method, path))
    return ops


def validate_body(request: web.Request, body: Any) -> None:
    """Check ``body`` against the schema its route declared; raise its ``body_error``.

    The declared ``request_body`` of ``add_route`` is the validator (the same object the
    OpenAPI document shows), so documentation and checking cannot drift apart.
    """
    check = request.app[OPENAPI_KEY].by_route.get(request.match_info.route)
    if check is not None:
        check.check(body)


async def _serve(request: web.Request) -> web.Response:
    granted = tuple(token_of(request).permissions)
    return web.json_response(request.app[OPENAPI_KEY].document(granted))


def setup(app: web.Application) -> None:
    """Add ``GET /v1/openapi.json``."""
    add_route(
        app,
        "GET",
        "/v1/openapi.json",
        _serve,
        operation_id="getOpenApi",
        summary="This API's OpenAPI document",
        tags=["meta"],
    )
