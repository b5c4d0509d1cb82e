"""Floors, live: create, rename, delete floors and move rooms between them.

Every change is made on a copy of the model, checked, stored (when a store is set) and
only then made current, one change at a time; a change the store refuses (a full disk)
leaves the floors as they were. Spoken commands read the same floors.
"""

from __future__ import annotations

import logging

from bridge.errors import BridgeError
from bridge.matter.home.floors import (
    Floor,
    FloorChange,
    FloorSeed,
    HomeFloors,
    floor_slug,
    seed_fingerprint,
)
from bridge.matter.sync.state import SyncState

LOGGER = logging.getLogger(__name__)


class Flooring(SyncState):
    """The home's floors: one model for the API, the CLI, the console and speech."""

    async def start(self) -> None:
        """Load the names (``SyncState.start``), then the floors, seeded by the configuration."""
        await super().start()
        await self._load_floors()

    def floors(self) -> list[Floor]:
        """Return the floors in their order (each with the slugs of its rooms)."""
        return list(self._floors.floors)

    def find_floor(self, ref: str) -> Floor:
        """Return the floor called ``ref`` (name, slug or alias; any case); else NOT_FOUND."""
        return self._floors.find(ref)

    def floor_of(self, room_slug: str) -> Floor | None:
        """Return the floor a room (slug) is on, if any."""
        return self._floors.floor_of(room_slug)

    async def create_floor(self, change: FloorChange) -> Floor:
        """Add a floor; raise ``CONFLICT`` on a name in use or too many floors."""
        async with self._floor_lock:
            model, floor = self._floors.create(change)
            await self._commit_floors(model)
        return floor

    async def change_floor(self, ref: str, change: FloorChange) -> Floor:
        """Rename, re-level or re-alias a floor; its rooms stay on it."""
        async with self._floor_lock:
            model, floor = self._floors.change(ref, change)
            await self._commit_floors(model)
        return floor

    async def delete_floor(self, ref: str) -> Floor:
        """Delete a floor; its rooms are then on no floor. Return the deleted floor."""
        async with self._floor_lock:
            model, floor = self._floors.delete(ref)
            await self._commit_floors(model)
        return floor

    async def set_room_floor(self, room_ref: str, floor_ref: str | None) -> Floor | None:
        """Put a room on a floor (``None``: on none); return the room's floor now."""
        room = self.find_room(room_ref)
        async with self._floor_lock:
            model = self._floors.place(room.slug, floor_ref)
            await self._commit_floors(model)
        return self._floors.floor_of(room.slug)

    async def _commit_floors(self, model: HomeFloors, seeds: dict[str, str] | None = None) -> None:
        if self.floor_store is not None:
            await self.floor_store.save(model, seeds)
        self._floors = model

    async def _load_floors(self) -> None:
        stored, applied = (
            await self.floor_store.load() if self.floor_store is not None else (HomeFloors(), {})
        )
        self._floors = stored
        # A configured floor is applied when it is new or its entry was edited since.
        fresh = [s for s in self.floor_seeds if applied.get(_seed_key(s)) != seed_fingerprint(s)]
        if not fresh:
            return
        try:
            model = stored.seeded(fresh, self._room_aliases)
        except BridgeError as err:
            # The schema already bounds the file; what is left (a word two floors share)
            # is said once and the stored floors stay.
            LOGGER.warning("voice.floors not applied: %s", err.message)
            return
        async with self._floor_lock:
            await self._commit_floors(model, {_seed_key(s): seed_fingerprint(s) for s in fresh})


def _seed_key(seed: FloorSeed) -> str:
    return floor_slug(seed.name)
