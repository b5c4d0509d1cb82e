"""Renames and aliases: a device's name, room and aliases, a room's aliases, live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bridge.errors import (
    ConflictError,
    NotFoundError,
)
from bridge.matter.home.devices import (
    Device,
    UserNames,
)
from bridge.matter.home.naming import clean_aliases
from bridge.matter.home.rooms import Room
from bridge.matter.sync.state import SyncState


def _refuse_taken(
    aliases: Sequence[str], taken: Mapping[str, tuple[str, dict[str, Any]]], kind: str
) -> None:
    """Raise ``CONFLICT`` for the first alias ``taken`` (casefolded label → owner) holds."""
    for alias in aliases:
        found = taken.get(alias.casefold())
        if found is not None:
            owner, details = found
            raise ConflictError(
                f"'{alias}' already names {owner}; pick an alias no other {kind} uses",
                {"alias": alias, **details},
            )


class Renaming(SyncState):
    """Rename devices and alias rooms; the tools follow at once."""

    async def set_room_aliases(self, ref: str, aliases: Sequence[str]) -> Room:
        """Replace a room's aliases (persisted when a store is set); its tools follow.

        An alias that is another room's name or alias is a ``CONFLICT``: spoken commands
        could not tell the two rooms apart.
        """
        room = self.find_room(ref)
        clean = clean_aliases(list(aliases), owner="room")
        taken = {
            label.casefold(): (f"the room {other.name}", {"room": other.name})
            for other in self.rooms()
            if other.slug != room.slug
            for label in other.labels
        }
        _refuse_taken(clean, taken, "room")
        if self.names is not None:
            await self.names.set_room_aliases(room.slug, clean)
        if clean:
            self._room_aliases[room.slug] = clean
        else:
            self._room_aliases.pop(room.slug, None)
        self.sync()
        return self.find_room(room.slug)

    async def rename(
        self,
        device_id: str,
        name: str | None,
        room: str | None = None,
        aliases: Sequence[str] | None = None,
    ) -> Device:
        """Rename a device now (persisted when a store is set) and regenerate its tools.

        ``name=None`` keeps the name (and so the tool names); ``room=None`` keeps the room
        and ``room=""`` removes it; ``aliases=None`` keeps the aliases, a list replaces
        them. An alias that is another device's name or alias is a ``CONFLICT`` (spoken
        commands could not tell the two apart). Old tools are unregistered and new ones
        registered.
        """
        if device_id not in self._devices:
            raise NotFoundError(f"no Matter device '{device_id}'", {"device_id": device_id})
        clean = clean_aliases(list(aliases)) if aliases is not None else None
        if clean:
            self._check_alias_clashes(device_id, clean)
        if self.names is not None:
            stored = await self.names.rename(device_id, name, room=room, aliases=clean)
        else:
            current = self._user_names.get(device_id, UserNames())
            stored = UserNames(
                name=current.name if name is None else name,
                room=current.room if room is None else (room or None),
                slug=current.slug if name is None else None,
                aliases=current.aliases if clean is None else clean,
            )
        self._user_names[device_id] = stored
        self.sync()
        return self._devices[device_id]

    def _check_alias_clashes(self, device_id: str, aliases: Sequence[str]) -> None:
        taken: dict[str, tuple[str, dict[str, Any]]] = {}
        for device in self._devices.values():
            if device.id == device_id:
                continue
            for label in (device.name, *device.aliases):
                taken.setdefault(
                    label.casefold(), (f"{device.name} ({device.id})", {"device_id": device.id})
                )
        _refuse_taken(aliases, taken, "device")
