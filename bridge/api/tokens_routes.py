"""``/v1/tokens``: list, issue and revoke the agent tokens this node signs.

Details: docs/modules.md, ``bridge.api.tokens_routes``.
"""

from __future__ import annotations

import math
from typing import Any

from aiohttp import web

from bridge.api.bearer import require
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param
from bridge.auth.permissions import covers, validate_pattern
from bridge.auth.tokens import Constraints
from bridge.errors import InvalidRequestError, PermissionDeniedError, UnauthenticatedError
from bridge.invocation.pipeline import Pipeline

MANAGE_PERMISSION = "token:manage"
MAX_PERMISSIONS = 256
_BODY_KEYS = frozenset({"agent_id", "permissions", "ttl_s", "constraints"})
_CONSTRAINT_KEYS = frozenset({"max_hops", "allowed_nodes", "rate_limit_per_minute"})


def _runtime(request: web.Request) -> Pipeline:
    runtime = service_of(request).invocation
    if runtime is None:
        raise UnauthenticatedError(
            "this node cannot manage tokens (invocation is not running)", {"reason": "no_verifier"}
        )
    return runtime


def _int_or_none(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise InvalidRequestError(f"'{name}' must be an integer 0-1000000 or null")
    return value


def _constraints(doc: Any) -> Constraints:
    if doc is None:
        return Constraints()
    if not isinstance(doc, dict) or not set(doc) <= _CONSTRAINT_KEYS:
        raise InvalidRequestError(
            f"'constraints' is an object with keys {sorted(_CONSTRAINT_KEYS)}"
        )
    nodes = doc.get("allowed_nodes") or []
    if not isinstance(nodes, list) or len(nodes) > 64 or not all(
        isinstance(n, str) and 0 < len(n) <= 128 for n in nodes
    ):
        raise InvalidRequestError("'allowed_nodes' is a list of up to 64 node ids")
    return Constraints(
        max_hops=_int_or_none(doc.get("max_hops"), "max_hops"),
        allowed_nodes=tuple(nodes),
        rate_limit_per_minute=_int_or_none(
            doc.get("rate_limit_per_minute"), "rate_limit_per_minute"
        ),
    )


async def list_tokens(request: web.Request) -> web.Response:
    """List the tokens this node issued (no secrets)."""
    require(request, MANAGE_PERMISSION)
    agent_id = request.query.get("agent_id")
    try:
        limit = int(request.query.get("limit", "100"))
    except ValueError as err:
        raise InvalidRequestError("'limit' must be an integer") from err
    tokens = _runtime(request).list_tokens(agent_id=agent_id, limit=limit)
    return json_response({"tokens": tokens})


async def issue(request: web.Request) -> web.Response:
    """Issue a token; answer it once."""
    caller = require(request, MANAGE_PERMISSION)
    body = await read_json(request)
    if not isinstance(body, dict) or not set(body) <= _BODY_KEYS or not {
        "agent_id", "permissions", "ttl_s"
    } <= set(body):
        raise InvalidRequestError(
            "body is {agent_id, permissions, ttl_s, constraints?}", {"keys": sorted(_BODY_KEYS)}
        )
    agent_id, perms, ttl = body["agent_id"], body["permissions"], body["ttl_s"]
    if not isinstance(agent_id, str):
        raise InvalidRequestError("'agent_id' must be a string")
    if not isinstance(perms, list) or len(perms) > MAX_PERMISSIONS or not all(
        isinstance(p, str) for p in perms
    ):
        raise InvalidRequestError(f"'permissions' is a list of up to {MAX_PERMISSIONS} patterns")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
        raise InvalidRequestError("'ttl_s' must be a number of seconds")
    for perm in perms:
        validate_pattern(perm)
    beyond = [p for p in perms if not any(covers(g, p) for g in caller.permissions)]
    if beyond:
        raise PermissionDeniedError(
            "a token may only grant what the caller's own token grants",
            {"not_covered": beyond[:16]},
        )
    raw, entry = _runtime(request).issue(
        agent_id=agent_id, permissions=perms, ttl_s=float(ttl),
        constraints=_constraints(body.get("constraints")),
    )
    return json_response({**entry, "revoked": False, "token": raw}, status=201)


async def revoke(request: web.Request) -> web.Response:
    """Revoke a token by id."""
    require(request, MANAGE_PERMISSION)
    token_id = request.match_info["token_id"]
    return json_response(_runtime(request).revoke(token_id))


_ENTRY = "{id, agent_id, permissions, issued_at, expires_at, revoked}"


def setup(app: web.Application) -> None:
    """Add the token routes."""
    add_route(
        app, "GET", "/v1/tokens", list_tokens, operation_id="listTokens",
        summary=f"List tokens this node issued: {_ENTRY}, newest first (needs token:manage)",
        tags=["tokens"], permission=MANAGE_PERMISSION,
        parameters=[
            {"name": "agent_id", "in": "query", "required": False, "schema": {"type": "string"}},
            {"name": "limit", "in": "query", "required": False,
             "schema": {"type": "integer", "minimum": 1, "maximum": 10000}},
        ],
        responses={"200": "{tokens: [...]}", "403": "PERMISSION_DENIED"},
    )
    add_route(
        app, "POST", "/v1/tokens", issue, operation_id="issueToken",
        summary="Issue a token; the answer is the only time it is shown (needs token:manage)",
        tags=["tokens"], permission=MANAGE_PERMISSION,
        request_body={
            "type": "object", "required": ["agent_id", "permissions", "ttl_s"],
            "additionalProperties": False,
            "properties": {
                "agent_id": {"type": "string", "minLength": 1, "maxLength": 256},
                "permissions": {"type": "array", "items": {"type": "string"},
                                "maxItems": MAX_PERMISSIONS},
                "ttl_s": {"type": "number", "exclusiveMinimum": 0},
                "constraints": {"type": "object"},
            },
        },
        responses={"201": f"{_ENTRY} + token", "400": "INVALID_REQUEST",
                   "403": "PERMISSION_DENIED"},
    )
    add_route(
        app, "DELETE", "/v1/tokens/{token_id}", revoke, operation_id="revokeToken",
        summary="Revoke a token this node issued, here and on every peer (needs token:manage)",
        tags=["tokens"], permission=MANAGE_PERMISSION,
        parameters=[path_param("token_id", "the token's id")],
        responses={"200": _ENTRY, "404": "NOT_FOUND"},
    )  # fmt: skip
