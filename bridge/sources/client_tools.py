"""Client tools: tools of type ``client`` that the calling client runs itself.

A client (a voice satellite, an agent UI) opens ``GET /v1/events`` with its token
(``?session=ID`` ties the socket to a session). When a call to a client tool reaches the
execute step, the broker's handler publishes a ``tool_use`` event
``{toolCallId, tool, params, agentId, sessionId, requiresResponse, timeoutMs}`` that only
that caller's sockets receive (same token, by id; same session when the call names one).

Details: docs/modules.md, ``bridge.sources.client_tools``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bridge.errors import (
    ClientUnavailableError,
    ConflictError,
    InvalidParamsError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    ToolFailedError,
)
from bridge.events import EventBus
from bridge.tools.context import CallContext, Handler
from bridge.tools.definition import ToolDefinition
from bridge.tools.validation import validator_for

TOOL_USE = "tool_use"
REMEMBERED = 4096  # finished call ids kept to tell "late"/"duplicate" from "unknown"


@dataclass(slots=True)
class _Pending:
    token_id: str
    definition: ToolDefinition
    future: asyncio.Future[Any] = field(repr=False)


class ClientToolBroker:
    """Hand client-tool calls to the caller's sockets and their results back to the calls."""

    def __init__(self, events: EventBus) -> None:
        self.events = events
        self._sockets: dict[tuple[str, str | None], int] = {}
        self._pending: dict[str, _Pending] = {}
        self._finished: OrderedDict[str, tuple[str, str]] = OrderedDict()  # id -> (token, why)

    # -- sockets ----------------------------------------------------------------------

    @contextlib.contextmanager
    def connected(self, token_id: str, session_id: str | None) -> Iterator[None]:
        """Count a socket of token ``token_id`` (and session) as able to run client tools."""
        key = (token_id, session_id)
        self._sockets[key] = self._sockets.get(key, 0) + 1
        try:
            yield
        finally:
            self._sockets[key] -= 1
            if not self._sockets[key]:
                del self._sockets[key]

    def reachable(self, token_id: str | None, session_id: str | None) -> bool:
        """Return whether a socket that would receive this caller's ``tool_use`` is open."""
        if not token_id:
            return False
        if session_id is None:
            return any(owner == token_id for owner, _ in self._sockets)
        return (token_id, session_id) in self._sockets

    # -- calls ------------------------------------------------------------------------

    def handler(self, definition: ToolDefinition) -> Handler:
        """Return the execute-step handler of a client tool."""

        async def handle(params: dict[str, Any], ctx: CallContext) -> Any:
            return await self.run(definition, params, ctx)

        return handle

    async def run(
        self, definition: ToolDefinition, params: dict[str, Any], ctx: CallContext
    ) -> Any:
        """Emit ``tool_use`` and return the client's result (or the default at once)."""
        extra = definition.execution.extra
        wait = bool(extra.get("requires_response", False))
        call_id = ctx.call_id
        data = {
            "toolCallId": call_id,
            "tool": definition.identity,
            "params": params,
            "agentId": ctx.agent_id,
            "tokenId": ctx.token_id,
            "sessionId": ctx.session_id,
            "requiresResponse": wait,
            "timeoutMs": definition.execution.timeout_ms,
        }
        if not wait:
            self.events.publish(TOOL_USE, data)
            return extra.get("default_result")
        if not self.reachable(ctx.token_id, ctx.session_id):
            raise ClientUnavailableError(
                f"'{definition.identity}' runs on the calling client, and none of its "
                "event sockets is connected (open GET /v1/events first)",
                {"tool": definition.identity, "session_id": ctx.session_id},
            )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = _Pending(
            token_id=ctx.token_id, definition=definition, future=future
        )
        try:
            self.events.publish(TOOL_USE, data)
            # The pipeline's own timeout (execution.timeout_ms) cancels this wait.
            return await future
        finally:
            self._pending.pop(call_id, None)
            why = "answered" if future.done() and not future.cancelled() else "late"
            self._remember(call_id, ctx.token_id, why)

    def submit(self, call_id: str, token_id: str, body: Any) -> None:
        """Hand a client's answer to its waiting call; raise when it must be refused.

        Only the token that made the call (``token_id``) may answer it.
        """
        if (
            not isinstance(body, dict)
            or len(set(body) & {"result", "error"}) != 1
            or set(body) - {"result", "error"}
        ):
            raise InvalidRequestError(
                'the body must be {"result": ...} or {"error": {"code", "message"}}'
            )
        error = body.get("error")
        if "error" in body and (
            not isinstance(error, dict) or not isinstance(error.get("message"), str)
        ):
            raise InvalidRequestError('\'error\' must be {"code", "message"}')
        pending = self._pending.get(call_id)
        if pending is None:
            finished = self._finished.get(call_id)
            if finished is None:
                raise NotFoundError(f"no client tool call '{call_id}'", {"toolCallId": call_id})
            owner, why = finished
            if owner != token_id:
                raise PermissionDeniedError("this call belongs to another token")
            reason = "duplicate" if why == "answered" else "late"
            message = (
                "this call already has its result"
                if reason == "duplicate"
                else "this call timed out before the result arrived"
            )
            raise ConflictError(message, {"toolCallId": call_id, "reason": reason})
        if pending.token_id != token_id:
            raise PermissionDeniedError("this call belongs to another token")
        if isinstance(error, dict):
            failure = ToolFailedError(
                f"the client reported: {error['message']}",
                {"client_code": str(error.get("code", ""))},
            )
            pending.future.set_exception(failure)
        else:
            result = body["result"]
            returns = pending.definition.returns
            if returns is not None:
                problems = validator_for(returns).errors(result)
                if problems:
                    first = problems[0]
                    raise InvalidParamsError(
                        "the result does not match the tool's returns schema: "
                        f"{first['path']}: {first['message']}",
                        {"errors": problems},
                    )
            pending.future.set_result(result)
        self._pending.pop(call_id, None)
        self._remember(call_id, token_id, "answered")

    def _remember(self, call_id: str, token_id: str, why: str) -> None:
        self._finished[call_id] = (token_id, why)
        self._finished.move_to_end(call_id)
        while len(self._finished) > REMEMBERED:
            self._finished.popitem(last=False)
