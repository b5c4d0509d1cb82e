"""Everything the call pipeline needs, built from the configuration and started in order.

``InvocationRuntime.build`` creates the token verifier (trusting the node's own key
plus ``config.auth.trusted_issuers``), the audit log, approvals, idempotency records,
the invoker and the job manager on one database; ``start()`` / ``stop()`` run their
lifecycles. The service owns one runtime; the API and CLI reach the parts through it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bridge.auth.approvals import ApprovalStore
from bridge.auth.audit import AuditLog
from bridge.auth.keys import NodeKey
from bridge.auth.ratelimit import RateLimiter
from bridge.auth.tokens import TokenVerifier
from bridge.config import BridgeConfig
from bridge.events import EventBus
from bridge.invocation.idempotency import IdempotencyStore
from bridge.invocation.invoker import Invoker
from bridge.invocation.jobs import JobManager
from bridge.invocation.messages import ReplayGuard
from bridge.storage import Database
from bridge.tools.registry import ToolRegistry


@dataclass(slots=True, kw_only=True)
class InvocationRuntime:
    """The verifier, stores, invoker and jobs of one bridge process."""

    key: NodeKey
    verifier: TokenVerifier
    audit: AuditLog
    approvals: ApprovalStore
    idempotency: IdempotencyStore
    invoker: Invoker
    jobs: JobManager

    @classmethod
    def build(
        cls,
        *,
        config: BridgeConfig,
        db: Database,
        registry: ToolRegistry,
        events: EventBus,
        key: NodeKey,
        node_id: str,
    ) -> InvocationRuntime:
        """Wire the pipeline's parts on ``db``."""
        verifier = TokenVerifier(
            (key.public_key_b64, *config.auth.trusted_issuers),
            clock_skew_s=config.auth.clock_skew_s,
        )
        audit = AuditLog(db)
        approvals = ApprovalStore(db, key, events=events)
        # A secret only this node can derive (ed25519 signatures are deterministic).
        fingerprint_key = hashlib.sha256(
            key.sign(b"atmosphere-bridge idempotency fingerprint v1").encode()
        ).digest()
        idempotency = IdempotencyStore(db, fingerprint_key=fingerprint_key)
        invoker = Invoker(
            registry=registry,
            verifier=verifier,
            node_id=node_id,
            events=events,
            audit=audit,
            approvals=approvals,
            idempotency=idempotency,
            rate_limiter=RateLimiter(),
            replay=ReplayGuard(clock_skew_s=config.auth.clock_skew_s),
        )
        return cls(
            key=key,
            verifier=verifier,
            audit=audit,
            approvals=approvals,
            idempotency=idempotency,
            invoker=invoker,
            jobs=JobManager(invoker, db),
        )

    async def start(self) -> None:
        """Close what a previous process left open and start background work."""
        await self.approvals.start()
        await self.idempotency.purge()
        await self.jobs.start()

    async def stop(self) -> None:
        """Stop jobs and approvals and flush the audit log."""
        await self.jobs.stop()
        await self.approvals.stop()
        await self.audit.stop()
