"""HTTP endpoints of the mesh: peer proofs, gossip, forwarded calls, peer and tool views.

``POST /v1/mesh/hello`` answers a ``mesh_challenge`` with this node's signed proof
(``bridge/mesh/proof.py``). ``POST /v1/mesh/gossip``, ``/v1/mesh/push`` and
``/v1/mesh/invoke`` take signed ``mesh_envelope`` bodies: they are authenticated by the
sending node's signature (``bridge/mesh/envelope.py``), not by agent tokens; a
forwarded call carries a signed delegation, never a bearer token. Their every answer,
errors included, is a ``mesh_answer`` signed by this node over the request's nonce
and the body (``{"error": {code, message, details, retryable}}`` on failure), with
the error's HTTP status, once the envelope verified; before that (malformed, forged,
untrusted, replayed) the answer is the plain JSON error. ``GET /v1/mesh/peers`` and
``GET /v1/mesh/tools`` need ``mesh:read`` and list only the tools the token may see.
When the mesh is disabled every route answers ``NOT_FOUND``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bridge.api.bearer import require
from bridge.api.http import SERVICE_KEY, read_json, until_hang_up, watch_hang_ups
from bridge.api.openapi import add_route, query_param
from bridge.errors import BridgeError, InternalError, UnauthenticatedError, running
from bridge.mesh.envelope import OPENED
from bridge.mesh.node import MeshNode
from bridge.mesh.remote import RunLocal
from bridge.ratelog import RateLimitedLog

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

MESH_NODE_KEY = web.AppKey("mesh_node", MeshNode)
MESH_RUN_KEY: web.AppKey[RunLocal] = web.AppKey("mesh_run")
MAX_MESH_BODY = 8 * 1024 * 1024
MAX_HELLO_BODY = 4096
READ_PERMISSION = "mesh:read"

PARAMETERS = {
    "/v1/mesh/tools": (
        query_param("capability", "only tools of this capability group or requiring it"),
    ),
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# (method, path, summary) of every route, for the OpenAPI document.
OPERATIONS: tuple[tuple[str, str, str], ...] = (
    ("POST", "/v1/mesh/hello", "Prove this node's key to a challenger (signed proof)"),
    ("POST", "/v1/mesh/gossip", "Exchange gossip digests (signed node envelope)"),
    ("POST", "/v1/mesh/push", "Push capability announcements (signed node envelope)"),
    ("POST", "/v1/mesh/invoke", "Run a call forwarded by a peer (signed node envelope)"),
    ("GET", "/v1/mesh/peers", "List mesh peers, discovered and announcing"),
    ("GET", "/v1/mesh/tools", "List tools offered in the mesh and the nodes offering them"),
)


def mesh_node(request: web.Request) -> MeshNode:
    """Return the mesh node serving ``request``; raise ``ComponentUnavailableError`` if off."""
    node = request.app.get(MESH_NODE_KEY)
    if node is None:
        service = request.app.get(SERVICE_KEY)
        mesh = getattr(service, "mesh", None)
        if isinstance(mesh, MeshNode):
            node = mesh
    return running(node, "mesh")


def _run(request: web.Request) -> RunLocal:
    given = request.app.get(MESH_RUN_KEY)
    if given is not None:
        return given
    service = request.app.get(SERVICE_KEY)
    runtime = running(getattr(service, "invocation", None), "invocation")
    run: RunLocal = runtime.invoker.invoke
    return run


async def _json_body(request: web.Request) -> Any:
    # The whole body (not just what is buffered), with the shared JSON limits, then the
    # route's declared schema.
    return await read_json(request, max_bytes=MAX_MESH_BODY)


def _error(err: BridgeError) -> web.Response:
    return web.json_response({"error": err.to_json()}, status=err.http_status)


def _guard(handler: Handler) -> Handler:
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except BridgeError as err:
            if err.http_status >= 500:
                _RATE_LOG.warning(
                    f"{request.path[:64]}:{err.code}",
                    "%s %s failed: %s",
                    request.method,
                    request.path[:200],
                    err.message[:300],
                )
            return _error(err)
        except Exception:
            _LOGGER.exception("%s %s failed", request.method, request.path[:200])
            return _error(InternalError("internal error"))

    return wrapped


async def _signed(
    request: web.Request, where: str, handle: Callable[[MeshNode, Any], Awaitable[dict[str, Any]]]
) -> web.StreamResponse:
    """Run ``handle`` on the envelope; answer signed by this node once the envelope verified.

    A request whose envelope did not verify (malformed, forged, untrusted, replayed,
    misaddressed) gets the plain JSON error: its sender is not known, and a signature
    for a nonce it may have copied would be an answer to someone else's request.
    """
    node = mesh_node(request)
    OPENED.set(None)
    body: Any = None
    try:
        body = await _json_body(request)
        status, answer = 200, await handle(node, body)
    except BridgeError as err:
        if isinstance(err, UnauthenticatedError):
            claimed = body.get("from") if isinstance(body, dict) else None
            node.refusals.record(str(claimed or "")[:64], where, err)
        status, answer = err.http_status, {"error": err.to_json()}
    nonce = body.get("nonce") if isinstance(body, dict) else None
    if nonce is None or OPENED.get() != nonce:
        return web.json_response(answer, status=status)
    return web.json_response(node.answer(body, status, answer), status=status)


async def _gossip(node: MeshNode, body: Any) -> dict[str, Any]:
    return node.handle_gossip(body)


async def _push(node: MeshNode, body: Any) -> dict[str, Any]:
    return node.handle_push(body)


@_guard
async def hello(request: web.Request) -> web.StreamResponse:
    """Answer a challenge with this node's signed proof of its key."""
    node = mesh_node(request)
    challenge = await read_json(request, max_bytes=MAX_HELLO_BODY)
    return web.json_response(node.handle_hello(challenge, request.remote))


@_guard
async def gossip(request: web.Request) -> web.StreamResponse:
    """Answer a peer's digest with what it lacks and what this node wants."""
    return await _signed(request, "gossip", _gossip)


@_guard
async def push(request: web.Request) -> web.StreamResponse:
    """Take announcements a peer pushed."""
    return await _signed(request, "push", _push)


@_guard
async def invoke(request: web.Request) -> web.StreamResponse:
    """Run a call forwarded by a peer and answer with its response and route."""
    run = _run(request)
    # a peer that hangs up cancels the call it forwarded
    return await until_hang_up(
        request, _signed(request, "invoke", lambda node, body: node.handle_invoke(body, run))
    )


@_guard
async def peers(request: web.Request) -> web.StreamResponse:
    """List this node and its peers."""
    require(request, READ_PERMISSION)
    node = mesh_node(request)
    return web.json_response({"self": node.self_json(), "peers": node.peers_json()})


@_guard
async def tools(request: web.Request) -> web.StreamResponse:
    """List the tools offered in the mesh that the token may see."""
    token = require(request, READ_PERMISSION)
    node = mesh_node(request)
    capability = request.query.get("capability") or None
    return web.json_response({"tools": node.tools_json(capability, token.permissions)})


def setup(app: web.Application) -> None:
    """Add the mesh routes to ``app`` and document them."""
    watch_hang_ups(app)
    handlers = {
        "/v1/mesh/hello": hello,
        "/v1/mesh/gossip": gossip,
        "/v1/mesh/push": push,
        "/v1/mesh/invoke": invoke,
        "/v1/mesh/peers": peers,
        "/v1/mesh/tools": tools,
    }
    for method, path, summary in OPERATIONS:
        body = (
            {"type": "object", "description": "a signed mesh_envelope"}
            if method == "POST"
            else None
        )
        add_route(
            app,
            method,
            path,
            handlers[path],
            operation_id="mesh_" + path.rsplit("/", 1)[1],
            summary=summary,
            tags=("mesh",),
            request_body=body,
            parameters=PARAMETERS.get(path, ()),
            permission=READ_PERMISSION if method == "GET" else None,
            responses={"200": summary},
        )
