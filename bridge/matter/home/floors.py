"""The home's floors: which rooms are on which floor, kept in the bridge's SQLite database.

A floor has a name, a level (0 the ground floor, 1 the one above, -1 a basement),
aliases (more words for it, in any language: "erster Stock", "premier étage") and its
rooms (room slugs). A room is on at most one floor. ``HomeFloors`` is the model: every
change returns a new one, checked (limits, names no other floor uses) before anything is
stored; ``FloorStore`` persists it in one transaction. ``FloorChange`` is the validated
body of ``POST /v1/floors`` and ``PATCH /v1/floors/{floor}``.

Floors in the configuration (``voice.floors``) seed the model: an entry is applied when
the bridge first sees it and again whenever it is edited in the file (its fingerprint
changed); between edits the API, CLI and console own the floors, so a floor renamed or
deleted through them stays so across restarts.

Details: docs/modules.md, ``bridge.matter.home.floors``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bridge.errors import ConflictError, InvalidParamsError, NotFoundError
from bridge.matter.home.devices import clean_label, slugify
from bridge.matter.home.naming import MAX_NAME, clean_aliases
from bridge.matter.home.rooms import room_slug
from bridge.storage import Database
from bridge.tools.naming import short_hash

MAX_FLOORS = 16
MAX_FLOOR_ROOMS = 256
LEVEL_MIN = -5
LEVEL_MAX = 50
FLOOR_FIELDS = ("name", "level", "aliases")

MIGRATION = """
CREATE TABLE IF NOT EXISTS matter_floors (
    slug TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    level INTEGER NOT NULL,
    aliases TEXT NOT NULL,
    rooms TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matter_floor_seeds (
    slug TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL
);
"""


class FloorSeed(Protocol):
    """What a configured floor gives (``bridge.config.FloorConfig`` has these)."""

    @property
    def name(self) -> str:
        """Return the floor's name."""

    @property
    def level(self) -> int:
        """Return the floor's level."""

    @property
    def aliases(self) -> tuple[str, ...]:
        """Return more words for the floor."""

    @property
    def rooms(self) -> tuple[str, ...]:
        """Return its rooms by name, alias or slug."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Floor:
    """One floor: its name, slug, level, aliases and the slugs of its rooms."""

    name: str
    slug: str
    level: int
    aliases: tuple[str, ...] = ()
    rooms: tuple[str, ...] = ()

    @property
    def labels(self) -> tuple[str, ...]:
        """Return the floor's name and aliases."""
        return (self.name, *self.aliases)

    def to_json(self) -> dict[str, Any]:
        """Return the API form of the floor (its rooms are added by the caller)."""
        return {
            "floor": self.name,
            "slug": self.slug,
            "level": self.level,
            "aliases": list(self.aliases),
        }


def floor_slug(name: str) -> str:
    """Return a floor's slug; a name without letters or digits gets ``f_<hash>``."""
    return slugify(name) or f"f_{short_hash(name)}"


def _clean_name(value: Any, field: str = "name") -> str:
    clean = clean_label(value)
    if not isinstance(value, str) or clean is None or len(clean) > MAX_NAME:
        raise InvalidParamsError(
            f"'{field}' must be a string of 1-{MAX_NAME} visible characters", {"field": field}
        )
    return clean


def _clean_level(value: Any) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not (LEVEL_MIN <= value <= LEVEL_MAX)
    ):
        raise InvalidParamsError(
            f"'level' must be a whole number from {LEVEL_MIN} to {LEVEL_MAX} "
            "(0 the ground floor, 1 the one above, -1 a basement)",
            {"field": "level"},
        )
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class FloorChange:
    """A new floor or a change of one (``None``: keep the current value)."""

    name: str | None = None
    level: int | None = None
    aliases: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, doc: Any, *, creating: bool = False) -> FloorChange:
        """Read and validate a floor body; raise ``InvalidParamsError`` when malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("the floor must be a JSON object")
        unknown = sorted(str(k) for k in set(doc) - set(FLOOR_FIELDS))
        if unknown:
            raise InvalidParamsError(
                f"unknown fields: {', '.join(unknown)} (only 'name', 'level' and 'aliases')",
                {"fields": unknown},
            )
        if creating and "name" not in doc:
            raise InvalidParamsError("a new floor needs a 'name'", {"field": "name"})
        if not doc:
            raise InvalidParamsError("give a new 'name', 'level' or 'aliases'")
        return cls(
            name=_clean_name(doc["name"]) if "name" in doc else None,
            level=_clean_level(doc["level"]) if "level" in doc else None,
            aliases=clean_aliases(doc["aliases"], owner="floor") if "aliases" in doc else None,
        )


@dataclass(frozen=True, slots=True)
class HomeFloors:
    """The home's floors in their order; every change returns a new, checked model."""

    floors: tuple[Floor, ...] = ()

    def find(self, ref: str) -> Floor:
        """Return the floor called ``ref`` (its name, slug or an alias; any case)."""
        wanted = ref.strip().casefold()
        for floor in self.floors:
            if wanted in {floor.slug, *(label.casefold() for label in floor.labels)}:
                return floor
        raise NotFoundError(
            f"no floor '{ref}'"
            + (
                f"; floors: {', '.join(f.name for f in self.floors)}"
                if self.floors
                else "; the home has no floors yet"
            ),
            {"floor": ref, "floors": [f.name for f in self.floors]},
        )

    def floor_of(self, room: str) -> Floor | None:
        """Return the floor a room (slug) is on, if any."""
        for floor in self.floors:
            if room in floor.rooms:
                return floor
        return None

    def create(self, change: FloorChange) -> tuple[HomeFloors, Floor]:
        """Return the model with a new floor (named by ``change``) and that floor."""
        if change.name is None:
            raise InvalidParamsError("a new floor needs a 'name'", {"field": "name"})
        if len(self.floors) >= MAX_FLOORS:
            raise ConflictError(
                f"the home has {MAX_FLOORS} floors, the most it may have; delete one first",
                {"limit": MAX_FLOORS},
            )
        floor = Floor(
            name=change.name,
            slug=floor_slug(change.name),
            level=change.level if change.level is not None else 0,
            aliases=change.aliases or (),
        )
        self._check_unique(floor, None)
        return HomeFloors((*self.floors, floor)), floor

    def change(self, ref: str, change: FloorChange) -> tuple[HomeFloors, Floor]:
        """Return the model with floor ``ref`` renamed, re-levelled or re-aliased."""
        old = self.find(ref)
        new = replace(
            old,
            name=change.name if change.name is not None else old.name,
            slug=floor_slug(change.name) if change.name is not None else old.slug,
            level=change.level if change.level is not None else old.level,
            aliases=change.aliases if change.aliases is not None else old.aliases,
        )
        self._check_unique(new, old.slug)
        return HomeFloors(tuple(new if f.slug == old.slug else f for f in self.floors)), new

    def delete(self, ref: str) -> tuple[HomeFloors, Floor]:
        """Return the model without floor ``ref`` (its rooms are on no floor) and that floor."""
        old = self.find(ref)
        return HomeFloors(tuple(f for f in self.floors if f.slug != old.slug)), old

    def place(self, room: str, floor_ref: str | None) -> HomeFloors:
        """Return the model with room (slug) ``room`` on ``floor_ref`` (``None``: on none)."""
        target = self.find(floor_ref) if floor_ref is not None else None
        if target is not None and room not in target.rooms and len(target.rooms) >= MAX_FLOOR_ROOMS:
            raise ConflictError(
                f"the floor {target.name} has {MAX_FLOOR_ROOMS} rooms, the most it may have",
                {"floor": target.name, "limit": MAX_FLOOR_ROOMS},
            )
        out = []
        for floor in self.floors:
            if target is not None and floor.slug == target.slug:
                rooms = floor.rooms if room in floor.rooms else (*floor.rooms, room)
            else:
                rooms = tuple(r for r in floor.rooms if r != room)
            out.append(replace(floor, rooms=rooms))
        return HomeFloors(tuple(out))

    def _check_unique(self, floor: Floor, own_slug: str | None) -> None:
        """Raise ``CONFLICT`` when another floor has ``floor``'s slug, name or an alias."""
        for other in self.floors:
            if other.slug == own_slug:
                continue
            if other.slug == floor.slug:
                raise ConflictError(
                    f"the floor {other.name} already has that name", {"floor": other.name}
                )
            taken = {label.casefold() for label in other.labels}
            for label in floor.labels:
                if label.casefold() in taken:
                    raise ConflictError(
                        f"'{label}' already names the floor {other.name}; pick a word no "
                        "other floor uses",
                        {"alias": label, "floor": other.name},
                    )

    def seeded(
        self, seeds: Sequence[FloorSeed], room_aliases: Mapping[str, Iterable[str]]
    ) -> HomeFloors:
        """Return the model with the configured ``seeds`` applied (created or updated).

        A seed's rooms are named by name, slug or alias (``room_aliases``: slug → aliases);
        each is moved onto that floor. Seeds that break a rule (too many floors, a word
        another floor uses) raise as an API change would.
        """
        by_alias = {a.casefold(): slug for slug, aliases in room_aliases.items() for a in aliases}
        model = self
        for seed in seeds:
            change = FloorChange(
                name=_clean_name(seed.name),
                level=seed.level,
                aliases=clean_aliases(list(seed.aliases), owner="floor"),
            )
            slug = floor_slug(seed.name)
            if any(f.slug == slug for f in model.floors):
                model, floor = model.change(slug, change)
            else:
                model, floor = model.create(change)
            for ref in seed.rooms:
                room = by_alias.get(ref.strip().casefold()) or room_slug(ref)
                if room:
                    model = model.place(room, floor.slug)
        return model


def seed_fingerprint(seed: FloorSeed) -> str:
    """Return a digest of a configured floor (it changes when the entry is edited)."""
    doc = [seed.name, seed.level, list(seed.aliases), list(seed.rooms)]
    return hashlib.sha256(json.dumps(doc, ensure_ascii=False).encode()).hexdigest()[:32]


def _strings(raw: Any) -> tuple[str, ...]:
    try:
        doc = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return ()
    return tuple(x for x in doc if isinstance(x, str)) if isinstance(doc, list) else ()


class FloorStore:
    """Read and write the home's floors and which configured floors were applied."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.migrate("matter_floors_v1", MIGRATION)

    async def load(self) -> tuple[HomeFloors, dict[str, str]]:
        """Return the stored floors and the fingerprints of the applied configured floors."""
        rows = await self.db.fetchall(
            "SELECT slug, name, level, aliases, rooms FROM matter_floors ORDER BY position"
        )
        placed: set[str] = set()
        floors = []
        for r in rows:
            # A room is on one floor: should a row ever repeat one, the first floor keeps it.
            rooms = tuple(room for room in _strings(r["rooms"]) if room not in placed)
            placed.update(rooms)
            floors.append(
                Floor(
                    name=r["name"],
                    slug=r["slug"],
                    level=int(r["level"]),
                    aliases=_strings(r["aliases"]),
                    rooms=rooms,
                )
            )
        seeds = await self.db.fetchall("SELECT slug, fingerprint FROM matter_floor_seeds")
        return HomeFloors(tuple(floors)), {s["slug"]: s["fingerprint"] for s in seeds}

    async def save(self, model: HomeFloors, seeds: Mapping[str, str] | None = None) -> None:
        """Replace the stored floors with ``model`` (and record ``seeds``) in one transaction."""

        def write(conn: sqlite3.Connection) -> None:
            now = time.time()
            conn.execute("DELETE FROM matter_floors")
            for position, floor in enumerate(model.floors):
                conn.execute(
                    "INSERT INTO matter_floors(slug, position, name, level, aliases, rooms, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        floor.slug,
                        position,
                        floor.name,
                        floor.level,
                        json.dumps(list(floor.aliases), ensure_ascii=False),
                        json.dumps(list(floor.rooms), ensure_ascii=False),
                        now,
                    ),
                )
            for slug, fingerprint in (seeds or {}).items():
                conn.execute(
                    "INSERT INTO matter_floor_seeds(slug, fingerprint) VALUES (?, ?) "
                    "ON CONFLICT(slug) DO UPDATE SET fingerprint = excluded.fingerprint",
                    (slug, fingerprint),
                )

        await self.db.transaction(write)
