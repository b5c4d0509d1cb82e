"""Persisted device names, rooms, aliases and slugs in the bridge's SQLite database.

A person's ``devices rename`` lands here; the bridge also stores every slug it hands out
so a device keeps its tool names across restarts even when other devices come and go.
Slugs are unique (a ``UNIQUE`` constraint), so two devices can never share tool names.
``DeviceRename`` is the validated body of ``PATCH /v1/devices/{device}``.

Details: docs/modules.md, ``bridge.matter.home.naming``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from bridge.errors import ConflictError, InvalidParamsError
from bridge.matter.home.devices import SLUG_RE, UserNames, clean_label, slugify
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
MIGRATION_ALIASES = "ALTER TABLE matter_device_names ADD COLUMN aliases TEXT;"
MIGRATION_ROOM_ALIASES = """
CREATE TABLE IF NOT EXISTS matter_room_aliases (
    room_slug TEXT PRIMARY KEY,
    aliases TEXT NOT NULL,
    updated_at REAL NOT NULL
);
"""
MAX_NAME = 64
MAX_ALIASES = 16
RENAME_FIELDS = ("name", "room", "aliases")


def clean_aliases(value: Any, owner: str = "device") -> tuple[str, ...]:
    """Return validated aliases (order kept, case-insensitive duplicates dropped)."""
    if not isinstance(value, list | tuple):
        raise InvalidParamsError("'aliases' must be a list of strings", {"field": "aliases"})
    if len(value) > MAX_ALIASES:
        raise InvalidParamsError(
            f"a {owner} may have at most {MAX_ALIASES} aliases (got {len(value)})",
            {"field": "aliases"},
        )
    out: list[str] = []
    seen: set[str] = set()
    for index, raw in enumerate(value):
        clean = clean_label(raw)
        if not isinstance(raw, str) or clean is None or len(clean) > MAX_NAME:
            raise InvalidParamsError(
                f"alias {index + 1} must be a string of 1-{MAX_NAME} visible characters",
                {"field": "aliases", "index": index},
            )
        if clean.casefold() not in seen:
            seen.add(clean.casefold())
            out.append(clean)
    return tuple(out)


def _aliases_from_db(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, str):
        return ()
    try:
        doc = json.loads(raw)
    except ValueError:
        return ()
    return tuple(a for a in doc if isinstance(a, str)) if isinstance(doc, list) else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRename:
    """A new name, room and/or aliases for one device (``None``: keep; room ``""``: remove it)."""

    name: str | None = None
    room: str | None = None
    aliases: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, doc: Any) -> DeviceRename:
        """Read and validate a rename body; raise ``InvalidParamsError`` when malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("the rename request must be a JSON object")
        unknown = sorted(set(doc) - set(RENAME_FIELDS))
        if unknown:
            raise InvalidParamsError(
                f"unknown fields: {', '.join(unknown)} (only 'name', 'room' and 'aliases')",
                {"fields": unknown},
            )
        if not set(doc) & set(RENAME_FIELDS):
            raise InvalidParamsError("give a new 'name', a 'room' or 'aliases'")
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
        aliases = clean_aliases(doc["aliases"]) if "aliases" in doc else None
        return cls(name=name, room=room, aliases=aliases)


class DeviceNameStore:
    """Read and write what people called their devices, and the slugs in use."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.migrate("matter_device_names_v1", MIGRATION)
        db.migrate("matter_device_names_v2_aliases", MIGRATION_ALIASES)
        db.migrate("matter_room_aliases_v1", MIGRATION_ROOM_ALIASES)

    async def load(self) -> dict[str, UserNames]:
        """Return every stored entry keyed by device id."""
        rows = await self.db.fetchall(
            "SELECT device_id, name, room, slug, aliases FROM matter_device_names"
        )
        return {
            r["device_id"]: UserNames(
                name=r["name"],
                room=r["room"],
                slug=r["slug"],
                aliases=_aliases_from_db(r["aliases"]),
            )
            for r in rows
        }

    async def save_slugs(self, slugs: dict[str, str]) -> None:
        """Store the slugs the devices use now (device id → slug), in one transaction.

        The caller's slugs are unique and current, so a stored row that still holds
        one of them for another device is stale (written before a rename freed it) and
        gives it up; that device's own current slug is in this or the next call.
        """

        def write(conn: sqlite3.Connection) -> None:
            now = time.time()
            for device_id, slug in slugs.items():
                conn.execute(
                    "UPDATE matter_device_names SET slug = NULL, updated_at = ? "
                    "WHERE slug = ? AND device_id != ?",
                    (now, slug, device_id),
                )
                conn.execute(
                    "INSERT INTO matter_device_names(device_id, slug, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT(device_id) DO UPDATE SET slug = excluded.slug, "
                    "updated_at = excluded.updated_at",
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
        aliases: tuple[str, ...] | list[str] | None = None,
    ) -> UserNames:
        """Store a new name (and room, aliases, slug when given); raise on bad input/taken slug.

        ``name=None`` keeps the stored name and slug (a room change only); ``room=None``
        keeps the stored room and ``room=""`` removes it; ``aliases=None`` keeps them and
        a list replaces them. Everything is written in one transaction or not at all.
        """
        new_aliases = clean_aliases(list(aliases)) if aliases is not None else None
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
                "SELECT name, room, slug, aliases FROM matter_device_names WHERE device_id = ?",
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
            kept = _aliases_from_db(row["aliases"]) if row else ()
            final_aliases = new_aliases if new_aliases is not None else kept
            try:
                conn.execute(
                    "INSERT INTO matter_device_names(device_id, name, room, slug, aliases, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(device_id) DO UPDATE SET "
                    "name = excluded.name, room = excluded.room, slug = excluded.slug, "
                    "aliases = excluded.aliases, updated_at = excluded.updated_at",
                    (
                        device_id,
                        clean_name,
                        new_room,
                        new_slug,
                        json.dumps(list(final_aliases)),
                        time.time(),
                    ),
                )
            except sqlite3.IntegrityError as err:
                raise ConflictError(
                    f"slug '{new_slug}' is already used by another device", {"slug": new_slug}
                ) from err
            return UserNames(name=clean_name, room=new_room, slug=new_slug, aliases=final_aliases)

        return await self.db.transaction(write)

    async def load_room_aliases(self) -> dict[str, tuple[str, ...]]:
        """Return every room's aliases keyed by room slug."""
        rows = await self.db.fetchall("SELECT room_slug, aliases FROM matter_room_aliases")
        return {r["room_slug"]: _aliases_from_db(r["aliases"]) for r in rows}

    async def set_room_aliases(self, room_slug: str, aliases: tuple[str, ...]) -> None:
        """Replace a room's aliases (validated by the caller); an empty list removes them."""
        if not room_slug or slugify(room_slug) != room_slug:
            raise InvalidParamsError(f"'{room_slug}' is not a room slug")
        if aliases:
            await self.db.execute(
                "INSERT INTO matter_room_aliases(room_slug, aliases, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(room_slug) DO UPDATE SET aliases = excluded.aliases, "
                "updated_at = excluded.updated_at",
                (room_slug, json.dumps(list(aliases)), time.time()),
            )
        else:
            await self.db.execute(
                "DELETE FROM matter_room_aliases WHERE room_slug = ?", (room_slug,)
            )

    async def forget(self, device_id: str) -> bool:
        """Remove a device's stored name and slug; return whether there was one."""
        return (
            await self.db.execute(
                "DELETE FROM matter_device_names WHERE device_id = ?", (device_id,)
            )
            > 0
        )
