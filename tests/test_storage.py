"""The SQLite database under a full disk: a clear retryable error, nothing half-written."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.errors import ErrorCode, StorageFullError
from bridge.storage import Database
from bridge.tools.builtin.store import DataStore
from tests.support.real import require, root_reason, tools_reason

ROW = "x" * 4000


def insert(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO t (v) VALUES (?)", (ROW,))


def count(db: Database) -> int:
    row = db.fetchone_sync("SELECT count(*) FROM t")
    assert row is not None
    return int(row[0])


def test_a_full_database_is_storage_full_and_stays_usable(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    db.execute_sync("CREATE TABLE t (v TEXT)")
    page = db.fetchone_sync("PRAGMA page_count")
    assert page is not None
    db.execute_sync(f"PRAGMA max_page_count = {page[0] + 3}")
    written = 0
    err: StorageFullError | None = None
    for _ in range(50):
        try:
            db.transaction_sync(insert)
        except StorageFullError as full:
            err = full
            break
        written += 1
    assert err is not None
    assert (err.code, err.http_status, err.retryable) == (ErrorCode.STORAGE_FULL, 507, True)
    assert err.to_json()["code"] == "STORAGE_FULL"
    assert isinstance(err.__cause__, sqlite3.OperationalError)
    assert 1 <= written < 50
    with pytest.raises(StorageFullError):
        db.execute_sync("INSERT INTO t (v) VALUES (?)", (ROW,))
    assert count(db) == written
    # Space again: the next transaction runs (no transaction was left open).
    db.execute_sync("PRAGMA max_page_count = 1000000")
    db.transaction_sync(insert)
    assert count(db) == written + 1


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (a real full disk), unmounted after the test."""
    require(root_reason("mounting a tmpfs") or tools_reason("mount"))
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "atm-test", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.namespaces
async def test_a_full_disk_fails_the_commit_cleanly_and_recovers_when_freed(
    tiny_disk: Path,
) -> None:
    db = Database(tiny_disk / "bridge.db")
    store = DataStore(db, time.time)
    db.execute_sync("CREATE TABLE t (v TEXT)")
    filler = tiny_disk / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    before = count(db)

    def two_rows(conn: sqlite3.Connection) -> None:
        for _ in range(40):  # more than the disk has left: the WAL cannot take them
            insert(conn)

    with pytest.raises(StorageFullError):
        db.transaction_sync(two_rows)
    assert count(db) == before  # all or nothing
    with pytest.raises(StorageFullError):
        await store.put("soak/1", {"n": 1})
    assert await store.get("soak/1") == {"value": None, "exists": False}
    filler.unlink()
    assert (await store.put("soak/1", {"n": 1}))["success"] is True
    assert await store.get("soak/1") == {"value": {"n": 1}, "exists": True}
    db.transaction_sync(insert)
    assert count(db) == before + 1
    db.close()


def test_the_wal_is_checkpointed_off_the_committing_thread(tmp_path: Path) -> None:
    """Commits never checkpoint inline (no stall on the event loop); a thread keeps the
    WAL bounded, and every committed row is in the database file after a reopen."""
    from bridge import storage

    db = Database(tmp_path / "bridge.db")
    assert db.fetchone_sync("PRAGMA wal_autocheckpoint")[0] == 0  # type: ignore[index]
    db.execute_sync("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    wal = tmp_path / "bridge.db-wal"
    body = "x" * 3000  # about a page per commit
    threads_seen: set[str] = set()
    sizes = []
    handed_off = 0
    for i in range(6 * storage.CHECKPOINT_EVERY_COMMITS):

        def insert(conn: sqlite3.Connection, i: int = i) -> None:
            conn.execute("INSERT INTO t VALUES (?, ?)", (i, body))

        ran, _ = db.try_transaction_now(insert)
        if not ran:  # a checkpoint holds the connection: the audit hands off the same way
            handed_off += 1
            db.transaction_sync(insert)
        if db._checkpointer is not None:
            threads_seen.add(db._checkpointer.name)
        sizes.append(wal.stat().st_size)
    assert threads_seen == {"sqlite-checkpoint"}
    assert handed_off < len(sizes) // 10
    # SQLite restarts a checkpointed WAL from its start: without checkpoints it would
    # hold ~1,500 pages (6 MB); with them it stays within a few checkpoint intervals.
    assert max(sizes) < 3 * storage.CHECKPOINT_EVERY_COMMITS * 4096 * 2
    db.close()
    again = Database(tmp_path / "bridge.db")
    assert again.fetchone_sync("SELECT count(*) FROM t")[0] == len(sizes)  # type: ignore[index]
    again.close()


def test_the_inline_commit_never_waits_and_every_other_write_still_does(tmp_path: Path) -> None:
    # The inline (event-loop) commit runs with SQLite's busy timeout off and leaves it
    # off; whatever runs next on the connection must wait for another process's write
    # lock again, not fail with "database is locked" at once.
    db = Database(tmp_path / "bridge.db")
    db.execute_sync("CREATE TABLE t (v TEXT)")
    assert db.try_transaction_now(insert) == (True, None)
    other = sqlite3.connect(tmp_path / "bridge.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
    started = time.monotonic()
    assert db.try_transaction_now(insert) == (False, None)
    assert time.monotonic() - started < 1.0  # handed back at once: no wait on the loop
    release = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    db.transaction_sync(insert)  # waits for the lock, then commits
    assert time.monotonic() - started >= 0.4
    release.join()
    other.close()
    assert count(db) == 2
    db.close()
