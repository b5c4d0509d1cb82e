"""The home's floors for spoken commands: which rooms are on which floor, and its words.

A floor comes from the home model (``bridge.matter``'s floors, set through the API, the
CLI or the console, seeded by ``voice.floors``), or any object with the same fields
(a ``FloorConfig``: name, level, aliases, rooms).
Besides its name and aliases it answers to the everyday words of its level in each
language: level 0 is "downstairs" / "the ground floor" ("unten", "en bas", "abajo",
"beneden" …), a basement (level -1) "the basement", and the floor above the ground floor
"upstairs" ("oben", "à l'étage", "arriba", "boven" …) — but only when it is the one
floor above: with two, "upstairs" could be either and is not given to any (the
configured names still work). Rooms are matched by name, alias or slug.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge.matter import FloorSeed, Room, slugify

# What a floor gives speech: the home model's ``Floor`` and a ``FloorConfig`` alike.
FloorLike = FloorSeed


# level -> everyday words for a floor at that level, per language ("up": the one floor
# above the ground floor when there is only one).
_LEVEL_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "down": ("downstairs", "ground floor"),
        "up": ("upstairs",),
        "basement": ("basement", "cellar"),
    },
    "de": {
        "down": ("unten", "Erdgeschoss", "EG"),
        "up": ("oben", "Obergeschoss", "OG"),
        "basement": ("Keller", "Untergeschoss"),
    },
    "fr": {
        "down": ("en bas", "rez-de-chaussée"),
        "up": ("en haut", "étage"),
        "basement": ("sous-sol", "cave"),
    },
    "es": {
        "down": ("abajo", "planta baja"),
        "up": ("arriba", "planta de arriba", "planta alta"),
        "basement": ("sótano",),
    },
    "nl": {
        "down": ("beneden", "benedenverdieping", "begane grond"),
        "up": ("boven", "bovenverdieping"),
        "basement": ("kelder",),
    },
}


# level -> the ordinal words for it where they are unambiguous: in German, French,
# Spanish and Dutch the first floor is the one above the ground floor ("im ersten Stock",
# "au premier étage"); English ones are left out ("first floor" is the ground floor in
# American English).
_ORDINAL_WORDS: dict[int, tuple[str, ...]] = {
    1: (
        *("erster Stock", "ersten Stock", "erste Stock", "1. Stock", "erste Etage"),
        *("ersten Etage", "erstes Obergeschoss", "ersten Obergeschoss"),
        *("premier étage", "1er étage", "primera planta", "primer piso", "primer nivel"),
        *("eerste verdieping", "eerste etage"),
    ),
    2: (
        *("zweiter Stock", "zweiten Stock", "zweite Stock", "2. Stock", "zweite Etage"),
        *("zweiten Etage", "zweites Obergeschoss", "zweiten Obergeschoss"),
        *("deuxième étage", "2e étage", "second étage", "segunda planta", "segundo piso"),
        *("tweede verdieping", "tweede etage"),
    ),
    3: (
        *("dritter Stock", "dritten Stock", "dritte Stock", "3. Stock", "dritte Etage"),
        *("dritten Etage", "troisième étage", "3e étage", "tercera planta", "tercer piso"),
        *("derde verdieping", "derde etage"),
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Floor:
    """One floor: its name, slug, level, the words for it and the slugs of its rooms."""

    name: str
    slug: str
    level: int
    labels: tuple[str, ...]
    rooms: tuple[str, ...]


def floors_of(configured: Sequence[FloorLike], rooms: Sequence[Room]) -> list[Floor]:
    """Return the floors with their words and the slugs of their rooms."""
    by_label: dict[str, str] = {}
    for room in rooms:
        by_label[room.slug] = room.slug
        for label in room.labels:
            by_label[label.casefold()] = room.slug
    above = [f for f in configured if f.level >= 1]
    floors = []
    for floor in configured:
        words: list[str] = [floor.name, *floor.aliases]
        where = (
            "down"
            if floor.level == 0
            else "basement"
            if floor.level < 0
            else "up"
            if len(above) == 1
            else None
        )
        if where is not None:
            for table in _LEVEL_WORDS.values():
                words.extend(table[where])
        words.extend(_ORDINAL_WORDS.get(floor.level, ()))
        slugs = [by_label.get(r.casefold()) or by_label.get(slugify(r)) for r in floor.rooms]
        floors.append(
            Floor(
                name=floor.name,
                slug=slugify(floor.name) or f"floor_{floor.level}",
                level=floor.level,
                labels=tuple(dict.fromkeys(words)),
                rooms=tuple(dict.fromkeys(s for s in slugs if s)),
            )
        )
    return floors
