"""What a tool handler receives besides its parameters: the call's context.

``CallContext`` carries who calls (agent, token, permissions), which call it is (ids),
where it has been (mesh path, hop budget) and how long it may take (deadline).
``Handler`` is the signature every tool implementation has.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


def new_call_id() -> str:
    """Return a fresh random call id."""
    return os.urandom(16).hex()  # 128 random bits, as uuid4 without its cost


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """The context of one tool call, passed to its handler."""

    call_id: str = field(default_factory=new_call_id)
    agent_id: str = ""
    # The id of the verified token that made the call: results belong to it.
    token_id: str = ""
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

    def with_deadline(self, deadline: float) -> CallContext:
        """Return a copy ending at ``deadline`` (``dataclasses.replace``, cheaper: per call)."""
        return CallContext(
            call_id=self.call_id,
            agent_id=self.agent_id,
            token_id=self.token_id,
            session_id=self.session_id,
            trace_id=self.trace_id,
            node_id=self.node_id,
            token=self.token,
            permissions=self.permissions,
            hop_budget=self.hop_budget,
            path=self.path,
            deadline=deadline,
            idempotency_key=self.idempotency_key,
            allowed_nodes=self.allowed_nodes,
            max_hops=self.max_hops,
        )


Handler = Callable[[dict[str, Any], CallContext], Awaitable[Any]]
"""A tool implementation: ``await handler(params, ctx)`` returns a JSON-able result.

``params`` are already validated with defaults applied. Raise a ``BridgeError`` for a
clean failure; any other exception becomes ``TOOL_FAILED``.
"""
