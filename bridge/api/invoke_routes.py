"""HTTP routes that run calls: invoke, jobs and approvals.

Details: docs/modules.md, ``bridge.api.invoke_routes``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bridge.api.bearer import require, token_of
from bridge.api.http import (
    json_response,
    read_json,
    response_json,
    service_of,
    until_hang_up,
    watch_hang_ups,
)
from bridge.api.openapi import add_route, json_content, path_param, query_param
from bridge.auth.approvals import APPROVE_PERMISSION
from bridge.errors import InvalidRequestError, running
from bridge.invocation.messages import ToolRequest
from bridge.invocation.pipeline import Pipeline

# The most approvals one page lists (the console reads every page of the pending ones).
MAX_APPROVALS_PAGE = 500

# The invoke body is the ``tool_invoke`` message: its one schema and check, shared with
# the call socket, MCP and the mesh (``ToolRequest.CHECK``).
INVOKE_BODY = ToolRequest.CHECK
DECISION_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["decision"],
    "additionalProperties": False,
    "properties": {"decision": {"enum": ["approve", "deny"]}},
}


def _runtime(request: web.Request) -> Pipeline:
    return running(service_of(request).invocation, "invocation")


async def parse_invoke(request: web.Request) -> ToolRequest:
    """Read an invoke body (checked as it is read by the route's ``ToolRequest.CHECK``).

    Raise ``InvalidRequestError`` for a body off the ``tool_invoke`` schema, and for one
    carrying ``auth``: over HTTP the token is the ``Authorization`` header's, never a
    second one in the body.
    """
    body = await read_json(request)
    if body.get("auth") is not None:
        raise InvalidRequestError(
            "send the token in the Authorization header, not in the body",
            {"reason": "token_in_body", "field": "auth"},
        )
    return ToolRequest.from_checked(body)


async def invoke(request: web.Request) -> web.Response:
    """Run one call and answer its ``tool_response``."""
    token = token_of(request)
    call = await parse_invoke(request)
    # a client that hangs up cancels its call
    response = await until_hang_up(request, _runtime(request).invoker.invoke(call, token=token))
    return response_json(response)


async def submit_job(request: web.Request) -> web.Response:
    """Start a call as a job and answer the job at once."""
    token = token_of(request)
    call = await parse_invoke(request)
    job = await _runtime(request).jobs.submit(call, token)
    return json_response(job.to_json(), status=202)


async def get_job(request: web.Request) -> web.Response:
    """Answer a job's status and, when done, its response."""
    job = await _runtime(request).jobs.get(request.match_info["job_id"], token_of(request))
    return json_response(job.to_json())


async def cancel_job(request: web.Request) -> web.Response:
    """Cancel a running job."""
    job = await _runtime(request).jobs.cancel(request.match_info["job_id"], token_of(request))
    return json_response(job.to_json())


async def list_approvals(request: web.Request) -> web.Response:
    """List approvals (``?status=pending`` for those waiting)."""
    require(request, APPROVE_PERMISSION)
    unknown = sorted(set(request.query) - {"status", "limit", "offset"})
    if unknown:
        raise InvalidRequestError(f"unknown query parameter(s): {', '.join(unknown)}")
    limit = _int_query(request, "limit", 100, 1, MAX_APPROVALS_PAGE)
    offset = _int_query(request, "offset", 0, 0, 1_000_000)
    store = _runtime(request).approvals
    status = request.query.get("status")
    approvals = await store.list(status=status, limit=limit, offset=offset)
    total = await store.count(status)
    after = offset + len(approvals)
    # Approvers see each token's state now: valid, revoked or expired.
    return json_response(
        {
            "approvals": [store.view(a) for a in approvals],
            "count": len(approvals),
            "total": total,
            "next_offset": after if after < total else None,
        }
    )


def _int_query(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query.get(name)
    if text is None:
        return default
    if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
        raise InvalidRequestError(
            f"'{name}' must be an integer from {low} to {high}", {"parameter": name}
        )
    return int(text)


async def decide_approval(request: web.Request) -> web.Response:
    """Approve or deny a pending approval."""
    token = require(request, APPROVE_PERMISSION)
    body = await read_json(request)
    if not isinstance(body, dict) or set(body) != {"decision"}:
        raise InvalidRequestError('body must be {"decision": "approve" | "deny"}')
    if not isinstance(body["decision"], str):
        raise InvalidRequestError("decision must be 'approve' or 'deny'")
    store = _runtime(request).approvals
    approval = await store.decide(request.match_info["approval_id"], token, body["decision"])
    return json_response(store.view(approval))


_ERRORS = {
    "400": "malformed body (INVALID_REQUEST) or parameters (INVALID_PARAMS)",
    "401": "missing or invalid token",
    "403": "permission denied",
}


def setup(app: web.Application) -> None:
    """Add the invocation routes."""
    watch_hang_ups(app)
    add_route(
        app,
        "POST",
        "/v1/invoke",
        invoke,
        operation_id="invokeTool",
        summary="Call a tool and wait for its tool_response",
        tags=["invoke"],
        request_body=INVOKE_BODY,
        responses={
            "200": json_content("the tool_response", "ToolResponse"),
            **_ERRORS,
            "404": "no such tool",
            "409": "ambiguous tool or idempotency conflict",
            "429": "rate limited",
            "408": "confirmation timed out",
            "502": "the tool failed",
            "503": "device or node unavailable",
            "504": "the tool timed out",
        },
    )
    add_route(
        app,
        "POST",
        "/v1/jobs",
        submit_job,
        operation_id="submitJob",
        summary="Start a call as a background job",
        tags=["invoke"],
        request_body=INVOKE_BODY,
        responses={
            "202": "the job",
            **_ERRORS,
            "400": "malformed body (INVALID_REQUEST), or the tool does not allow "
            "asynchronous invocation (INVALID_REQUEST, details.reason "
            "async_not_allowed)",
        },
    )
    add_route(
        app,
        "GET",
        "/v1/jobs/{job_id}",
        get_job,
        operation_id="getJob",
        summary="A job's status and result",
        tags=["invoke"],
        parameters=[path_param("job_id", "the job id")],
        responses={"200": "the job", **_ERRORS, "404": "no such job"},
    )
    add_route(
        app,
        "DELETE",
        "/v1/jobs/{job_id}",
        cancel_job,
        operation_id="cancelJob",
        summary="Cancel a running job",
        tags=["invoke"],
        parameters=[path_param("job_id", "the job id")],
        responses={
            "200": "the cancelled job",
            **_ERRORS,
            "404": "no such job",
            "409": "the job already ended",
        },
    )
    add_route(
        app,
        "GET",
        "/v1/approvals",
        list_approvals,
        operation_id="listApprovals",
        permission=APPROVE_PERMISSION,
        summary="Approvals of dangerous calls",
        tags=["approvals"],
        parameters=[
            query_param(
                "status",
                "only this status",
                {"enum": ["pending", "approved", "denied", "timeout", "interrupted", "cancelled"]},
            ),
            query_param(
                "limit",
                f"page size (1-{MAX_APPROVALS_PAGE}, default 100)",
                {"type": "integer", "minimum": 1, "maximum": MAX_APPROVALS_PAGE},
            ),
            query_param(
                "offset",
                "skip this many of the newest (default 0)",
                {"type": "integer", "minimum": 0},
            ),
        ],
        responses={
            "200": "a page of approvals, newest first: {approvals, count, "
            "total, next_offset (null on the last page)}",
            **_ERRORS,
        },
    )
    add_route(
        app,
        "POST",
        "/v1/approvals/{approval_id}",
        decide_approval,
        operation_id="decideApproval",
        summary="Approve or deny a dangerous call",
        permission=APPROVE_PERMISSION,
        tags=["approvals"],
        parameters=[path_param("approval_id", "the approval id")],
        request_body=DECISION_BODY,
        responses={
            "200": "the approval after the vote",
            **_ERRORS,
            "404": "no such approval",
            "409": "already decided or voted",
        },
    )
