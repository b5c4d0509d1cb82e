"""Idempotency records: a call retried with the same key returns the first result.

Details: docs/modules.md, ``bridge.invocation.idempotency``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import Any

from bridge.auth.canonical import canonical_json
from bridge.errors import ConflictError
from bridge.storage import Database

_MIGRATION = """
CREATE TABLE idempotency (
    agent_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (agent_id, key)
);
CREATE INDEX idempotency_created ON idempotency(created_at);
"""


def fingerprint(tool_identity: str, params: dict[str, Any], key: bytes | None = None) -> str:
    """Return the hex digest identifying a call's tool and parameters (HMAC when keyed)."""
    data = canonical_json({"tool": tool_identity, "params": params})
    if key:
        return hmac.new(key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(data).hexdigest()


class IdempotencyStore:
    """Persisted idempotency records plus the in-flight calls per key."""

    def __init__(
        self, db: Database, *, ttl_s: float = 86_400.0, fingerprint_key: bytes | None = None
    ) -> None:
        self._db = db
        self.ttl_s = ttl_s
        self._fingerprint_key = fingerprint_key
        self._inflight: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
        db.migrate("invocation.idempotency.v1", _MIGRATION)

    def fingerprint(self, tool_identity: str, params: dict[str, Any]) -> str:
        """Return the fingerprint this store records for a call."""
        return fingerprint(tool_identity, params, self._fingerprint_key)

    async def lookup(self, agent_id: str, key: str, fp: str) -> dict[str, Any] | None:
        """Return the stored response for the key or ``None``; ``CONFLICT`` if for another call."""
        row = await self._db.fetchone(
            "SELECT fingerprint, response_json, created_at FROM idempotency "
            "WHERE agent_id = ? AND key = ?",
            (agent_id, key),
        )
        if row is None or row["created_at"] < time.time() - self.ttl_s:
            return None
        if row["fingerprint"] != fp:
            raise ConflictError(
                "idempotency_key was already used for a different call", {"key": key}
            )
        response: dict[str, Any] = json.loads(row["response_json"])
        return response

    async def store(self, agent_id: str, key: str, fp: str, response: dict[str, Any]) -> None:
        """Persist the outcome for the key."""
        await self._db.execute(
            "INSERT OR REPLACE INTO idempotency (agent_id, key, fingerprint, response_json, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            (agent_id, key, fp, json.dumps(response, default=str), time.time()),
        )

    def inflight(self, agent_id: str, key: str) -> asyncio.Future[dict[str, Any]] | None:
        """Return the future of a running call with this key, if any."""
        return self._inflight.get((agent_id, key))

    def begin(self, agent_id: str, key: str) -> asyncio.Future[dict[str, Any]]:
        """Mark a call with this key as running and return its future."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._inflight[(agent_id, key)] = future
        return future

    def end(self, agent_id: str, key: str, response: dict[str, Any] | None) -> None:
        """Finish the running call; waiters get ``response`` (``None`` lets them run again)."""
        future = self._inflight.pop((agent_id, key), None)
        if future is not None and not future.done():
            if response is None:
                future.cancel()
            else:
                future.set_result(response)

    async def purge(self) -> int:
        """Delete expired records and return how many."""
        return await self._db.execute(
            "DELETE FROM idempotency WHERE created_at < ?", (time.time() - self.ttl_s,)
        )
