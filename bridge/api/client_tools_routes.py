"""``POST /v1/tool-results/{toolCallId}``: a client hands back the result of a client tool.

Body ``{"result": ...}`` or ``{"error": {"code", "message"}}``, with the token of the
agent that made the call. Answers 202 ``{"toolCallId", "accepted": true}``; refusals
(unknown call, another agent's call, a second or late result, a result that does not
match the tool's ``returns`` schema) are the errors described in
``bridge.sources.client_tools``.
"""

from __future__ import annotations

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param
from bridge.errors import InvalidRequestError

MAX_CALL_ID = 128


async def submit_result(request: web.Request) -> web.Response:
    """Give a waiting client-tool call its result."""
    token = token_of(request)
    call_id = request.match_info["call_id"]
    if not 0 < len(call_id) <= MAX_CALL_ID:
        raise InvalidRequestError(f"a toolCallId has 1-{MAX_CALL_ID} characters")
    body = await read_json(request)
    service_of(request).client_tools.submit(call_id, token.id, body)
    return json_response({"toolCallId": call_id, "accepted": True}, status=202)


def setup(app: web.Application) -> None:
    """Add the client-tool result route."""
    add_route(
        app,
        "POST",
        "/v1/tool-results/{call_id}",
        submit_result,
        operation_id="submitToolResult",
        summary="Hand back the result of a client tool this agent was asked to run",
        tags=["invoke"],
        parameters=[path_param("call_id", "the toolCallId of the tool_use")],
        request_body={
            "type": "object",
            "properties": {
                "result": {},
                "error": {
                    "type": "object",
                    "required": ["message"],
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                },
            },
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
        },
        responses={
            "202": "accepted",
            "404": "NOT_FOUND: no such call",
            "403": "PERMISSION_DENIED: another agent's call",
            "409": "CONFLICT: duplicate or late result",
            "400": "INVALID_PARAMS / INVALID_REQUEST: malformed or off-schema result",
        },
    )
