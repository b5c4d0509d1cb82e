"""Persisted device names, rooms and slugs in the bridge's SQLite database.

A person's ``devices rename`` lands here; the bridge also stores every slug it hands out
so a device keeps its tool names across restarts even when other devices come and go.
Slugs are unique (a ``UNIQUE`` constraint), so two devices can never share tool names.
"""

from __future__ import annotations

import sqlite3
import time

from bridge.errors import ConflictError, InvalidParamsError
from bridge.matter.devices import SLUG_RE, UserNames, clean_label
from bridge.storage import Database

MIGRATION = """
CREATE TABLE IF NOT EXISTS matter_device_names (
    device_id TEXT PRIMARY KEY,
    name TEXT,
    room TEXT,
    slug TEXT UNIQUE,
    updated_at REAL NOT NULL
);
"""
MAX_NAME = 64


class DeviceNameStore:
    """Read and write what people called their devices, and the slugs in use."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.migrate("matter_device_names_v1", MIGRATION)

    async def load(self) -> dict[str, UserNames]:
        """Return every stored entry keyed by device id."""
        rows = await self.db.fetchall("SELECT device_id, name, room, slug FROM matter_device_names")
        return {
            r["device_id"]: UserNames(name=r["name"], room=r["room"], slug=r["slug"]) for r in rows
        }

    async def save_slugs(self, slugs: dict[str, str]) -> None:
        """Persist the slugs handed out (first one wins; existing slugs are kept)."""

        def write(conn: sqlite3.Connection) -> None:
            now = time.time()
            for device_id, slug in slugs.items():
                conn.execute(
                    "INSERT INTO matter_device_names(device_id, slug, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT(device_id) DO UPDATE SET slug = excluded.slug, "
                    "updated_at = excluded.updated_at WHERE matter_device_names.slug IS NULL",
                    (device_id, slug, now),
                )

        await self.db.transaction(write)

    async def rename(
        self, device_id: str, name: str, *, room: str | None = None, slug: str | None = None
    ) -> UserNames:
        """Store a new name (and room, and slug when given); raise on bad input or a taken slug."""
        clean = clean_label(name)
        if clean is None or len(clean) > MAX_NAME:
            raise InvalidParamsError(f"a device name must have 1-{MAX_NAME} visible characters")
        clean_room = clean_label(room) if room is not None else None
        if slug is not None and not SLUG_RE.match(slug):
            raise InvalidParamsError(f"slug '{slug}' must match {SLUG_RE.pattern}")

        def write(conn: sqlite3.Connection) -> UserNames:
            row = conn.execute(
                "SELECT room FROM matter_device_names WHERE device_id = ?", (device_id,)
            ).fetchone()
            new_room = clean_room if room is not None else (row["room"] if row else None)
            # Without an explicit slug the bridge derives a new one from the new name.
            new_slug = slug
            try:
                conn.execute(
                    "INSERT INTO matter_device_names(device_id, name, room, slug, updated_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(device_id) DO UPDATE SET "
                    "name = excluded.name, room = excluded.room, slug = excluded.slug, "
                    "updated_at = excluded.updated_at",
                    (device_id, clean, new_room, new_slug, time.time()),
                )
            except sqlite3.IntegrityError as err:
                raise ConflictError(
                    f"slug '{new_slug}' is already used by another device", {"slug": new_slug}
                ) from err
            return UserNames(name=clean, room=new_room, slug=new_slug)

        return await self.db.transaction(write)

    async def forget(self, device_id: str) -> bool:
        """Remove a device's stored name and slug; return whether there was one."""
        return await self.db.execute(
            "DELETE FROM matter_device_names WHERE device_id = ?", (device_id,)
        ) > 0
