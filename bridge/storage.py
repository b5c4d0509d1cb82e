"""The bridge's one SQLite database: WAL mode, per-layer migrations, async access.

Every layer keeps its state (data store, audit log, idempotency records, jobs,
approvals, device names) in tables of this file. Statements run in a worker thread
under one lock, so the event loop never blocks on disk and writes never interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bridge.errors import StorageFullError

_LOG = logging.getLogger(__name__)
T = TypeVar("T")
Params = Sequence[Any] | dict[str, Any]
BUSY_TIMEOUT_MS = 10_000
PAGE_SIZE = 2048
# Commits between two checkpoints of the WAL into the database file. SQLite's own
# auto-checkpoint (every 1,000 WAL pages) would run inside whichever commit crosses the
# mark, on the event loop when that is an inline audit commit (measured: a 7 ms stall
# every few hundred calls); the bridge checkpoints from a thread of its own instead.
CHECKPOINT_EVERY_COMMITS = 250


class Database:
    """A SQLite file with WAL, a busy timeout and named, run-once migrations."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        # Free bytes the disk must keep for the audit: below them, low-priority writes
        # are refused (``ensure_reserve``). Set from audit.disk_reserve_mb.
        self.reserve_bytes = 0
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files
            # it creates the database file's mode, whatever the umask.
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            self.path.chmod(0o600)
        self._conn = sqlite3.connect(
            str(path),
            check_same_thread=False,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        # Whether the connection's busy timeout is on: the inline commit turns it off and
        # leaves it so (two statements fewer per call); every other use turns it back on.
        self._waits = True
        self._commits = 0
        self._checkpointer: threading.Thread | None = None
        with self._locked():
            # For a new database only (an existing one keeps its page size): every commit
            # writes each page it touched to the WAL whole, and an audit row touches
            # three; smaller pages are less to copy, checksum and write per call.
            self._conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            if str(path) != ":memory:":
                self._conn.execute("PRAGMA wal_autocheckpoint=0")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at REAL NOT NULL "
                "DEFAULT ((julianday('now') - 2440587.5) * 86400.0))"
            )
        if str(path) != ":memory:":
            for suffix in ("-wal", "-shm"):
                companion = self.path.with_name(self.path.name + suffix)
                with contextlib.suppress(FileNotFoundError):
                    companion.chmod(0o600)

    def migrate(self, name: str, script: str) -> bool:
        """Run ``script`` once under ``name``; return whether it ran now."""
        with self._locked():
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

    def migrate_with(
        self, name: str, fn: Callable[[sqlite3.Connection], None], *, scrub: bool = False
    ) -> bool:
        """Run ``fn(conn)`` once under ``name`` in one transaction; return whether it ran.

        With ``scrub``, deleted content is overwritten (``secure_delete``) and the WAL is
        checkpointed and truncated afterwards, so what the migration removed is gone
        from the files too.
        """
        with self._locked():
            row = self._conn.execute(
                "SELECT 1 FROM schema_migrations WHERE name = ?", (name,)
            ).fetchone()
            if row is not None:
                return False
            if scrub:
                self._conn.execute("PRAGMA secure_delete=ON")
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                fn(self._conn)
                self._conn.execute("INSERT INTO schema_migrations(name) VALUES (?)", (name,))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            if scrub:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.execute("PRAGMA secure_delete=OFF")
            return True

    def ensure_reserve(self, what: str) -> None:
        """Raise ``StorageFullError`` when the disk's free space is below the reserve.

        Called before low-priority writes (``what``: stored data, a new job), so the
        audit of the calls the bridge still makes has room when the disk fills.
        """
        if self.reserve_bytes <= 0 or str(self.path) == ":memory:":
            return
        try:
            stats = os.statvfs(self.path.parent)
        except OSError:
            return
        free = stats.f_bavail * stats.f_frsize
        if free < self.reserve_bytes:
            raise StorageFullError(
                f"{what} is refused: the state directory's disk has {free // 1_048_576} MiB "
                f"free, below the {self.reserve_bytes // 1_048_576} MiB kept for the audit "
                "log (audit.disk_reserve_mb); free some space",
                {"reason": "disk_reserve", "free_bytes": free, "reserve_bytes": self.reserve_bytes},
            )

    def execute_sync(self, sql: str, params: Params = ()) -> int:
        """Run one statement now and return the number of changed rows.

        Raise ``StorageFullError`` (nothing written) when the disk is full.
        """
        with self._locked(), _full_disk_is_an_error():
            changed = self._conn.execute(sql, params).rowcount
        self._committed()
        return changed

    def fetchall_sync(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query now and return every row."""
        with self._locked():
            return self._conn.execute(sql, params).fetchall()

    def fetchone_sync(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query now and return the first row or ``None``."""
        with self._locked():
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return row

    def transaction_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` inside one immediate transaction; roll back on any error.

        A COMMIT that fails (a full disk) rolls back too, so the connection never stays
        inside a half-done transaction; a full disk raises ``StorageFullError``.
        """
        with self._locked(), _full_disk_is_an_error():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise
        self._committed()
        return result

    def try_transaction_now(self, fn: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
        """Run ``fn(conn)`` in one transaction only if that needs no waiting; say whether it ran.

        Returns ``(False, None)`` at once when another thread holds the connection or
        another process holds the write lock, so the caller (on the event loop) can
        hand the work to a thread instead. Rolls back and re-raises when ``fn`` fails.
        """
        if not self._lock.acquire(blocking=False):
            return False, None
        try:
            if self._waits:
                self._conn.execute("PRAGMA busy_timeout=0")
                self._waits = False
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False, None
            with _full_disk_is_an_error():
                try:
                    result = fn(self._conn)
                    self._conn.execute("COMMIT")
                except BaseException:
                    # SQLite may already have rolled back (a full disk): only roll back
                    # what is still open, so the first error is the one raised.
                    if self._conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._conn.execute("ROLLBACK")
                    raise
        finally:
            self._lock.release()
        self._committed()
        return True, result

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the connection, with SQLite's busy timeout on (waits for other processes)."""
        with self._lock:
            if not self._waits:
                self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                self._waits = True
            yield

    def _committed(self) -> None:
        """Count a commit; every ``CHECKPOINT_EVERY_COMMITS``, checkpoint from a thread."""
        self._commits += 1
        if self._commits < CHECKPOINT_EVERY_COMMITS or str(self.path) == ":memory:":
            return
        running = self._checkpointer
        if running is not None and running.is_alive():
            return
        self._commits = 0
        self._checkpointer = threading.Thread(
            target=self._checkpoint, name="sqlite-checkpoint", daemon=True
        )
        self._checkpointer.start()

    def _checkpoint(self) -> None:
        """Copy the WAL into the database file, holding the connection meanwhile.

        No commit lands while it runs, so it backfills the whole WAL and the next writer
        starts the WAL over (a checkpoint racing continuous commits never catches up and
        the WAL would grow without end). An inline audit commit that finds the
        connection busy hands its rows to a worker thread instead of waiting.
        """
        try:
            with self._locked():
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as err:  # a closed database, a busy reader in another process
            _LOG.debug("WAL checkpoint of %s failed: %s", self.path, err)

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
        """Close the connection (idempotent); a checkpoint under way finishes first."""
        running = self._checkpointer
        if running is not None:
            running.join(timeout=30)
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
        raise StorageFullError("the state directory's disk is full; nothing was written") from err


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


def secure_tree(root: Path) -> None:
    """Make ``root`` and every directory under it 0700 and every file 0600.

    Symbolic links are left alone (never followed). Used at start-up so a state
    directory written under a looser umask (or by an older version) holds nothing
    another local user can read.
    """
    if not root.is_dir():
        return
    root.chmod(0o700)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames:
            _chmod(Path(dirpath) / name, 0o700)
        for name in filenames:
            _chmod(Path(dirpath) / name, 0o600)


def _chmod(path: Path, mode: int) -> None:
    with contextlib.suppress(FileNotFoundError, PermissionError):
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) != mode:
            path.chmod(mode)
