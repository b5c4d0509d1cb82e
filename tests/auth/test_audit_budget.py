"""Audit value bytes are bounded per row, per token and per node (real SQLite file)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bridge.auth.audit import AuditEntry, AuditLog
from bridge.storage import Database


def _entry(agent: str, n: int, text: str) -> AuditEntry:
    return AuditEntry(
        call_id=f"{agent}-{n}",
        agent_id=agent,
        tool="test:echo",
        decision="allowed",
        outcome="completed",
        params={"text": text},
    )


def _kept(db: Database, agent: str) -> list[dict[str, object]]:
    rows = db.fetchall_sync(
        "SELECT params_json FROM audit_log WHERE agent_id = ? ORDER BY id", (agent,)
    )
    return [json.loads(r["params_json"]) for r in rows]


def test_one_token_past_its_hourly_budget_keeps_size_and_hash_only(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    log = AuditLog(db)
    log.max_value_bytes = 1024
    log.token_budget = 2_000  # three 600-byte values fit, the fourth does not
    log.node_budget = 10_000
    small = "s" * 580  # '{"text": "sss…"}' is 592 bytes: under the row bound
    for n in range(5):
        log.record(_entry("greedy", n, small))
    log.record(_entry("other", 0, small))
    greedy = _kept(db, "greedy")
    assert greedy[:3] == [{"text": small}] * 3
    sent = json.dumps({"text": small}, ensure_ascii=False).encode()
    for kept in greedy[3:]:
        assert kept == {
            "truncated": True,
            "bytes": len(sent),
            "sha256": hashlib.sha256(sent).hexdigest(),
            "over_budget": True,
        }
    # Another token has its own budget: its value is kept whole.
    assert _kept(db, "other") == [{"text": small}]
    # A value over the row bound keeps its head; past the budget, not even that.
    big = "b" * 5_000
    log.record(_entry("third", 0, big))
    (cut,) = _kept(db, "third")
    assert (cut["truncated"], cut["bytes"], len(cut["head"])) == (True, 10 + 5_000 + 2, 512)
    db.close()
