"""The seed's ToolManager surface over HTTP: ``listTools``, ``getTool``, ``executeTool``.

Details: docs/modules.md, ``bridge.api.toolmanager_routes``.
"""

from __future__ import annotations

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import json_response, service_of
from bridge.api.invoke_routes import INVOKE_BODY, invoke
from bridge.api.openapi import add_route, path_param, query_param
from bridge.api.tools_routes import tool_json
from bridge.auth.visibility import may_see
from bridge.errors import InvalidRequestError, ToolNotFoundError
from bridge.tools.registry import RegisteredTool

_KNOWN_QUERY = frozenset({"appId", "serverName"})


def app_id(entry: RegisteredTool) -> str:
    """Return the app a tool belongs to: ``metadata.app_id``, else its namespace."""
    named = entry.definition.metadata.get("app_id")
    return named if isinstance(named, str) and named else entry.definition.namespace


async def list_tools(request: web.Request) -> web.Response:
    """List tools in the flat view, filtered by ``appId`` and ``serverName``."""
    unknown = sorted(set(request.query) - _KNOWN_QUERY)
    if unknown:
        raise InvalidRequestError(
            f"unknown query parameter(s): {', '.join(unknown)}",
            {"unknown": unknown, "allowed": sorted(_KNOWN_QUERY)},
        )
    wanted_app = request.query.get("appId")
    server = request.query.get("serverName")
    if wanted_app == "":
        raise InvalidRequestError("appId must not be empty")
    registry = service_of(request).registry
    entries = registry.list(server_name=server) if server is not None else registry.list()
    granted = tuple(token_of(request).permissions)
    entries = [e for e in entries if may_see(granted, e.definition)]
    if wanted_app is not None:
        entries = [e for e in entries if app_id(e) == wanted_app]
    tools = [{**tool_json(e, "flat"), "appId": app_id(e)} for e in entries]
    return json_response({"tools": tools, "count": len(tools)})


async def get_tool(request: web.Request) -> web.Response:
    """Answer ``found`` and the tool, or ``found: false``."""
    name = request.match_info["name"]
    registry = service_of(request).registry
    try:
        entry = registry.get(name) or registry.resolve(name)
    except ToolNotFoundError:
        return json_response({"found": False, "name": name})
    if not may_see(tuple(token_of(request).permissions), entry.definition):
        return json_response({"found": False, "name": name})
    return json_response(
        {"found": True, "tool": {**tool_json(entry, "flat"), "appId": app_id(entry)}}
    )


def setup(app: web.Application) -> None:
    """Add the ToolManager routes."""
    add_route(
        app,
        "GET",
        "/v1/toolmanager/tools",
        list_tools,
        operation_id="toolManagerListTools",
        summary="ToolManager listTools: flat view, filtered by appId and serverName",
        tags=["toolmanager"],
        parameters=[
            query_param("appId", "metadata.app_id, else the namespace"),
            query_param("serverName", "the providing node or MCP server"),
        ],
    )
    add_route(
        app,
        "GET",
        "/v1/toolmanager/tools/{name}",
        get_tool,
        operation_id="toolManagerGetTool",
        summary="ToolManager getTool: {found, tool}",
        tags=["toolmanager"],
        parameters=[path_param("name", "tool reference")],
    )
    add_route(
        app,
        "POST",
        "/v1/toolmanager/execute",
        invoke,
        operation_id="toolManagerExecuteTool",
        summary="ToolManager executeTool: the same as POST /v1/invoke",
        tags=["toolmanager"],
        request_body=INVOKE_BODY,
    )
