import sqlite3
from pathlib import Path

import pytest

from bridge.auth.audit import AuditEntry, AuditLog
from bridge.storage import Database


async def test_record_query_and_append_only(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    log.record(
        AuditEntry(call_id="c1", agent_id="a1", tool="core:echo@1.0.0", decision="allowed",
                   outcome="completed", params={"x": 1}, result={"y": 2}, duration_ms=1.5)
    )
    log.record(
        AuditEntry(call_id="c2", agent_id="a2", tool="core:echo@1.0.0", decision="denied",
                   outcome="error", error_code="PERMISSION_DENIED")
    )
    entries = await log.query()
    assert [(e.call_id, e.decision, e.outcome) for e in entries] == [
        ("c2", "denied", "error"), ("c1", "allowed", "completed")
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
