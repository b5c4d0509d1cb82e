"""``/v1/tokens``: list, issue and revoke the agent tokens this node signs.

No privilege grows by itself. A token with ``token:manage`` issues only subsets of
itself: permissions its own patterns cover, an expiry no later than its own, a rate
limit, hop limit and node list no looser than its own (left out, they are inherited),
and an agent id under its own (``<issuer-agent>/<name>``). The ledger records which
token issued which; a token may list and revoke what it issued (and what those issued),
and revoking a token revokes what it issued. An administrator's token (one that grants
``admin:tokens``) names agents freely and issues tokens that outlive it (as a root
token's orphans do), and may list and revoke every token.

Details: docs/modules.md, ``bridge.api.tokens_routes``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from aiohttp import web

from bridge.api.bearer import require
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param
from bridge.auth.permissions import covers, validate_pattern
from bridge.auth.tokens import (
    ADMIN_TOKENS_PERMISSION,
    SUBJECT_SEPARATOR,
    AgentToken,
    Constraints,
)
from bridge.errors import InvalidRequestError, PermissionDeniedError, running
from bridge.invocation.pipeline import Pipeline

MANAGE_PERMISSION = "token:manage"
ADMIN_PERMISSION = ADMIN_TOKENS_PERMISSION
# Issuing rounds times to milliseconds: an expiry equal to the issuer's may read 1 ms later.
EXPIRY_ROUNDING_S = 0.001
MAX_PERMISSIONS = 256
_BODY_KEYS = frozenset({"agent_id", "permissions", "ttl_s", "constraints"})
_CONSTRAINT_KEYS = frozenset({"max_hops", "allowed_nodes", "rate_limit_per_minute"})


def _runtime(request: web.Request) -> Pipeline:
    return running(service_of(request).invocation, "invocation")


def _int_or_none(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise InvalidRequestError(f"'{name}' must be an integer 0-1000000 or null")
    return value


def is_admin(token: AgentToken) -> bool:
    """Return whether ``token`` administers tokens (grants ``admin:tokens``)."""
    return any(covers(p, ADMIN_PERMISSION) for p in token.permissions)


def _constraints(doc: Any) -> Constraints:
    if doc is None:
        return Constraints()
    if not isinstance(doc, dict) or not set(doc) <= _CONSTRAINT_KEYS:
        raise InvalidRequestError(
            f"'constraints' is an object with keys {sorted(_CONSTRAINT_KEYS)}"
        )
    nodes = doc.get("allowed_nodes") or []
    if (
        not isinstance(nodes, list)
        or len(nodes) > 64
        or not all(isinstance(n, str) and 0 < len(n) <= 128 for n in nodes)
    ):
        raise InvalidRequestError("'allowed_nodes' is a list of up to 64 node ids")
    return Constraints(
        max_hops=_int_or_none(doc.get("max_hops"), "max_hops"),
        allowed_nodes=tuple(nodes),
        rate_limit_per_minute=_int_or_none(
            doc.get("rate_limit_per_minute"), "rate_limit_per_minute"
        ),
    )


def _subset(caller: AgentToken, asked: Constraints) -> Constraints:
    """Return ``asked`` with the caller's limits filled in; refuse any looser than the caller's."""
    own = caller.constraints
    looser: dict[str, Any] = {}
    hops = asked.max_hops if asked.max_hops is not None else own.max_hops
    if own.max_hops is not None and hops is not None and hops > own.max_hops:
        looser["max_hops"] = own.max_hops
    rate = (
        asked.rate_limit_per_minute
        if asked.rate_limit_per_minute is not None
        else own.rate_limit_per_minute
    )
    if (
        own.rate_limit_per_minute is not None
        and rate is not None
        and (rate > own.rate_limit_per_minute)
    ):
        looser["rate_limit_per_minute"] = own.rate_limit_per_minute
    nodes = asked.allowed_nodes or own.allowed_nodes
    if own.allowed_nodes and not set(nodes) <= set(own.allowed_nodes):
        looser["allowed_nodes"] = list(own.allowed_nodes)
    if looser:
        raise PermissionDeniedError(
            "a token may only issue tokens within its own limits: "
            + ", ".join(f"{k} at most {v}" for k, v in looser.items()),
            {"reason": "beyond_issuer", "limits": looser},
        )
    return Constraints(max_hops=hops, allowed_nodes=nodes, rate_limit_per_minute=rate)


def _agent_id(caller: AgentToken, name: str) -> str:
    """Return the agent id a non-administrator's new token gets: under the caller's own."""
    prefix = caller.agent_id + SUBJECT_SEPARATOR
    return name if name.startswith(prefix) else prefix + name


def _manages(runtime: Pipeline, caller: AgentToken, token_id: str) -> bool:
    """Return whether ``caller`` may see and revoke token ``token_id``."""
    return is_admin(caller) or token_id == caller.id or caller.id in runtime.issued_chain(token_id)


async def list_tokens(request: web.Request) -> web.Response:
    """List the tokens this node issued (no secrets); a non-administrator sees its own."""
    caller = require(request, MANAGE_PERMISSION)
    agent_id = request.query.get("agent_id")
    try:
        limit = int(request.query.get("limit", "100"))
    except ValueError as err:
        raise InvalidRequestError("'limit' must be an integer") from err
    runtime = _runtime(request)
    if is_admin(caller):
        tokens = runtime.list_tokens(agent_id=agent_id, limit=limit)
    else:
        tokens = [
            t
            for t in runtime.issued_tree(caller.id)
            if agent_id is None or t["agent_id"] == agent_id
        ][: max(1, min(limit, 10_000))]
    return json_response({"tokens": tokens})


async def issue(request: web.Request) -> web.Response:
    """Issue a token; answer it once."""
    caller = require(request, MANAGE_PERMISSION)
    body = await read_json(request)
    if (
        not isinstance(body, dict)
        or not set(body) <= _BODY_KEYS
        or not {"agent_id", "permissions", "ttl_s"} <= set(body)
    ):
        raise InvalidRequestError(
            "body is {agent_id, permissions, ttl_s, constraints?}", {"keys": sorted(_BODY_KEYS)}
        )
    agent_id, perms, ttl = body["agent_id"], body["permissions"], body["ttl_s"]
    if not isinstance(agent_id, str):
        raise InvalidRequestError("'agent_id' must be a string")
    if (
        not isinstance(perms, list)
        or len(perms) > MAX_PERMISSIONS
        or not all(isinstance(p, str) for p in perms)
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
    constraints = _constraints(body.get("constraints"))
    if not is_admin(caller):
        constraints = _subset(caller, constraints)
        if not agent_id:
            raise InvalidRequestError("agent_id must be 1-256 characters")
        agent_id = _agent_id(caller, agent_id)
        latest = caller.expires_at - time.time()
        if float(ttl) > latest + EXPIRY_ROUNDING_S:
            raise PermissionDeniedError(
                f"a token may only issue tokens that expire no later than itself: ttl_s at "
                f"most {max(0.0, latest):.0f}",
                {"reason": "beyond_issuer", "limits": {"ttl_s": max(0.0, round(latest, 3))}},
            )
    raw, entry = _runtime(request).issue(
        agent_id=agent_id,
        permissions=perms,
        ttl_s=float(ttl),
        constraints=constraints,
        issued_by=caller.id,
    )
    return json_response({**entry, "revoked": False, "token": raw}, status=201)


async def revoke(request: web.Request) -> web.Response:
    """Revoke a token by id: its own, one it issued, or (an administrator) any."""
    caller = require(request, MANAGE_PERMISSION)
    token_id = request.match_info["token_id"]
    runtime = _runtime(request)
    entry = runtime.token_view(token_id)  # NOT_FOUND first: the same for everyone
    if not _manages(runtime, caller, entry["id"]):
        raise PermissionDeniedError(
            "a token may revoke only itself and the tokens it issued; only an "
            f"administrator ('{ADMIN_PERMISSION}') may revoke others",
            {"required": ADMIN_PERMISSION},
        )
    return json_response(runtime.revoke(token_id))


_ENTRY = "{id, agent_id, permissions, issued_at, expires_at, issued_by, revoked}"


def setup(app: web.Application) -> None:
    """Add the token routes."""
    add_route(
        app,
        "GET",
        "/v1/tokens",
        list_tokens,
        operation_id="listTokens",
        summary=f"List tokens this node issued: {_ENTRY}, newest first (needs token:manage)",
        tags=["tokens"],
        permission=MANAGE_PERMISSION,
        parameters=[
            {"name": "agent_id", "in": "query", "required": False, "schema": {"type": "string"}},
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 1, "maximum": 10000},
            },
        ],
        responses={"200": "{tokens: [...]}", "403": "PERMISSION_DENIED"},
    )
    add_route(
        app,
        "POST",
        "/v1/tokens",
        issue,
        operation_id="issueToken",
        summary="Issue a token; the answer is the only time it is shown (needs token:manage)",
        tags=["tokens"],
        permission=MANAGE_PERMISSION,
        request_body={
            "type": "object",
            "required": ["agent_id", "permissions", "ttl_s"],
            "additionalProperties": False,
            "properties": {
                "agent_id": {"type": "string", "minLength": 1, "maxLength": 256},
                "permissions": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_PERMISSIONS,
                },
                "ttl_s": {"type": "number", "exclusiveMinimum": 0},
                "constraints": {"type": "object"},
            },
        },
        responses={
            "201": f"{_ENTRY} + token",
            "400": "INVALID_REQUEST",
            "403": "PERMISSION_DENIED",
        },
    )
    add_route(
        app,
        "DELETE",
        "/v1/tokens/{token_id}",
        revoke,
        operation_id="revokeToken",
        summary="Revoke a token this node issued, here and on every peer (needs token:manage)",
        tags=["tokens"],
        permission=MANAGE_PERMISSION,
        parameters=[path_param("token_id", "the token's id")],
        responses={"200": _ENTRY, "404": "NOT_FOUND"},
    )
