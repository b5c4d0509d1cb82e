"""The append-only audit log: one SQLite row per call decision, queryable by the CLI.

Rows are never updated or deleted (triggers abort such statements). Writes are
buffered and flushed in one transaction by a background task (after at most
``batch_delay_s``, or at once when ``batch_size`` entries wait) so recording a call
costs the pipeline no disk round trip; ``flush()`` (called by ``query`` and ``stop``)
makes everything recorded so far durable.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from bridge.storage import Database

_MIGRATION = """
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    call_id TEXT NOT NULL,
    agent_id TEXT,
    tool TEXT,
    decision TEXT NOT NULL,
    outcome TEXT NOT NULL,
    error_code TEXT,
    params_json TEXT,
    result_json TEXT,
    duration_ms REAL NOT NULL,
    node_id TEXT,
    trace_id TEXT,
    details_json TEXT
);
CREATE INDEX audit_log_agent ON audit_log(agent_id, ts);
CREATE INDEX audit_log_tool ON audit_log(tool, ts);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
"""

_COLUMNS = (
    "ts, call_id, agent_id, tool, decision, outcome, error_code, params_json, "
    "result_json, duration_ms, node_id, trace_id, details_json"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """One recorded call decision.

    ``decision`` is the step that decided (``allowed``, ``unauthenticated``,
    ``denied``, ``rate_limited``, ``invalid``, ``not_found``, ``confirmation_denied``,
    ``confirmation_timeout``, ``replayed``); ``outcome`` is ``completed`` or ``error``.
    ``params`` / ``result`` are ``None`` when the tool's audit settings leave them out.
    """

    call_id: str
    agent_id: str | None
    tool: str | None
    decision: str
    outcome: str
    error_code: str | None = None
    params: Any = None
    result: Any = None
    duration_ms: float = 0.0
    node_id: str | None = None
    trace_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    ts: float = field(default_factory=time.time)
    id: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "id": self.id,
            "ts": self.ts,
            "call_id": self.call_id,
            "agent_id": self.agent_id,
            "tool": self.tool,
            "decision": self.decision,
            "outcome": self.outcome,
            "error_code": self.error_code,
            "params": self.params,
            "result": self.result,
            "duration_ms": self.duration_ms,
            "node_id": self.node_id,
            "trace_id": self.trace_id,
            "details": self.details,
        }


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str, ensure_ascii=False)


def _row(entry: AuditEntry) -> tuple[Any, ...]:
    return (
        entry.ts,
        entry.call_id,
        entry.agent_id,
        entry.tool,
        entry.decision,
        entry.outcome,
        entry.error_code,
        _dump(entry.params),
        _dump(entry.result),
        entry.duration_ms,
        entry.node_id,
        entry.trace_id,
        _dump(entry.details or None),
    )


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class AuditFilter(TypedDict, total=False):
    """What ``AuditLog.query`` matches: equal columns, entries since a Unix time, a limit.

    ``None`` (or absent) matches everything; ``limit`` defaults to 100 and is clamped to
    1..10,000.
    """

    agent_id: str | None
    tool: str | None
    decision: str | None
    outcome: str | None
    since: float | None
    limit: int


class AuditLog:
    """Append-only call log in the bridge database."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.migrate("auth.audit_log.v1", _MIGRATION)
        self._buffer: list[AuditEntry] = []
        self.batch_delay_s = 0.02
        self.batch_size = 256
        self._flusher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def record(self, entry: AuditEntry) -> None:
        """Buffer ``entry``; a background flush writes it shortly."""
        self._buffer.append(entry)
        if self._flusher is None or self._flusher.done():
            try:
                self._flusher = asyncio.get_running_loop().create_task(self._drain())
            except RuntimeError:
                self.flush_sync()

    def flush_sync(self) -> None:
        """Write every buffered entry now (blocking)."""
        entries, self._buffer = self._buffer, []
        if not entries:
            return

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",  # noqa: S608
                [_row(e) for e in entries],
            )

        self._db.transaction_sync(write)

    async def _drain(self) -> None:
        while self._buffer:
            if len(self._buffer) < self.batch_size:
                await asyncio.sleep(self.batch_delay_s)
            await self.flush()

    async def flush(self) -> None:
        """Write every buffered entry in one transaction."""
        async with self._lock:
            await asyncio.to_thread(self.flush_sync)

    async def stop(self) -> None:
        """Flush and wait for the background writer."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        await self.flush()

    async def query(self, **filters: Unpack[AuditFilter]) -> list[AuditEntry]:
        """Return the newest matching entries first (buffered entries included)."""
        await self.flush()
        return self.query_sync(**filters)

    def query_sync(self, **filters: Unpack[AuditFilter]) -> list[AuditEntry]:
        """Return the newest matching entries already written (blocking)."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("agent_id", filters.get("agent_id")), ("tool", filters.get("tool")),
            ("decision", filters.get("decision")), ("outcome", filters.get("outcome")),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        since = filters.get("since")
        limit = filters.get("limit", 100)
        if since is not None:
            clauses.append("ts >= ?")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.fetchall_sync(
            f"SELECT id, {_COLUMNS} FROM audit_log {where} ORDER BY id DESC LIMIT ?",  # noqa: S608
            (*params, max(1, min(limit, 10_000))),
        )
        return [
            AuditEntry(
                id=row["id"],
                ts=row["ts"],
                call_id=row["call_id"],
                agent_id=row["agent_id"],
                tool=row["tool"],
                decision=row["decision"],
                outcome=row["outcome"],
                error_code=row["error_code"],
                params=_load(row["params_json"]),
                result=_load(row["result_json"]),
                duration_ms=row["duration_ms"],
                node_id=row["node_id"],
                trace_id=row["trace_id"],
                details=_load(row["details_json"]) or {},
            )
            for row in rows
        ]
