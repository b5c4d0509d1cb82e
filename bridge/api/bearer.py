"""Bearer-token authentication for the HTTP API.

Every request needs ``Authorization: Bearer <token>`` with a token the node's verifier
accepts, except ``GET /healthz`` and the mesh's node-to-node routes
(``POST /v1/mesh/hello|gossip|push|invoke``): a challenge for this node's signed proof
and signed node envelopes checked by ``bridge/mesh`` (a forwarded call carries a signed
delegation, never a token). A WebSocket upgrade on ``GET /v1/events`` may pass the token as
``?token=`` because browsers cannot set headers there. The verified ``AgentToken`` is
kept on the request under ``AGENT_SLOT``; ``token_of(request)`` returns it. Every
rejection is counted in the audit log's per-minute rejection counters: under the
token's id (``token:<id>``) when the refused token is genuine (revoked, expired, rate
limited, or a re-spelling of a real token), under the client's address otherwise.

Every route charges the token's rate limit, once per request, except those whose calls
the pipeline charges itself, once per call (``CALL_ROUTES``: invoke, jobs, MCP).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bridge.api.http import service_of
from bridge.api.request_token import AGENT_SLOT, token_of
from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken
from bridge.errors import (
    BridgeError,
    PermissionDeniedError,
    RateLimitedError,
    UnauthenticatedError,
    running,
)

__all__ = ["AGENT_SLOT", "token_of"]

PUBLIC_ROUTES = frozenset({("GET", "/healthz"), ("HEAD", "/healthz")})
NODE_SIGNED_ROUTES = frozenset(
    {
        ("POST", "/v1/mesh/hello"),
        ("POST", "/v1/mesh/gossip"),
        ("POST", "/v1/mesh/push"),
        ("POST", "/v1/mesh/invoke"),
    }
)
QUERY_TOKEN_PATHS = frozenset({"/v1/events"})
# Charged per call by the invoker (``Invoker.charge``), not per request here.
CALL_ROUTES = frozenset({("POST", "/v1/invoke"), ("POST", "/v1/jobs")})
CALL_PREFIXES = ("/mcp",)
RAW_TOKEN_SLOT: web.RequestKey[str] = web.RequestKey("atmosphere.raw_token", str)
# The web console's pages check its own session (bridge.console); its data comes from /v1/.
CONSOLE_PREFIX = "/console/"
MAX_AUTH_HEADER = 16_500


def reverify(request: web.Request) -> AgentToken:
    """Verify ``request``'s token again, now; raise ``UnauthenticatedError`` if no longer valid.

    For long-lived connections (WebSockets): the same verifier as every request, so
    expiry (and whatever else it checks, such as revocation) holds on open sockets too.
    """
    raw = request.get(RAW_TOKEN_SLOT)
    runtime = running(service_of(request).invocation, "invocation")
    if not isinstance(raw, str):
        raise UnauthenticatedError("the token can no longer be verified", {"reason": "missing"})
    return runtime.verifier.verify(raw)


def require(request: web.Request, permission: str) -> AgentToken:
    """Return the request's token if it grants ``permission``; raise ``PERMISSION_DENIED``."""
    token = token_of(request)
    if not any(covers(p, permission) for p in token.permissions):
        raise PermissionDeniedError(f"this needs '{permission}'", {"required": permission})
    return token


def _raw_token(request: web.Request) -> str:
    header = request.headers.get("Authorization")
    if header is not None:
        if len(header) > MAX_AUTH_HEADER:
            raise UnauthenticatedError("authorization header is too long", {"reason": "malformed"})
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise UnauthenticatedError(
                "authorization must be 'Bearer <token>'", {"reason": "malformed"}
            )
        return value.strip()
    if request.path in QUERY_TOKEN_PATHS and request.query.get("token"):
        return request.query["token"]
    raise UnauthenticatedError(
        "a bearer token is required: send 'Authorization: Bearer <token>'",
        {"reason": "missing"},
    )


@web.middleware
async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Verify the bearer token of every request that needs one."""
    route = (request.method, request.path)
    if (
        route in PUBLIC_ROUTES
        or route in NODE_SIGNED_ROUTES
        or request.path == "/"
        or request.path.startswith(CONSOLE_PREFIX)
    ):
        response: web.StreamResponse = await handler(request)
        return response

    runtime = running(service_of(request).invocation, "invocation")
    try:
        raw = _raw_token(request)
        token = runtime.verifier.verify(raw)
        request[AGENT_SLOT] = token
        request[RAW_TOKEN_SLOT] = raw
        if route not in CALL_ROUTES and not request.path.startswith(CALL_PREFIXES):
            runtime.invoker.charge(token)
    except (UnauthenticatedError, RateLimitedError) as err:
        count_refusal(request, err)
        raise
    response = await handler(request)
    return response


def count_refusal(request: web.Request, err: BridgeError) -> None:
    """Count a refused credential: under its token id when it names one, else the address.

    Counted per source and minute: junk from the LAN must not grow the log forever.
    """
    runtime = service_of(request).invocation
    if runtime is None:
        return
    token_id = err.details.get("token_id")
    if isinstance(err, RateLimitedError):
        token = request.get(AGENT_SLOT)
        token_id = token.id if isinstance(token, AgentToken) else token_id
    source = f"token:{token_id}" if isinstance(token_id, str) else request.remote
    reason = "rate_limited" if isinstance(err, RateLimitedError) else err.details.get("reason")
    runtime.audit.count_rejection(source, str(reason))
