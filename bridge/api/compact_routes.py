"""HTTP calls of the compact profile (``bridge.matter.sync.compact``).

- ``POST /v1/compact/{tool}`` — body: the compact tool's arguments, e.g.
  ``{"target": "Desk lamp", "action": "brightness", "percent": 30}`` for ``lights``.
  The call is resolved to the per-device (or room) tool it stands for and runs through
  ``/v1/invoke``'s pipeline with the caller's token (same permission check, same
  confirmation, audit ``details.via``); the answer is that ``tool_response``, with the
  error's HTTP status on failure. ``home_state`` answers ``{"devices", "count"}`` for
  what the token may read (``{"area"}`` optional). ``GET /v1/tools?profile=compact``
  lists the tools.
"""

from __future__ import annotations

from dataclasses import replace

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import (
    SERVICE_KEY,
    json_response,
    read_json,
    response_json,
    service_of,
    until_hang_up,
    watch_hang_ups,
)
from bridge.api.openapi import add_route, path_param
from bridge.auth.permissions import PermissionChecker
from bridge.errors import InvalidRequestError, running
from bridge.invocation.messages import ToolRequest
from bridge.matter import STATE_TOOL, CompactProfile, compact_profile
from bridge.tools.definition import ToolDefinition

COMPACT_KEY: web.AppKey[CompactProfile] = web.AppKey("compact_profile", CompactProfile)
_CHECKER = PermissionChecker()


async def call_compact(request: web.Request) -> web.Response:
    """Run one compact call."""
    token = token_of(request)
    runtime = running(service_of(request).invocation, "invocation")
    body = await read_json(request)
    if not isinstance(body, dict):
        raise InvalidRequestError("request body must be a JSON object")
    granted = tuple(token.permissions)

    def allows(defn: ToolDefinition) -> bool:
        return _CHECKER.allows(granted, defn.requires.permissions, {})

    profile = request.app[COMPACT_KEY]
    name = request.match_info["tool"]
    if name == STATE_TOOL:
        return json_response(await profile.home_state(allows, profile.state_args(body)))
    resolved = profile.resolve(name, body, allows)
    call = replace(ToolRequest(tool=resolved.key, params=resolved.params), via=resolved.via)
    response = await until_hang_up(request, runtime.invoker.invoke(call, token=token))
    return response_json(response, {"via": resolved.via})


def setup(app: web.Application) -> None:
    """Add the compact call route and its profile (following the registry)."""
    watch_hang_ups(app)
    service = app[SERVICE_KEY]
    profile = compact_profile(service.registry, lambda: service.matter)
    profile.start()
    app[COMPACT_KEY] = profile

    async def stop(_app: web.Application) -> None:
        profile.stop()

    app.on_cleanup.append(stop)
    add_route(
        app,
        "POST",
        "/v1/compact/{tool}",
        call_compact,
        operation_id="callCompact",
        summary="Call a compact-profile tool (lights, climate, locks, covers, home_state)",
        tags=["tools"],
        parameters=[path_param("tool", "compact tool name")],
        responses={
            "200": "the resolved tool's tool_response (home_state: the state)",
            "400": "bad arguments",
            "403": "not permitted",
            "404": "no such tool or target",
        },
    )
