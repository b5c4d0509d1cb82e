"""The append-only audit log: one SQLite row per authenticated call decision.

Details: docs/modules.md, ``bridge.auth.audit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from bridge.errors import StorageFullError
from bridge.ratelog import RateLimitedLog
from bridge.storage import Database

_LOG = logging.getLogger(__name__)
# A commit that fails for an expected cause (a full disk, a locked or broken file) is one
# line per cause a minute with the count held back: a traceback per batch would flood
# the very disk that is full.
_RATE_LOG = RateLimitedLog(_LOG)
_COMMIT_FAULTS = (sqlite3.Error, StorageFullError)

# The columns of the first two versions of the table (the rowid rebuild copies these).
_V2_COLUMNS = (
    "ts, call_id, agent_id, tool, decision, outcome, error_code, params_json, "
    "result_json, duration_ms, node_id, trace_id, details_json"
)
_COLUMNS = f"{_V2_COLUMNS}, token_id"
# Every column but the id, as the table declares them.
_COLUMN_DECLARATIONS = """
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
"""
# The indexes and the append-only triggers, made anew whenever the table is.
_INDEXES_AND_TRIGGERS = """
CREATE INDEX audit_log_agent ON audit_log(agent_id, ts);
CREATE INDEX audit_log_tool ON audit_log(tool, ts);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
"""

_MIGRATION = f"""
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,{_COLUMN_DECLARATIONS});
{_INDEXES_AND_TRIGGERS}"""

# The same table with ``id`` a plain rowid alias. AUTOINCREMENT kept a row in
# sqlite_sequence up to date on every insert: one more page written to the WAL per
# commit (of four), for a guarantee the append-only triggers already give (no row is
# ever deleted, so ``max(id) + 1`` is never an id used before). Rows and ids are kept.
_ROWID_MIGRATION = f"""
CREATE TABLE audit_log_rowid (
    id INTEGER PRIMARY KEY,{_COLUMN_DECLARATIONS});
INSERT INTO audit_log_rowid (id, {_V2_COLUMNS}) SELECT id, {_V2_COLUMNS} FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_rowid RENAME TO audit_log;
DELETE FROM sqlite_sequence WHERE name = 'audit_log';
{_INDEXES_AND_TRIGGERS}"""  # noqa: S608 - made of this module's constants only

_REJECTIONS_MIGRATION = """
CREATE TABLE audit_rejections (
    minute INTEGER NOT NULL,
    source TEXT NOT NULL,
    reason TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (minute, source, reason)
);
"""

# Every row names the token that made the call (its id, ``AgentToken.id``): the agent
# name is free text any issuer may reuse, the id is one token's alone.
_V3_MIGRATION = """
ALTER TABLE audit_log ADD COLUMN token_id TEXT;
CREATE INDEX audit_log_token ON audit_log(token_id, ts);
"""

_INSERT = f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"  # noqa: S608

REJECTION_RETENTION_S = 90 * 86_400
# The longest params / result text a row keeps whole; longer ones keep their head and
# the SHA-256 of the whole text (so a copy can still be proved to be the one audited).
MAX_VALUE_BYTES = 4096
# Params / result text kept per token (and for the node) per hour: past it a value keeps
# only its size and SHA-256 (no head), so one caller cannot fill the disk through the
# audit; the row itself (who, what, when, outcome) is always written.
TOKEN_VALUE_BYTES_PER_HOUR = 8 * 1_048_576
NODE_VALUE_BYTES_PER_HOUR = 128 * 1_048_576
_BUDGET_WINDOW_S = 3600.0
MAX_SOURCES_PER_MINUTE = 1_000
OTHER_SOURCES = "(other)"
MAX_TEXT = 256
MAX_JSON_DEPTH = 64
INLINE_COMMIT_ROWS = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """One recorded call decision.

    ``decision`` is the step that decided (``allowed``, ``unauthenticated``,
    ``denied``, ``rate_limited``, ``invalid``, ``not_found``, ``confirmation_denied``,
    ``confirmation_timeout``, ``replayed``, ``cancelled``); ``outcome`` is ``completed``,
    ``error`` or ``cancelled`` (the call's task was cancelled before it ended).
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
    token_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "id": self.id,
            "ts": self.ts,
            "call_id": self.call_id,
            "agent_id": self.agent_id,
            "token_id": self.token_id,
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


def clean_text(value: str) -> str:
    """Return ``value`` with every lone surrogate written as backslash-u escape text."""
    if value.isascii():  # the common case, checked in C: no surrogate possible
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _text(value: Any, limit: int | None = None) -> str | None:
    if value is None:
        return None
    text = clean_text(value if isinstance(value, str) else str(value))
    return text if limit is None else text[:limit]


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def _plain(value: Any, depth: int = 0) -> Any:
    """Return ``value`` as JSON-safe data: clean strings, finite numbers, bounded depth."""
    if depth > MAX_JSON_DEPTH:
        return {"unrecorded": "nested too deep"}
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {_text(k) or "": _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    return clean_text(str(value))


def _flat_plain(value: dict[Any, Any]) -> bool:
    """Return whether ``_plain(value)`` would equal ``value`` (one level, ASCII, finite)."""
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(item)
        if kind is str:
            if not item.isascii():
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif item is not None and kind is not bool and kind is not int:
            return False
    return True


def _dump(value: Any) -> str | None:
    if value is None:
        return None
    if type(value) is dict and _flat_plain(value):
        # Most calls' parameters and results: nothing to clean, the same text as below.
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(_plain(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        return json.dumps({"unrecorded": type(err).__name__})


def _row(entry: AuditEntry) -> tuple[Any, ...]:
    return (
        _number(entry.ts),
        _text(entry.call_id, MAX_TEXT) or "",
        _text(entry.agent_id, MAX_TEXT),
        _text(entry.tool, MAX_TEXT),
        _text(entry.decision, MAX_TEXT) or "unknown",
        _text(entry.outcome, MAX_TEXT) or "unknown",
        _text(entry.error_code, MAX_TEXT),
        _dump(entry.params),
        _dump(entry.result),
        _number(entry.duration_ms),
        _text(entry.node_id, MAX_TEXT),
        _text(entry.trace_id, MAX_TEXT),
        _dump(entry.details or None),
        _text(entry.token_id, MAX_TEXT),
    )


def _fallback_row(row_or_entry: Any, err: BaseException) -> tuple[Any, ...]:
    """Return the smallest row that still says a call happened and why it is incomplete."""
    call_id = getattr(row_or_entry, "call_id", None)
    token_id = getattr(row_or_entry, "token_id", None)
    if isinstance(row_or_entry, tuple) and len(row_or_entry) > 13:
        call_id, token_id = row_or_entry[1], row_or_entry[13]
    return (
        time.time(),
        _text(call_id, MAX_TEXT) or uuid.uuid4().hex,
        None,
        None,
        "unrecordable",
        "error",
        None,
        None,
        None,
        0.0,
        None,
        None,
        json.dumps({"unrecorded": type(err).__name__}),
        token_id if isinstance(token_id, str) and token_id.isascii() else None,
    )


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class AuditFilter(TypedDict, total=False):
    """What ``AuditLog.query`` matches: equal columns, entries since a Unix time, a limit.

    ``None`` (or absent) matches everything; ``limit`` defaults to 100 and is clamped to
    1..10,000.
    """

    agent_id: str | None
    token_id: str | None
    tool: str | None
    decision: str | None
    outcome: str | None
    since: float | None
    limit: int


_Pending = tuple[tuple[Any, ...], "asyncio.Future[None] | None"]


class AuditLog:
    """Append-only call log in the bridge database, written in group commits."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.migrate("auth.audit_log.v1", _MIGRATION)
        db.migrate("auth.audit_log.v2_rowid", _ROWID_MIGRATION)
        db.migrate("auth.audit_log.v3_token_id", _V3_MIGRATION)
        db.migrate("auth.audit_rejections.v1", _REJECTIONS_MIGRATION)
        self._pending: list[_Pending] = []
        self._rejections: dict[tuple[int, str, str], int] = {}
        self._minute = 0
        self._sources: set[str] = set()
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._last_prune = 0.0
        self._inflight: asyncio.Task[sqlite3.Error | StorageFullError | bool | None] | None = None
        self.commits = 0
        # Value bytes kept this hour, per token ("" for the whole node).
        self._spent: dict[str, int] = {}
        self._window = 0.0

    # Set from the configuration (audit.max_value_bytes, audit.retention_days).
    max_value_bytes = MAX_VALUE_BYTES
    retention_s: float | None = None
    token_budget = TOKEN_VALUE_BYTES_PER_HOUR
    node_budget = NODE_VALUE_BYTES_PER_HOUR

    def record(self, entry: AuditEntry) -> asyncio.Future[None] | None:
        """Queue ``entry``; return a future done when its row is committed.

        Outside an event loop the row is written before this returns (and ``None`` is
        returned). The future fails with ``sqlite3.Error`` only when the database
        cannot commit at all (disk full, file gone).
        """
        try:
            row = self._budgeted(_bounded(_row(entry), self.max_value_bytes), entry)
        except Exception as err:  # a record must never take others with it
            row = _fallback_row(entry, err)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._pending.append((row, None))
            self.flush_sync()
            return None
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((row, future))
        self._kick(loop)
        return future

    def count_rejection(self, source: str | None, reason: str | None) -> None:
        """Count one request refused before it had a verified token (no row of its own)."""
        minute = int(time.time() // 60)
        src = _text(source, 64) or "unknown"
        why = _text(reason, 64) or "unknown"
        if minute != self._minute:
            self._minute, self._sources = minute, set()
        if src not in self._sources:
            if len(self._sources) >= MAX_SOURCES_PER_MINUTE:
                src = OTHER_SOURCES
            else:
                self._sources.add(src)
        key = (minute, src, why)
        self._rejections[key] = self._rejections.get(key, 0) + 1
        try:
            self._kick(asyncio.get_running_loop())
        except RuntimeError:
            self.flush_sync()

    def _kick(self, loop: asyncio.AbstractEventLoop) -> None:
        writer = self._writer
        if writer is None or writer.done() or writer.get_loop() is not loop:
            self._wake = asyncio.Event()
            self._lock = asyncio.Lock()
            self._writer = loop.create_task(self._run())
        assert self._wake is not None  # noqa: S101 - created with the writer
        self._wake.set()

    async def _run(self) -> None:
        assert self._wake is not None  # noqa: S101 - set before the writer starts
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self._pending and not self._rejections:
                continue
            try:
                await self.flush()
            except Exception:  # the writer must outlive one bad batch
                _LOG.exception("audit log writer failed")

    def _take(self) -> tuple[list[_Pending], dict[tuple[int, str, str], int]]:
        batch, self._pending = self._pending, []
        counts, self._rejections = self._rejections, {}
        return batch, counts

    def _commit(
        self,
        rows: list[tuple[Any, ...]],
        counts: dict[tuple[int, str, str], int],
        *,
        now_only: bool = False,
    ) -> sqlite3.Error | StorageFullError | bool | None:
        """Write ``rows`` and ``counts`` in one transaction; return the error, if any.

        With ``now_only``, return ``False`` instead of waiting for the database.
        """
        now = time.time()
        prune = now - self._last_prune > 3600
        try:
            if now_only:
                ran, _ = self._db.try_transaction_now(
                    lambda conn: _write(conn, rows, counts, now, prune)
                )
                if not ran:
                    return False
            else:
                self._db.transaction_sync(lambda conn: _write(conn, rows, counts, now, prune))
        except _COMMIT_FAULTS as err:
            _RATE_LOG.log(
                f"commit:{type(err).__name__}",
                logging.ERROR,
                "audit log commit of %d row(s) failed: %s",
                len(rows),
                err,
            )
            return err
        if prune:
            self._last_prune = now
        self.commits += 1
        return None

    def flush_sync(self) -> None:
        """Write every queued row and counter now (blocking); settle their futures."""
        batch, counts = self._take()
        if batch or counts:
            outcome = self._commit([row for row, _ in batch], counts)
            _settle(batch, outcome if isinstance(outcome, _COMMIT_FAULTS) else None)

    async def flush(self) -> None:
        """Commit every queued row in one transaction.

        A small batch is committed on the event loop when the database is free at once,
        anything else in a worker thread. Cancelling the caller does not cancel the
        commit: the rows' futures are settled when it ends.
        """
        async with self._lock:
            batch, counts = self._take()
            if not batch and not counts:
                return
            rows = [row for row, _ in batch]
            if len(rows) <= INLINE_COMMIT_ROWS:
                # A small WAL append costs less than the two thread switches of a worker
                # (which dominate on a busy machine); never waits for a lock to do it.
                try:
                    outcome = self._commit(rows, counts, now_only=True)
                except Exception as err:  # every waiting caller must hear of it
                    _LOG.exception("audit log commit failed")
                    _settle(batch, err)
                    return
                if outcome is not False:
                    _settle(batch, outcome if isinstance(outcome, _COMMIT_FAULTS) else None)
                    return
            task = asyncio.get_running_loop().create_task(
                asyncio.to_thread(self._commit, rows, counts)
            )
            self._inflight = task
            task.add_done_callback(lambda done: _settle(batch, _error_of(done)))
            await asyncio.shield(task)

    def commit_now(self) -> None:
        """Commit what is queued, here and now, when that needs no waiting at all.

        For a call that runs alone and waits for its own row: nothing could join its
        group commit, and the writer's turn through the event loop would only delay the
        answer. Anything that would wait (a flush under way, the database held by
        another thread or process) is left to the writer, which was woken for it.
        """
        if self._lock.locked() or not self._pending or len(self._pending) > INLINE_COMMIT_ROWS:
            return
        batch, counts = self._take()
        try:
            outcome = self._commit([row for row, _ in batch], counts, now_only=True)
        except Exception as err:  # every waiting caller must hear of it
            _LOG.exception("audit log commit failed")
            _settle(batch, err)
            return
        if outcome is False:  # busy: back to the head of the queue, for the writer
            self._pending[:0] = batch
            for key, count in counts.items():
                self._rejections[key] = self._rejections.get(key, 0) + count
            return
        _settle(batch, outcome if isinstance(outcome, _COMMIT_FAULTS) else None)

    async def stop(self) -> None:
        """Commit what is queued and stop the writer."""
        await self.flush()
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        await self.flush()

    def _budgeted(self, row: tuple[Any, ...], entry: AuditEntry) -> tuple[Any, ...]:
        """Return ``row``, its values cut to size and hash past the hour's budgets."""
        now = time.monotonic()
        spent = self._spent
        if now - self._window >= _BUDGET_WINDOW_S:
            spent.clear()
            self._window = now
        owner = entry.token_id or entry.agent_id or ""
        size = sum(len(row[i]) for i in _BOUNDED_COLUMNS if isinstance(row[i], str))
        mine, total = spent.get(owner, 0), spent.get("", 0) if owner else 0
        if mine + size > self.token_budget or total + size > self.node_budget:
            return _hashed(row)
        spent[owner] = mine + size
        if owner:
            spent[""] = total + size
        return row

    def prune_sync(self, *, now: float | None = None) -> int:
        """Delete call rows older than ``retention_s`` (kept for ever when it is None).

        The append-only trigger is lifted for this one statement inside the same
        transaction, so no other writer can delete meanwhile. Return the rows deleted.
        """
        if self.retention_s is None:
            return 0
        cutoff = (time.time() if now is None else now) - self.retention_s
        return self._db.transaction_sync(lambda conn: _prune_calls(conn, cutoff))

    def rejections_sync(self, *, since: float | None = None) -> list[dict[str, Any]]:
        """Return the committed rejection counters, newest minute first."""
        rows = self._db.fetchall_sync(
            "SELECT minute, source, reason, count FROM audit_rejections WHERE minute >= ? "
            "ORDER BY minute DESC, source, reason",
            (int((since or 0) // 60),),
        )
        return [
            {
                "minute": r["minute"] * 60,
                "source": r["source"],
                "reason": r["reason"],
                "count": r["count"],
            }
            for r in rows
        ]

    async def query(self, **filters: Unpack[AuditFilter]) -> list[AuditEntry]:
        """Return the newest matching entries first (queued entries included)."""
        await self.flush()
        return self.query_sync(**filters)

    def query_sync(self, **filters: Unpack[AuditFilter]) -> list[AuditEntry]:
        """Return the newest matching entries already written (blocking)."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("agent_id", filters.get("agent_id")),
            ("token_id", filters.get("token_id")),
            ("tool", filters.get("tool")),
            ("decision", filters.get("decision")),
            ("outcome", filters.get("outcome")),
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
                token_id=row["token_id"],
            )
            for row in rows
        ]


_COLUMN_NAMES = tuple(name.strip() for name in _COLUMNS.split(","))
_BOUNDED_COLUMNS = tuple(_COLUMN_NAMES.index(n) for n in ("params_json", "result_json"))


def _bounded(row: tuple[Any, ...], limit: int) -> tuple[Any, ...]:
    """Return ``row`` with a params / result text over ``limit`` bytes cut to its head.

    The cut text is replaced by ``{"truncated": true, "bytes", "sha256", "head"}``:
    what was sent can still be matched against the row, but one caller cannot make
    the log grow by more than ``limit`` bytes per value.
    """
    cells = list(row)
    for index in _BOUNDED_COLUMNS:
        text = cells[index]
        if not isinstance(text, str) or len(text) <= limit // 4:
            continue
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= limit:
            continue
        head = data[: max(0, limit // 2)].decode("utf-8", "ignore")
        cells[index] = json.dumps(
            {
                "truncated": True,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "head": head,
            },
            ensure_ascii=False,
        )
    return tuple(cells)


def _hashed(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Return ``row`` with its params / result reduced to their size and SHA-256."""
    cells = list(row)
    for index in _BOUNDED_COLUMNS:
        text = cells[index]
        if not isinstance(text, str):
            continue
        doc = json.loads(text) if text.startswith('{"truncated": true') else None
        if isinstance(doc, dict):  # already cut to its head: keep size and hash only
            doc.pop("head", None)
        else:
            data = text.encode("utf-8", "surrogatepass")
            doc = {
                "truncated": True,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        doc["over_budget"] = True
        cells[index] = json.dumps(doc)
    return tuple(cells)


def _prune_calls(conn: sqlite3.Connection, cutoff: float) -> int:
    """Delete call rows before ``cutoff`` (the retention), the trigger lifted meanwhile."""
    conn.execute("DROP TRIGGER IF EXISTS audit_log_no_delete")
    try:
        deleted = conn.execute("DELETE FROM audit_log WHERE ts < ?", (cutoff,)).rowcount
    finally:
        conn.execute(
            "CREATE TRIGGER IF NOT EXISTS audit_log_no_delete BEFORE DELETE ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END"
        )
    return int(deleted)


def _write(
    conn: sqlite3.Connection,
    rows: list[tuple[Any, ...]],
    counts: dict[tuple[int, str, str], int],
    now: float,
    prune: bool,
) -> None:
    """Insert each row on its own statement, so a bad one cannot undo the others."""
    for row in rows:
        try:
            conn.execute(_INSERT, row)
        except (
            sqlite3.InterfaceError,
            sqlite3.DataError,
            sqlite3.IntegrityError,
            sqlite3.ProgrammingError,
            OverflowError,
            UnicodeError,
        ) as err:
            conn.execute(_INSERT, _fallback_row(row, err))
    if counts:
        conn.executemany(
            "INSERT INTO audit_rejections (minute, source, reason, count) VALUES (?,?,?,?) "
            "ON CONFLICT (minute, source, reason) DO UPDATE SET count = count + excluded.count",
            [(m, s, r, n) for (m, s, r), n in counts.items()],
        )
    if prune:
        conn.execute(
            "DELETE FROM audit_rejections WHERE minute < ?",
            (int((now - REJECTION_RETENTION_S) // 60),),
        )


def _error_of(
    task: asyncio.Future[sqlite3.Error | StorageFullError | bool | None],
) -> BaseException | None:
    if task.cancelled():
        return asyncio.CancelledError()
    error = task.exception() or task.result()
    return error if isinstance(error, BaseException) else None


def _settle(batch: list[_Pending], err: BaseException | None) -> None:
    for _, future in batch:
        if future is None or future.done():
            continue
        if err is None:
            future.set_result(None)
        else:
            future.set_exception(err)
