"""The rules table: each rule's document, status, creator and the claims of its own token.

The rule's token is not stored: only its claims (agent id, permissions, issue and expiry
times). Ed25519 signatures are deterministic, so the node signs the same claims again at
start and gets the same token, with the same id the ledger and revocations know — a
stolen database holds no usable token. ``last_fired`` keeps a time rule from firing
twice across a restart.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from bridge.automations.rules import Rule
from bridge.storage import Database

_MIGRATION = """
CREATE TABLE automation_rules (
    id TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    status TEXT NOT NULL,
    creator TEXT NOT NULL,
    token_agent TEXT NOT NULL,
    token_permissions TEXT NOT NULL,
    token_issued_at REAL NOT NULL,
    token_ttl_s REAL NOT NULL,
    approval_id TEXT,
    reason TEXT,
    last_fired REAL,
    created_at REAL NOT NULL
);
"""


class Status:
    """A rule's status: ``active`` runs when enabled; the others never run."""

    ACTIVE = "active"
    AWAITING_APPROVAL = "awaiting_approval"
    REFUSED = "refused"
    STOPPED = "stopped"  # stopped by the runner (a cycle); enabling again restarts it


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRule:
    """A rule as stored: the checked rule and what the runner needs besides."""

    rule: Rule
    status: str
    creator: str
    token_agent: str
    token_permissions: tuple[str, ...]
    token_issued_at: float
    token_ttl_s: float
    approval_id: str | None = None
    reason: str | None = None
    last_fired: float | None = None
    created_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the public view (no token)."""
        return {**self.rule.to_json(), "status": self.status, "creator": self.creator,
                "agent_id": self.token_agent, "token_permissions": list(self.token_permissions),
                "approval_id": self.approval_id, "reason": self.reason,
                "last_fired": self.last_fired, "created_at": self.created_at,
                "devices": self.rule.devices()}  # fmt: skip


class RuleStore:
    """Rules in the service's SQLite database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.migrate("automation_rules_v1", _MIGRATION)

    def put(self, stored: StoredRule) -> None:
        """Insert or replace a rule."""
        self.db.execute_sync(
            "INSERT OR REPLACE INTO automation_rules VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (stored.rule.id, json.dumps(stored.rule.to_json()), stored.status, stored.creator,
             stored.token_agent, json.dumps(list(stored.token_permissions)),
             stored.token_issued_at, stored.token_ttl_s, stored.approval_id, stored.reason,
             stored.last_fired, stored.created_at or time.time()),
        )  # fmt: skip

    def get(self, rule_id: str) -> StoredRule | None:
        """Return one rule or ``None``."""
        row = self.db.fetchone_sync("SELECT * FROM automation_rules WHERE id = ?", (rule_id,))
        return _stored(row) if row is not None else None

    def all(self) -> list[StoredRule]:
        """Return every rule, by id."""
        return [_stored(r) for r in self.db.fetchall_sync(
            "SELECT * FROM automation_rules ORDER BY id")]  # fmt: skip

    def delete(self, rule_id: str) -> bool:
        """Delete a rule; return whether it existed."""
        return self.db.execute_sync("DELETE FROM automation_rules WHERE id = ?", (rule_id,)) > 0

    def set_fired(self, rule_id: str, at: float) -> None:
        """Record when a rule last fired."""
        self.db.execute_sync("UPDATE automation_rules SET last_fired = ? WHERE id = ?",
                             (at, rule_id))  # fmt: skip


def _stored(row: Any) -> StoredRule:
    return StoredRule(
        rule=Rule.from_json(json.loads(row["doc"])), status=row["status"],
        creator=row["creator"], token_agent=row["token_agent"],
        token_permissions=tuple(json.loads(row["token_permissions"])),
        token_issued_at=row["token_issued_at"], token_ttl_s=row["token_ttl_s"],
        approval_id=row["approval_id"], reason=row["reason"], last_fired=row["last_fired"],
        created_at=row["created_at"],
    )  # fmt: skip
