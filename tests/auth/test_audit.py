import asyncio
import json
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.auth.audit import (
    MAX_JSON_DEPTH,
    MAX_SOURCES_PER_MINUTE,
    OTHER_SOURCES,
    REJECTION_RETENTION_S,
    AuditEntry,
    AuditLog,
)
from bridge.storage import Database


async def test_record_query_and_append_only(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    log.record(
        AuditEntry(
            call_id="c1",
            agent_id="a1",
            tool="core:echo@1.0.0",
            decision="allowed",
            outcome="completed",
            params={"x": 1},
            result={"y": 2},
            duration_ms=1.5,
        )
    )
    log.record(
        AuditEntry(
            call_id="c2",
            agent_id="a2",
            tool="core:echo@1.0.0",
            decision="denied",
            outcome="error",
            error_code="PERMISSION_DENIED",
        )
    )
    entries = await log.query()
    assert [(e.call_id, e.decision, e.outcome) for e in entries] == [
        ("c2", "denied", "error"),
        ("c1", "allowed", "completed"),
    ]
    assert entries[1].params == {"x": 1}
    assert entries[1].result == {"y": 2}
    assert [e.call_id for e in await log.query(agent_id="a1")] == ["c1"]
    assert [e.call_id for e in await log.query(decision="denied")] == ["c2"]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute_sync("UPDATE audit_log SET decision = 'allowed'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute_sync("DELETE FROM audit_log")
    await log.stop()
    db.close()
    reopened = AuditLog(Database(tmp_path / "bridge.db"))
    assert len(reopened.query_sync()) == 2


async def test_one_record_never_takes_others_with_it(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    deep: list[object] = []
    for _ in range(5_000):
        deep = [deep]
    poison = [
        AuditEntry(
            call_id="p1",
            agent_id="eve",
            tool="core:\udead",
            decision="allowed",
            outcome="completed",
            trace_id="\udead",
            params={"k\ud800": ["v\udfff"]},
        ),
        AuditEntry(
            call_id="p2",
            agent_id="eve",
            tool="t",
            decision="allowed",
            outcome="completed",
            params={"deep": deep},
            result=float("nan"),
        ),
        AuditEntry(
            call_id="p3",
            agent_id="eve",
            tool="t",
            decision="allowed",
            outcome="completed",
            details={"obj": object(), "n": float("inf")},
        ),
    ]
    futures = [
        log.record(
            AuditEntry(
                call_id="ok1", agent_id="alice", tool="t", decision="allowed", outcome="completed"
            )
        )
    ]
    futures += [log.record(entry) for entry in poison]
    futures.append(
        log.record(
            AuditEntry(
                call_id="ok2", agent_id="alice", tool="t", decision="allowed", outcome="completed"
            )
        )
    )
    for future in futures:
        assert future is not None
        await future
    entries = {e.call_id: e for e in log.query_sync()}
    assert sorted(entries) == ["ok1", "ok2", "p1", "p2", "p3"]
    assert (entries["p1"].tool, entries["p1"].trace_id) == ("core:\\udead", "\\udead")
    assert entries["p1"].params == {"k\\ud800": ["v\\udfff"]}
    expected: object = {"unrecorded": "nested too deep"}
    for _ in range(MAX_JSON_DEPTH):
        expected = [expected]
    assert entries["p2"].params == {"deep": expected}
    assert entries["p2"].result == "nan"
    assert entries["p3"].details["n"] == "inf"
    assert entries["p3"].details["obj"].startswith("<object object at ")
    await log.stop()
    db.close()


async def test_concurrent_records_share_commits(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    futures = [
        log.record(
            AuditEntry(
                call_id=f"c{i}", agent_id="a", tool="t", decision="allowed", outcome="completed"
            )
        )
        for i in range(500)
    ]
    await asyncio.gather(*(f for f in futures if f is not None))
    # Every future resolved only once its row was committed: another connection sees them.
    other = sqlite3.connect(tmp_path / "bridge.db")
    assert other.execute("SELECT COUNT(*) FROM audit_log").fetchone() == (500,)
    other.close()
    assert 1 <= log.commits <= 2
    await log.stop()
    db.close()


async def test_rejections_are_counters_with_retention(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    for i in range(3_000):
        log.count_rejection(f"10.0.{i % 3}.1", "missing")
    log.count_rejection("10.0.0.1", "bad_signature")
    log.count_rejection("\udead", "\udead")
    await log.stop()
    counted: dict[tuple[str, str], int] = {}
    for r in log.rejections_sync():  # summed: the loop may cross a minute boundary
        counted[r["source"], r["reason"]] = counted.get((r["source"], r["reason"]), 0) + r["count"]
    assert counted == {
        ("10.0.0.1", "missing"): 1000,
        ("10.0.1.1", "missing"): 1000,
        ("10.0.2.1", "missing"): 1000,
        ("10.0.0.1", "bad_signature"): 1,
        ("\\udead", "\\udead"): 1,
    }
    assert db.fetchone_sync("SELECT COUNT(*) AS n FROM audit_rejections")["n"] in (5, 6, 7, 8)
    assert log.query_sync() == []
    # Many sources in one minute fold into one row beyond the cap.
    for i in range(MAX_SOURCES_PER_MINUTE + 50):
        log.count_rejection(f"s{i}", "malformed")
    await log.flush()
    per_minute = db.fetchall_sync(
        "SELECT minute, COUNT(*) AS n FROM audit_rejections GROUP BY minute"
    )
    assert max(r["n"] for r in per_minute) <= MAX_SOURCES_PER_MINUTE + 5
    assert (
        db.fetchone_sync("SELECT SUM(count) AS n FROM audit_rejections WHERE reason = 'malformed'")[
            "n"
        ]
        == MAX_SOURCES_PER_MINUTE + 50
    )
    assert (
        db.fetchone_sync(
            "SELECT COUNT(*) AS n FROM audit_rejections WHERE source = ?", (OTHER_SOURCES,)
        )["n"]
        >= 1
    )
    # Counters older than the retention are pruned on the next commit after an hour.
    old_minute = int((time.time() - REJECTION_RETENTION_S - 120) // 60)
    db.execute_sync("INSERT INTO audit_rejections VALUES (?, 'x', 'missing', 7)", (old_minute,))
    log._last_prune = 0.0
    log.count_rejection("10.0.0.9", "missing")
    await log.flush()
    assert (
        db.fetchone_sync(
            "SELECT COUNT(*) AS n FROM audit_rejections WHERE minute = ?", (old_minute,)
        )["n"]
        == 0
    )
    await log.stop()
    db.close()


_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=6) | st.integers(), _SCALARS | st.lists(_SCALARS, max_size=2), max_size=5
    )
)
def test_the_flat_fast_path_writes_what_the_cleaning_path_writes(value: dict) -> None:
    """``_dump``'s shortcut for flat, plain dicts stores exactly the cleaned text."""
    from bridge.auth.audit import _dump, _plain

    try:
        slow = json.dumps(_plain(value), ensure_ascii=False, allow_nan=False)
    except ValueError:
        slow = json.dumps({"unrecorded": "ValueError"})
    assert _dump(value) == slow


async def test_an_autoincrement_log_is_rebuilt_with_its_rows_and_ids(tmp_path: Path) -> None:
    """A database from before ``auth.audit_log.v2_rowid`` keeps every row and id."""
    from bridge.auth import audit as audit_module

    path = tmp_path / "old.db"
    db = Database(path)
    db.migrate("auth.audit_log.v1", audit_module._MIGRATION)  # as the first release left it
    with sqlite3.connect(path) as conn:
        for i in range(5):
            conn.execute(
                f"INSERT INTO audit_log ({audit_module._V2_COLUMNS}) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    1000.0 + i,
                    f"call-{i}",
                    "agent-a",
                    "matter:lamp_on",
                    "allowed",
                    "completed",
                    None,
                    '{"p": 1}',
                    None,
                    1.5,
                    "node",
                    None,
                    None,
                ),
            )
        # The last rows were ids 1..5; AUTOINCREMENT remembers 5 in sqlite_sequence.
        assert conn.execute("SELECT seq FROM sqlite_sequence WHERE name='audit_log'").fetchone()
    db.close()

    db = Database(path)
    log = AuditLog(db)
    await log.record(
        AuditEntry(
            call_id="call-new",
            agent_id="agent-b",
            tool="t",
            decision="allowed",
            outcome="completed",
        )
    )
    rows = await log.query()
    assert sorted((e.id, e.call_id) for e in rows) == [
        (1, "call-0"),
        (2, "call-1"),
        (3, "call-2"),
        (4, "call-3"),
        (5, "call-4"),
        (6, "call-new"),
    ]
    assert next(e for e in rows if e.id == 2).params == {"p": 1}
    with sqlite3.connect(path) as conn:
        schema = conn.execute("SELECT sql FROM sqlite_master WHERE name='audit_log'").fetchone()[0]
        assert "AUTOINCREMENT" not in schema
        assert conn.execute(
            "SELECT count(*) FROM sqlite_sequence WHERE name='audit_log'"
        ).fetchone() == (0,)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert {
            "audit_log_agent",
            "audit_log_tool",
            "audit_log_no_update",
            "audit_log_no_delete",
        } <= names
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM audit_log WHERE id = 6")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE audit_log SET tool = 'x' WHERE id = 1")
    # Opened again: the migration does not run twice.
    db.close()
    db = Database(path)
    log = AuditLog(db)
    assert len(await log.query()) == 6
    db.close()


def test_a_new_database_has_small_pages_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    from bridge.storage import PAGE_SIZE

    fresh = Database(tmp_path / "new.db")
    assert fresh._conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 2048
    fresh.close()
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as conn:
        conn.execute("PRAGMA page_size=4096")
        conn.execute("CREATE TABLE t (x)")
    reopened = Database(old)
    assert reopened._conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    reopened.close()


async def test_a_full_disk_is_one_log_line_without_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from bridge.errors import StorageFullError

    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    first = log.record(
        AuditEntry(
            call_id="before", agent_id="a", tool="t", decision="allowed", outcome="completed"
        )
    )
    assert first is not None
    await first
    # SQLite's own "database or disk is full" (SQLITE_FULL): no page may be added.
    pages = db.fetchone_sync("PRAGMA page_count")
    assert pages is not None
    db.execute_sync(f"PRAGMA max_page_count = {pages[0]}")
    caplog.set_level("INFO", logger="bridge.auth.audit")
    refused = 0
    for n in range(20):  # twenty separate commits, each a whole page of text
        future = log.record(
            AuditEntry(
                call_id=f"full-{n}",
                agent_id="a",
                tool="t",
                decision="allowed",
                outcome="completed",
                params={"blob": "x" * 8_000},
            )
        )
        assert future is not None
        with pytest.raises(StorageFullError):
            await future
        refused += 1
    assert refused == 20
    lines = [r for r in caplog.records if r.name == "bridge.auth.audit"]
    assert [(r.levelname, bool(r.exc_info)) for r in lines] == [("ERROR", False)], [
        r.getMessage() for r in lines
    ]
    assert "disk is full" in lines[0].getMessage()
    assert [e.call_id for e in log.query_sync()] == ["before"]
    await log.stop()
    db.close()
