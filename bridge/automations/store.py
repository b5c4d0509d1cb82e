"""The rules table: each rule's document, status, creator and the claims of its own token.

The rule's token is not stored: only its claims (agent id, permissions, issue and expiry
times). Ed25519 signatures are deterministic, so the node signs the same claims again at
start and gets the same token, with the same id the ledger and revocations know — a
stolen database holds no usable token. ``last_fired`` keeps a time rule from firing
twice across a restart.

A rule is bound to the token that made it (``creator_token_id``, its expiry and
permissions), not to the creator's agent name: when that token is revoked or expires the
rule stops acting. Rules made before that binding existed are bound by the migration to
the one ledger token of their creator valid when they were made; when there is none or
more than one, the rule is stopped (``revoked``) rather than guessed.
"""

from __future__ import annotations

import json
import sqlite3
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


# Bind each rule to its creator's token id (v1 rows knew only the creator's agent name).
_V2_COLUMNS = """
ALTER TABLE automation_rules ADD COLUMN creator_token_id TEXT;
ALTER TABLE automation_rules ADD COLUMN creator_expires_at REAL;
ALTER TABLE automation_rules ADD COLUMN creator_permissions TEXT;
"""
UNBOUND_REASON = (
    "made before rules were bound to their creator's token, and its token "
    "could not be told: create it again"
)


def _bind_creators(conn: sqlite3.Connection) -> None:
    """Add the creator-token columns and bind each existing rule, or stop it.

    A v1 rule is bound to its creator's ledger token that was valid when the rule was made
    and is not revoked, when exactly one such token exists; otherwise nobody can say which
    authority made it, and it is stopped for good (status ``revoked``).
    """
    for statement in _V2_COLUMNS.strip().splitlines():
        conn.execute(statement)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    rows = conn.execute("SELECT id, creator, created_at FROM automation_rules").fetchall()
    for rule_id, creator, created_at in rows:
        found: list[tuple[str, float, str]] = []
        if "issued_tokens" in tables:
            revoked = (
                {r[0] for r in conn.execute("SELECT token_id FROM revoked_tokens")}
                if "revoked_tokens" in tables
                else set()
            )
            found = [
                tuple(r)
                for r in conn.execute(
                    "SELECT id, expires_at, permissions_json FROM issued_tokens WHERE agent_id = ? "
                    "AND issued_at <= ? AND expires_at > ?",
                    (creator, created_at, created_at),
                )
                if r[0] not in revoked
            ]
        if len(found) == 1:
            conn.execute(
                "UPDATE automation_rules SET creator_token_id = ?, "
                "creator_expires_at = ?, creator_permissions = ? WHERE id = ?",
                (*found[0], rule_id),
            )
        else:
            conn.execute(
                "UPDATE automation_rules SET status = ?, reason = ? WHERE id = ?",
                (Status.REVOKED, UNBOUND_REASON, rule_id),
            )


class Status:
    """A rule's status: ``active`` runs when enabled; the others never run."""

    ACTIVE = "active"
    AWAITING_APPROVAL = "awaiting_approval"
    REFUSED = "refused"
    STOPPED = "stopped"  # stopped by the runner (a cycle); enabling again restarts it
    # Its creator's token (or its own) was revoked or expired: it never acts again.
    REVOKED = "revoked"


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
    # The token that made the rule: its authority bounds the rule's at every run.
    creator_token_id: str | None = None
    creator_expires_at: float | None = None
    creator_permissions: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the public view (no token)."""
        return {
            **self.rule.to_json(),
            "status": self.status,
            "creator": self.creator,
            "agent_id": self.token_agent,
            "token_permissions": list(self.token_permissions),
            "approval_id": self.approval_id,
            "reason": self.reason,
            "last_fired": self.last_fired,
            "created_at": self.created_at,
            "creator_token_id": self.creator_token_id,
            "devices": self.rule.devices(),
        }


# Who is home: each configured person's last reported presence.
_PRESENCE = """
CREATE TABLE automation_presence (
    person TEXT PRIMARY KEY,
    home INTEGER NOT NULL,
    since REAL NOT NULL
);
"""


class RuleStore:
    """Rules (and who is home) in the service's SQLite database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.migrate("automation_rules_v1", _MIGRATION)
        db.migrate_with("automation_rules_v2_creator_token", _bind_creators)
        db.migrate("automation_presence_v1", _PRESENCE)

    def presence(self) -> dict[str, tuple[bool, float]]:
        """Return each person's last reported presence: ``{person: (home, since)}``."""
        rows = self.db.fetchall_sync("SELECT person, home, since FROM automation_presence")
        return {r["person"]: (bool(r["home"]), r["since"]) for r in rows}

    def set_presence(self, person: str, home: bool, since: float) -> None:
        """Record a person's presence."""
        self.db.execute_sync(
            "INSERT OR REPLACE INTO automation_presence VALUES (?, ?, ?)",
            (person, int(home), since),
        )

    def put(self, stored: StoredRule) -> None:
        """Insert or replace a rule."""
        self.db.execute_sync(
            f"INSERT OR REPLACE INTO automation_rules ({', '.join(_COLUMNS)}) "  # noqa: S608
            f"VALUES ({','.join('?' * len(_COLUMNS))})",
            (
                stored.rule.id,
                json.dumps(stored.rule.to_json()),
                stored.status,
                stored.creator,
                stored.token_agent,
                json.dumps(list(stored.token_permissions)),
                stored.token_issued_at,
                stored.token_ttl_s,
                stored.approval_id,
                stored.reason,
                stored.last_fired,
                stored.created_at or time.time(),
                stored.creator_token_id,
                stored.creator_expires_at,
                None
                if stored.creator_permissions is None
                else json.dumps(list(stored.creator_permissions)),
            ),
        )

    def get(self, rule_id: str) -> StoredRule | None:
        """Return one rule or ``None``."""
        row = self.db.fetchone_sync("SELECT * FROM automation_rules WHERE id = ?", (rule_id,))
        return _stored(row) if row is not None else None

    def all(self) -> list[StoredRule]:
        """Return every rule, by id."""
        return [
            _stored(r) for r in self.db.fetchall_sync("SELECT * FROM automation_rules ORDER BY id")
        ]

    def delete(self, rule_id: str) -> bool:
        """Delete a rule; return whether it existed."""
        return self.db.execute_sync("DELETE FROM automation_rules WHERE id = ?", (rule_id,)) > 0

    def set_fired(self, rule_id: str, at: float) -> None:
        """Record when a rule last fired."""
        self.db.execute_sync(
            "UPDATE automation_rules SET last_fired = ? WHERE id = ?", (at, rule_id)
        )


_COLUMNS = (
    "id",
    "doc",
    "status",
    "creator",
    "token_agent",
    "token_permissions",
    "token_issued_at",
    "token_ttl_s",
    "approval_id",
    "reason",
    "last_fired",
    "created_at",
    "creator_token_id",
    "creator_expires_at",
    "creator_permissions",
)


def _stored(row: Any) -> StoredRule:
    return StoredRule(
        rule=Rule.from_json(json.loads(row["doc"])),
        status=row["status"],
        creator=row["creator"],
        token_agent=row["token_agent"],
        token_permissions=tuple(json.loads(row["token_permissions"])),
        token_issued_at=row["token_issued_at"],
        token_ttl_s=row["token_ttl_s"],
        approval_id=row["approval_id"],
        reason=row["reason"],
        last_fired=row["last_fired"],
        created_at=row["created_at"],
        creator_token_id=row["creator_token_id"],
        creator_expires_at=row["creator_expires_at"],
        creator_permissions=None
        if row["creator_permissions"] is None
        else tuple(json.loads(row["creator_permissions"])),
    )
