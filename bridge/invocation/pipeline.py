"""Everything the call pipeline needs, built from the configuration and started in order.

``Pipeline.build`` creates the token verifier (trusting the node's own key
plus ``config.auth.trusted_issuers``), the audit log, approvals, idempotency records,
the invoker and the job manager on one database; ``start()`` / ``stop()`` run their
lifecycles. The service owns one runtime; the API and CLI reach the parts through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

from bridge.auth.approvals import ApprovalStore
from bridge.auth.audit import AuditLog
from bridge.auth.keys import NodeKey
from bridge.auth.permissions import covers
from bridge.auth.ratelimit import RateLimiter
from bridge.auth.tokens import (
    ADMIN_TOKENS_PERMISSION,
    Constraints,
    IssuedTokens,
    Revocations,
    TokenVerifier,
    issue_token,
)
from bridge.config import BridgeConfig
from bridge.errors import NotFoundError
from bridge.events import EventBus
from bridge.invocation.idempotency import IdempotencyStore
from bridge.invocation.invoker import Invoker
from bridge.invocation.jobs import JobManager
from bridge.invocation.messages import ReplayGuard
from bridge.storage import Database
from bridge.tools.registry import ToolRegistry

_LOG = logging.getLogger(__name__)
AUDIT_PRUNE_INTERVAL_S = 3600.0


@dataclass(slots=True, kw_only=True)
class Pipeline:
    """The verifier, stores, invoker and jobs of one bridge process."""

    key: NodeKey
    verifier: TokenVerifier
    audit: AuditLog
    approvals: ApprovalStore
    idempotency: IdempotencyStore
    invoker: Invoker
    jobs: JobManager
    tokens: IssuedTokens
    pruner: asyncio.Task[None] | None = None

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
    ) -> Pipeline:
        """Wire the pipeline's parts on ``db``."""
        verifier = TokenVerifier(
            (key.public_key_b64, *config.auth.trusted_issuers),
            clock_skew_s=config.auth.expiry_skew_s,
            revocations=Revocations(db),
        )
        audit = AuditLog(db)
        audit.max_value_bytes = config.audit.max_value_bytes
        days = config.audit.retention_days
        audit.retention_s = None if days is None else days * 86_400.0
        db.reserve_bytes = config.audit.disk_reserve_mb * 1024 * 1024
        approvals = ApprovalStore(db, key, events=events, verifier=verifier)
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
            jobs=JobManager(invoker, db, events=events),
            tokens=IssuedTokens(db),
        )

    async def start(self) -> None:
        """Close what a previous process left open and start background work."""
        await self.approvals.start()
        await self.idempotency.purge()
        await self.jobs.start()
        self.pruner = asyncio.get_running_loop().create_task(self._prune_audit())

    async def _prune_audit(self) -> None:
        """Delete audit rows past the retention now and every hour (off the loop)."""
        while True:
            try:
                await asyncio.to_thread(self.audit.prune_sync)
            except sqlite3.Error as err:  # a full disk: try again next hour
                _LOG.warning("audit retention could not prune: %s", err)
            await asyncio.sleep(AUDIT_PRUNE_INTERVAL_S)

    async def stop(self) -> None:
        """Stop jobs and approvals and flush the audit log."""
        if self.pruner is not None:
            self.pruner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.pruner
            self.pruner = None
        await self.jobs.stop()
        await self.approvals.stop()
        await self.audit.stop()

    def issue(
        self,
        *,
        agent_id: str,
        permissions: list[str],
        ttl_s: float,
        constraints: Constraints | None = None,
        issued_by: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Issue a token signed by this node, record it; return it and its ledger entry.

        ``issued_by`` is the id of the token that asked for it (kept in the ledger: a
        token may revoke what it issued).
        """
        raw = issue_token(
            self.key,
            agent_id=agent_id,
            permissions=permissions,
            ttl_s=ttl_s,
            constraints=constraints,
        )
        token = self.tokens.record_sync(raw, issued_by=issued_by)
        return raw, self.token_view(token.id)

    def token_view(self, token_id: str) -> dict[str, Any]:
        """Return ``{id, agent_id, permissions, issued_at, expires_at, issued_by, revoked}``."""
        entry = self.tokens.get_sync(token_id)
        if entry is None:
            shown = token_id[:64]
            raise NotFoundError(f"no token '{shown}' was issued here", {"id": shown})
        return {**entry, "revoked": token_id in self.verifier.revocations}

    def list_tokens(self, *, agent_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Return the ledger, newest first, each entry with its ``revoked`` flag."""
        revoked = self.verifier.revocations
        return [
            {**entry, "revoked": entry["id"] in revoked}
            for entry in self.tokens.list_sync(agent_id=agent_id, limit=limit)
        ]

    def revoke(self, token_id: str) -> dict[str, Any]:
        """Revoke a token this node issued (idempotent); return its entry.

        Takes effect at once for every verification here; subscribers (the mesh node)
        pass the signed notice on to peers. Raises ``NotFoundError`` for an id not in
        the ledger.
        """
        entry = self.token_view(token_id)
        # What a token issued dies with it: no privilege outlives the one it came from
        # (an administrator's tokens are its orphans: they were never bound to it).
        todo, seen = [entry], {token_id}
        while todo:
            item = todo.pop()
            if item["id"] not in self.verifier.revocations:
                self.verifier.revocations.revoke(self.key, item["id"], item["expires_at"])
            if any(covers(p, ADMIN_TOKENS_PERMISSION) for p in item["permissions"]):
                continue
            for child in self.tokens.issued_by_sync(item["id"]):
                if child["id"] not in seen:
                    seen.add(child["id"])
                    todo.append(child)
        return {**entry, "revoked": True}

    def issued_tree(self, token_id: str, *, limit: int = 10_000) -> list[dict[str, Any]]:
        """Return the ledger entries of ``token_id`` and of what it issued, transitively.

        ``token_id`` itself may be missing from the ledger (signed with the node key
        elsewhere, e.g. by ``token issue``); what it issued here is still listed.
        """
        out: list[dict[str, Any]] = []
        todo, seen = [token_id], {token_id}
        while todo and len(out) < limit:
            item_id = todo.pop()
            item = self.tokens.get_sync(item_id)
            if item is not None:
                out.append({**item, "revoked": item_id in self.verifier.revocations})
            for child in self.tokens.issued_by_sync(item_id):
                if child["id"] not in seen:
                    seen.add(child["id"])
                    todo.append(child["id"])
        return sorted(out, key=lambda e: e["issued_at"], reverse=True)

    def issued_chain(self, token_id: str) -> list[str]:
        """Return the ids of the tokens that issued ``token_id``, nearest first."""
        chain: list[str] = []
        entry = self.tokens.get_sync(token_id)
        while entry is not None and entry["issued_by"] and entry["issued_by"] not in chain:
            chain.append(entry["issued_by"])
            entry = self.tokens.get_sync(entry["issued_by"])
        return chain
