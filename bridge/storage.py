"""The bridge's one SQLite database: WAL mode, per-layer migrations, async access.

Every layer keeps its state (data store, audit log, idempotency records, jobs,
approvals, device names) in tables of this file. Statements run in a worker thread
under one lock, so the event loop never blocks on disk and writes never interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bridge.errors import StorageFullError

T = TypeVar("T")
Params = Sequence[Any] | dict[str, Any]


class Database:
    """A SQLite file with WAL, a busy timeout and named, run-once migrations."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=10.0
        )
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at REAL NOT NULL "
                "DEFAULT ((julianday('now') - 2440587.5) * 86400.0))"
            )
        if str(path) != ":memory:":
            self.path.chmod(0o600)

    def migrate(self, name: str, script: str) -> bool:
        """Run ``script`` once under ``name``; return whether it ran now."""
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM schema_migrations WHERE name = ?", (name,)
            ).fetchone()
            if row is not None:
                return False
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _split_statements(script):
                    self._conn.execute(statement)
                self._conn.execute("INSERT INTO schema_migrations(name) VALUES (?)", (name,))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return True

    def execute_sync(self, sql: str, params: Params = ()) -> int:
        """Run one statement now and return the number of changed rows.

        Raise ``StorageFullError`` (nothing written) when the disk is full.
        """
        with self._lock, _full_disk_is_an_error():
            return self._conn.execute(sql, params).rowcount

    def fetchall_sync(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query now and return every row."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def fetchone_sync(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query now and return the first row or ``None``."""
        with self._lock:
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return row

    def transaction_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` inside one immediate transaction; roll back on any error.

        A COMMIT that fails (a full disk) rolls back too, so the connection never stays
        inside a half-done transaction; a full disk raises ``StorageFullError``.
        """
        with self._lock, _full_disk_is_an_error():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise
            return result

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement in a worker thread; return the number of changed rows."""
        return await asyncio.to_thread(self.execute_sync, sql, params)

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query in a worker thread and return every row."""
        return await asyncio.to_thread(self.fetchall_sync, sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query in a worker thread and return the first row or ``None``."""
        return await asyncio.to_thread(self.fetchone_sync, sql, params)

    async def transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in one transaction in a worker thread."""
        return await asyncio.to_thread(self.transaction_sync, fn)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()


@contextlib.contextmanager
def _full_disk_is_an_error() -> Iterator[None]:
    """Turn SQLite's "database or disk is full" into ``StorageFullError``."""
    try:
        yield
    except sqlite3.OperationalError as err:
        if getattr(err, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_FULL:
            raise
        raise StorageFullError(
            "the state directory's disk is full; nothing was written"
        ) from err


def _split_statements(script: str) -> list[str]:
    """Split a migration script into complete statements."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
