"""The core key-value tools ``core:store_data`` and ``core:get_data`` on the node's SQLite.

Values are JSON, keyed by the seed's key pattern, with an optional TTL (``0`` = never
expires) and ``if_not_exists``. Expired rows read as absent and are deleted when read
or overwritten and by ``purge_expired``. Definitions are the seed's documents, shipped
in ``definitions/``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from bridge.errors import InvalidParamsError
from bridge.storage import Database
from bridge.tools.context import CallContext
from bridge.tools.decorator import ToolSpec
from bridge.tools.definition import ToolDefinition
from bridge.tools.env import ToolEnv

MIGRATION = "tools.core_data.v1"
MAX_TTL_S = 100 * 365 * 86_400
SCHEMA = """
CREATE TABLE IF NOT EXISTS core_data (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_at REAL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS core_data_expires ON core_data(expires_at)
    WHERE expires_at IS NOT NULL;
"""


def load_definition(name: str) -> ToolDefinition:
    """Return the shipped definition ``definitions/<name>.json``."""
    text = (
        resources.files("bridge.tools.builtin")
        .joinpath(f"definitions/{name}.json")
        .read_text(encoding="utf-8")
    )
    return ToolDefinition.from_json(json.loads(text))


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


class DataStore:
    """Key-value rows in the ``core_data`` table with TTL expiry."""

    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock
        db.migrate(MIGRATION, SCHEMA)

    async def put(
        self, key: str, value: Any, *, ttl_seconds: int = 0, if_not_exists: bool = False
    ) -> dict[str, Any]:
        """Store ``value`` under ``key``; return ``{success, key, created[, expires_at]}``."""
        try:
            encoded = json.dumps(value, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as err:
            raise InvalidParamsError(
                "value is not JSON-serializable", {"errors": [{"path": "$.value"}]}
            ) from err
        now = self._clock()
        expires_at = now + ttl_seconds if ttl_seconds > 0 else None

        def write(conn: sqlite3.Connection) -> tuple[bool, bool, float | None]:
            row = conn.execute("SELECT expires_at FROM core_data WHERE key = ?", (key,)).fetchone()
            live = row is not None and (row[0] is None or row[0] > now)
            if live and if_not_exists:
                return False, False, row[0]
            conn.execute(
                "INSERT INTO core_data(key, value, expires_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
                "expires_at = excluded.expires_at, updated_at = excluded.updated_at",
                (key, encoded, expires_at, now),
            )
            return True, not live, expires_at

        success, created, expiry = await self._db.transaction(write)
        result: dict[str, Any] = {"success": success, "key": key, "created": created}
        if expiry is not None:
            result["expires_at"] = _iso(expiry)
        return result

    async def get(self, key: str) -> dict[str, Any]:
        """Return ``{value, exists[, expires_at]}``; an expired key reads as absent."""
        now = self._clock()
        row = await self._db.fetchone(
            "SELECT value, expires_at FROM core_data WHERE key = ?", (key,)
        )
        if row is None:
            return {"value": None, "exists": False}
        if row["expires_at"] is not None and row["expires_at"] <= now:
            await self._db.execute(
                "DELETE FROM core_data WHERE key = ? AND expires_at <= ?", (key, now)
            )
            return {"value": None, "exists": False}
        result: dict[str, Any] = {"value": json.loads(row["value"]), "exists": True}
        if row["expires_at"] is not None:
            result["expires_at"] = _iso(row["expires_at"])
        return result

    async def purge_expired(self) -> int:
        """Delete every expired row; return how many."""
        return await self._db.execute(
            "DELETE FROM core_data WHERE expires_at IS NOT NULL AND expires_at <= ?",
            (self._clock(),),
        )


def store_tools(config: Mapping[str, Any], env: ToolEnv) -> list[ToolSpec]:
    """Return the ``core:store_data`` and ``core:get_data`` specs bound to ``env.db``."""
    store = DataStore(env.db, env.clock)

    async def store_data(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        env.db.ensure_reserve("core:store_data")  # low priority: the audit keeps the room
        ttl = int(params.get("ttl_seconds", 0))
        if ttl > MAX_TTL_S:  # the seed's schema has no maximum; a date must stay a date
            raise InvalidParamsError(
                f"ttl_seconds must be at most {MAX_TTL_S} (100 years)",
                {"field": "ttl_seconds", "maximum": MAX_TTL_S},
            )
        return await store.put(
            params["key"],
            params["value"],
            ttl_seconds=ttl,
            if_not_exists=bool(params.get("if_not_exists", False)),
        )

    async def get_data(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await store.get(params["key"])

    return [
        ToolSpec(definition=load_definition("store_data"), handler=store_data),
        ToolSpec(definition=load_definition("get_data"), handler=get_data),
    ]
