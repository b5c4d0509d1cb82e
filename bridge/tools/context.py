"""What a tool handler receives besides its parameters: the call's context.

``CallContext`` carries who calls (agent, token, permissions), which call it is (ids),
where it has been (mesh path, hop budget) and how long it may take (deadline).
``Handler`` is the signature every tool implementation has.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


def new_call_id() -> str:
    """Return a fresh random call id."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """The context of one tool call, passed to its handler."""

    call_id: str = field(default_factory=new_call_id)
    agent_id: str = ""
    session_id: str | None = None
    trace_id: str | None = None
    node_id: str = ""
    token: str | None = None
    permissions: tuple[str, ...] = ()
    hop_budget: int = 3
    path: tuple[str, ...] = ()
    deadline: float | None = None
    idempotency_key: str | None = None
    # The verified token's constraints, for a remote executor routing the call on.
    allowed_nodes: tuple[str, ...] = ()
    max_hops: int | None = None


Handler = Callable[[dict[str, Any], CallContext], Awaitable[Any]]
"""A tool implementation: ``await handler(params, ctx)`` returns a JSON-able result.

``params`` are already validated with defaults applied. Raise a ``BridgeError`` for a
clean failure; any other exception becomes ``TOOL_FAILED``.
"""
