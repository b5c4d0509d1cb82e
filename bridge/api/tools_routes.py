"""HTTP routes of the tool catalogue: health, listing with filters and search, one tool.

Details: docs/modules.md, ``bridge.api.tools_routes``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import json_response, service_of
from bridge.api.openapi import add_route, path_param, query_param
from bridge.auth.visibility import may_see
from bridge.errors import InvalidRequestError, ToolNotFoundError
from bridge.matter import PROFILES, compact_profile
from bridge.tools.definition import Category
from bridge.tools.registry import RegisteredTool

MAX_LIMIT = 100
_FILTERS = ("namespace", "server_name", "capability", "category", "tag")
_KNOWN_QUERY = frozenset({*_FILTERS, "available", "q", "limit", "view", "profile"})


def tool_json(entry: RegisteredTool, view: str = "full") -> dict[str, Any]:
    """Return the API form of a registered tool (``full`` or ``flat``)."""
    if view == "flat":
        return {"identity": entry.identity, "available": entry.available, **entry.definition.flat()}
    return {
        "identity": entry.identity,
        "available": entry.available,
        "local": entry.handler is not None,
        **entry.definition.to_json(),
    }


def _view(request: web.Request) -> str:
    view = request.query.get("view", "full")
    if view not in ("full", "flat"):
        raise InvalidRequestError("view must be 'full' or 'flat'", {"view": view})
    return view


async def healthz(request: web.Request) -> web.Response:
    """Return the service's status."""
    return json_response(service_of(request).status())


async def list_tools(request: web.Request) -> web.Response:
    """List tools with filters, or rank them by ``q``."""
    query = request.query
    unknown = sorted(set(query) - _KNOWN_QUERY)
    if unknown:
        raise InvalidRequestError(
            f"unknown query parameter(s): {', '.join(unknown)}",
            {"unknown": unknown, "allowed": sorted(_KNOWN_QUERY)},
        )
    filters: dict[str, Any] = {name: query[name] for name in _FILTERS if name in query}
    if "category" in filters and filters["category"] not in {c.value for c in Category}:
        raise InvalidRequestError(
            f"unknown category '{filters['category']}'",
            {"allowed": [c.value for c in Category]},
        )
    if "available" in query:
        text = query["available"].lower()
        if text not in ("true", "false"):
            raise InvalidRequestError("available must be 'true' or 'false'")
        filters["available"] = text == "true"
    view = _view(request)
    registry = service_of(request).registry
    granted = tuple(token_of(request).permissions)
    profile = query.get("profile", "per-device")
    if profile not in PROFILES:
        raise InvalidRequestError(
            f"profile must be one of: {', '.join(PROFILES)}", {"profile": profile}
        )
    if profile == "compact":
        if "q" in query or "limit" in query:
            raise InvalidRequestError("q and limit apply only to the per-device profile")
        return json_response(_compact(request, view))
    if "q" not in query:
        if "limit" in query:
            raise InvalidRequestError("limit applies only with q")
        entries = [e for e in registry.list(**filters) if may_see(granted, e.definition)]
        return json_response(
            {"tools": [tool_json(e, view) for e in entries], "count": len(entries)}
        )
    q = query["q"].strip()
    if not q:
        raise InvalidRequestError("q must not be empty")
    try:
        limit = int(query.get("limit", "10"))
    except ValueError as err:
        raise InvalidRequestError("limit must be an integer") from err
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequestError(f"limit must be between 1 and {MAX_LIMIT}")
    allowed = {e.identity for e in registry.list(**filters) if may_see(granted, e.definition)}
    ranked = registry.discover(q, limit=len(registry))
    results = [
        {**tool_json(entry, view), "score": score}
        for entry, score in ranked
        if entry.identity in allowed
    ][:limit]
    return json_response({"tools": results, "count": len(results), "query": q})


def _compact(request: web.Request, view: str) -> dict[str, Any]:
    """Return the compact profile's tools the caller's token reaches."""
    service = service_of(request)
    granted = tuple(token_of(request).permissions)
    profile = compact_profile(service.registry, lambda: service.matter)
    # The one listing rule (bridge.auth.visibility), as for the per-device tools.
    defns = profile.tools_for(lambda d: may_see(granted, d))
    tools = [
        {"identity": d.identity, "available": True, **(d.flat() if view == "flat" else d.to_json())}
        for d in defns
    ]
    return {"tools": tools, "count": len(tools), "profile": "compact"}


async def get_tool(request: web.Request) -> web.Response:
    """Return one tool by identity or reference."""
    ref = request.match_info["ref"]
    version = request.query.get("version")
    service = service_of(request)
    entry = service.registry.get(ref) if version is None else None
    if entry is None:
        entry = service.registry.resolve(ref, version)
    if not may_see(tuple(token_of(request).permissions), entry.definition):
        # The same answer as for a tool that does not exist: listing follows permission.
        raise ToolNotFoundError(f"no tool '{ref[:200]}'", {"ref": ref[:200]})
    return json_response(tool_json(entry, _view(request)))


def setup(app: web.Application) -> None:
    """Add the catalogue routes."""
    add_route(
        app,
        "GET",
        "/healthz",
        healthz,
        operation_id="getHealth",
        summary="Service health: ok, degraded (with problems) or starting",
        tags=["meta"],
    )
    app.router.add_route("HEAD", "/healthz", healthz)  # load balancers probe with HEAD
    add_route(
        app,
        "GET",
        "/v1/tools",
        list_tools,
        operation_id="listTools",
        summary="List tools (filters) or search them (q)",
        tags=["tools"],
        parameters=[
            query_param("namespace", "only this namespace"),
            query_param("server_name", "only tools provided by this node or server"),
            query_param("capability", "only tools requiring this capability"),
            query_param("category", "only this category", {"enum": [c.value for c in Category]}),
            query_param("tag", "only tools with this tag"),
            query_param("available", "only (un)available tools", {"type": "boolean"}),
            query_param("q", "free-text query; results ranked by relevance"),
            query_param(
                "limit",
                "maximum results with q",
                {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            ),
            query_param("view", "full definitions or the flat view", {"enum": ["full", "flat"]}),
            query_param(
                "profile",
                "per-device tools (default) or the compact capability tools the token reaches",
                {"enum": list(PROFILES)},
            ),
        ],
        responses={"200": "the tools and their count"},
    )
    add_route(
        app,
        "GET",
        "/v1/tools/{ref}",
        get_tool,
        operation_id="getTool",
        summary="One tool by identity or [namespace:]name[@version]",
        tags=["tools"],
        parameters=[
            path_param("ref", "identity or reference"),
            query_param("version", "version constraint, e.g. >=1.0.0"),
            query_param("view", "full definition or the flat view", {"enum": ["full", "flat"]}),
        ],
        responses={"200": "the tool", "404": "no such tool", "409": "ambiguous name"},
    )
