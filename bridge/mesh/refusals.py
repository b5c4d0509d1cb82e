"""Mesh refusals in the audit log: what this node refused to a peer or from a peer, and why.

Every refused proof, forged or misaddressed envelope or answer, bad delegation, revoked
or replayed delegated call and stale-revocation refusal becomes one audit entry with
decision ``mesh_refused``, the error code, the peer (as claimed) and where it happened.
A flood from one address must not flood the log: at most ``PER_MINUTE`` entries a minute
per (where, code, message); the rest are only counted (``total``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bridge.auth.audit import AuditEntry, AuditLog
from bridge.tools.context import new_call_id

if TYPE_CHECKING:
    from bridge.errors import BridgeError

_LOGGER = logging.getLogger(__name__)

DECISION = "mesh_refused"
PER_MINUTE = 30


class RefusalLog:
    """Record mesh refusals in the audit log, bounded per minute."""

    def __init__(self, node_id: str, audit: Callable[[], AuditLog | None]) -> None:
        self.node_id = node_id
        self._audit = audit
        self._minute = 0
        self._counts: dict[tuple[str, str, str], int] = {}
        self.total: dict[str, int] = {}

    def record(self, peer: str, where: str, err: BridgeError) -> None:
        """Record that a request to or from ``peer`` (claimed id) at ``where`` was refused."""
        code = err.code.value
        reason = str(err.details.get("reason", "")) if isinstance(err.details, dict) else ""
        self.total[code] = self.total.get(code, 0) + 1
        minute = int(time.time() // 60)
        if minute != self._minute:
            self._minute, self._counts = minute, {}
        kind = where if where.startswith(("invoke", "gossip", "push", "hello")) else "address"
        # One flood (a proxy forging every gossip answer) must not hide another refusal.
        bucket = (kind, code, err.message[:60])
        self._counts[bucket] = self._counts.get(bucket, 0) + 1
        if self._counts[bucket] > PER_MINUTE:
            return
        _LOGGER.info("mesh refused %s at %s: %s", peer or "?", where[:200], err.message[:300])
        audit = self._audit()
        if audit is None:
            return
        audit.record(
            AuditEntry(
                call_id=new_call_id(),
                agent_id=None,
                tool=None,
                decision=DECISION,
                outcome="error",
                error_code=code,
                node_id=self.node_id,
                details={
                    "peer": peer[:64],
                    "where": where[:200],
                    "reason": reason[:64],
                    "message": err.message[:300],
                },
            )
        )
