"""Persisted device names, rooms and slugs in the bridge's SQLite database.

A person's ``devices rename`` lands here; the bridge also stores every slug it hands out
so a device keeps its tool names across restarts even when other devices come and go.
Slugs are unique (a ``UNIQUE`` constraint), so two devices can never share tool names.
``DeviceRename`` is the validated body of ``PATCH /v1/devices/{device}``.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

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
RENAME_FIELDS = ("name", "room")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRename:
    """A new name and/or room for one device (``None``: keep; room ``""``: remove it)."""

    name: str | None = None
    room: str | None = None

    @classmethod
    def from_json(cls, doc: Any) -> DeviceRename:
        """Read and validate a rename body; raise ``InvalidParamsError`` when malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("the rename request must be a JSON object")
        unknown = sorted(set(doc) - set(RENAME_FIELDS))
        if unknown:
            raise InvalidParamsError(
                f"unknown fields: {', '.join(unknown)} (only 'name' and 'room')",
                {"fields": unknown},
            )
        if not set(doc) & set(RENAME_FIELDS):
            raise InvalidParamsError("give a new 'name', a 'room' or both")
        name = doc.get("name")
        if "name" in doc:
            clean = clean_label(name)
            if not isinstance(name, str) or clean is None or len(clean) > MAX_NAME:
                raise InvalidParamsError(
                    f"'name' must be a string of 1-{MAX_NAME} visible characters",
                    {"field": "name"},
                )
            name = clean
        room = doc.get("room")
        if "room" in doc:
            if room is not None and not isinstance(room, str):
                raise InvalidParamsError("'room' must be a string or null", {"field": "room"})
            room = clean_label(room) or ""
            if len(room) > MAX_NAME:
                raise InvalidParamsError(
                    f"'room' must have at most {MAX_NAME} characters", {"field": "room"}
                )
        return cls(name=name, room=room)


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
        self,
        device_id: str,
        name: str | None,
        *,
        room: str | None = None,
        slug: str | None = None,
    ) -> UserNames:
        """Store a new name (and room, and slug when given); raise on bad input or a taken slug.

        ``name=None`` keeps the stored name and slug (a room change only); ``room=None``
        keeps the stored room and ``room=""`` removes it.
        """
        clean = clean_label(name) if name is not None else None
        if name is not None and (clean is None or len(clean) > MAX_NAME):
            raise InvalidParamsError(f"a device name must have 1-{MAX_NAME} visible characters")
        clean_room = clean_label(room) if room is not None else None
        if clean_room is not None and len(clean_room) > MAX_NAME:
            raise InvalidParamsError(f"a room name must have at most {MAX_NAME} characters")
        if slug is not None and not SLUG_RE.match(slug):
            raise InvalidParamsError(f"slug '{slug}' must match {SLUG_RE.pattern}")

        def write(conn: sqlite3.Connection) -> UserNames:
            row = conn.execute(
                "SELECT name, room, slug FROM matter_device_names WHERE device_id = ?",
                (device_id,),
            ).fetchone()
            new_room = clean_room if room is not None else (row["room"] if row else None)
            # Without an explicit slug the bridge derives a new one from the new name.
            new_slug = slug
            if name is None:
                clean_name = row["name"] if row else None
                new_slug = slug or (row["slug"] if row else None)
            else:
                clean_name = clean
            try:
                conn.execute(
                    "INSERT INTO matter_device_names(device_id, name, room, slug, updated_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(device_id) DO UPDATE SET "
                    "name = excluded.name, room = excluded.room, slug = excluded.slug, "
                    "updated_at = excluded.updated_at",
                    (device_id, clean_name, new_room, new_slug, time.time()),
                )
            except sqlite3.IntegrityError as err:
                raise ConflictError(
                    f"slug '{new_slug}' is already used by another device", {"slug": new_slug}
                ) from err
            return UserNames(name=clean_name, room=new_room, slug=new_slug)

        return await self.db.transaction(write)

    async def forget(self, device_id: str) -> bool:
        """Remove a device's stored name and slug; return whether there was one."""
        return await self.db.execute(
            "DELETE FROM matter_device_names WHERE device_id = ?", (device_id,)
        ) > 0
