"""The tool-call lifecycle: ``initiated → running → completed | error | cancelled``, on the bus.

Every transition of a call is published as a ``tool_call.status`` event whose data is
the call's wire form (``toolCallId``, ``status``, ``tool``, ``agentId``, ``resultJson``,
``error{code,message}``), so WebSocket clients can stream progress. The wire form is
built only while somebody subscribes to ``tool_call.status``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bridge.errors import BridgeError
from bridge.events import EventBus

EVENT_TYPE = "tool_call.status"


class ToolCallStatus(StrEnum):
    """States of a call; ``completed``, ``error`` and ``cancelled`` are final.

    ``cancelled``: the call's task was cancelled before it ended (its HTTP client hung
    up, its socket or session closed, the bridge stopped).
    """

    INITIATED = "initiated"
    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A snapshot of one call's state."""

    tool_call_id: str
    tool: str
    agent_id: str | None
    token_id: str | None = None
    status: ToolCallStatus = ToolCallStatus.INITIATED
    result_json: str | None = None
    error: dict[str, str] | None = None

    def but(
        self,
        *,
        tool: str | None = None,
        agent_id: str | None = None,
        token_id: str | None = None,
        status: ToolCallStatus | None = None,
        result_json: str | None = None,
        error: dict[str, str] | None = None,
    ) -> ToolCall:
        """Return a copy with the given fields changed (``dataclasses.replace``, cheaper)."""
        return ToolCall(
            tool_call_id=self.tool_call_id,
            tool=self.tool if tool is None else tool,
            agent_id=self.agent_id if agent_id is None else agent_id,
            token_id=self.token_id if token_id is None else token_id,
            status=self.status if status is None else status,
            result_json=self.result_json if result_json is None else result_json,
            error=self.error if error is None else error,
        )

    def to_json(self) -> dict[str, Any]:
        """Return the wire form (the seed's camelCase names)."""
        return {
            "toolCallId": self.tool_call_id,
            "status": self.status.value,
            "tool": self.tool,
            "agentId": self.agent_id,
            "tokenId": self.token_id,
            "resultJson": self.result_json,
            "error": self.error,
        }


class CallTracker:
    """Move calls through their states and publish every transition."""

    def __init__(self, events: EventBus | None) -> None:
        self._events = events

    def _publish(self, call: ToolCall) -> ToolCall:
        if self._events is not None and self._events.wanted(EVENT_TYPE):
            self._events.publish(EVENT_TYPE, call.to_json())
        return call

    def initiated(
        self, call_id: str, tool: str, agent_id: str | None, token_id: str | None = None
    ) -> ToolCall:
        """Publish and return a new call in ``initiated`` (made by token ``token_id``)."""
        return self._publish(
            ToolCall(tool_call_id=call_id, tool=tool, agent_id=agent_id, token_id=token_id)
        )

    def running(self, call: ToolCall) -> ToolCall:
        """Publish and return ``call`` in ``running``."""
        return self._publish(call.but(status=ToolCallStatus.RUNNING))

    def completed(self, call: ToolCall, result: Any, *, result_json: str | None = None) -> ToolCall:
        """Publish and return ``call`` completed with ``result`` (or its JSON text, if known).

        The result is encoded only when someone listens to call events.
        """
        if result_json is None and self._events is not None and self._events.wanted(EVENT_TYPE):
            result_json = json.dumps(result, default=str, ensure_ascii=False)
        return self._publish(call.but(status=ToolCallStatus.COMPLETED, result_json=result_json))

    def cancelled(self, call: ToolCall) -> ToolCall:
        """Publish and return ``call`` ended by its cancellation."""
        return self._publish(call.but(status=ToolCallStatus.CANCELLED))

    def failed(self, call: ToolCall, error: BridgeError) -> ToolCall:
        """Publish and return ``call`` ended by ``error``."""
        return self._publish(
            call.but(
                status=ToolCallStatus.ERROR,
                error={"code": error.code.value, "message": error.message},
            )
        )
