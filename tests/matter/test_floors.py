"""The floors model (``HomeFloors``) and its store (``FloorStore``) on real SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.config import FloorConfig
from bridge.errors import ConflictError, InvalidParamsError, NotFoundError
from bridge.matter.home.floors import (
    Floor,
    FloorChange,
    FloorStore,
    HomeFloors,
    seed_fingerprint,
)
from bridge.storage import Database

TWO = HomeFloors(
    (
        Floor(name="Ground Floor", slug="ground_floor", level=0, rooms=("kitchen", "hall")),
        Floor(
            name="First Floor",
            slug="first_floor",
            level=1,
            aliases=("upstairs",),
            rooms=("bedroom",),
        ),
    )
)


def test_a_room_is_on_one_floor_at_most() -> None:
    moved = TWO.place("kitchen", "upstairs")
    assert [(f.slug, f.rooms) for f in moved.floors] == [
        ("ground_floor", ("hall",)),
        ("first_floor", ("bedroom", "kitchen")),
    ]
    # Placing it where it is keeps its place; None takes it off every floor.
    assert moved.place("kitchen", "First Floor") == moved
    off = moved.place("kitchen", None)
    assert [(f.slug, f.rooms) for f in off.floors] == [
        ("ground_floor", ("hall",)),
        ("first_floor", ("bedroom",)),
    ]
    assert off.floor_of("kitchen") is None
    assert TWO.floor_of("kitchen") == TWO.floors[0]  # the model itself never changes


def test_rename_keeps_the_rooms_and_moves_the_slug() -> None:
    model, floor = TWO.change("first_floor", FloorChange(name="Obergeschoss"))
    assert (floor.name, floor.slug, floor.level, floor.aliases, floor.rooms) == (
        "Obergeschoss",
        "obergeschoss",
        1,
        ("upstairs",),
        ("bedroom",),
    )
    assert model.find("OBERGESCHOSS") == floor
    with pytest.raises(NotFoundError):
        model.find("first_floor")


def test_words_another_floor_has_and_limits_are_refused() -> None:
    for change in (
        FloorChange(name="ground floor"),
        FloorChange(name="Attic", aliases=("Upstairs",)),
        FloorChange(name="Ground-Floor"),  # another name, the same slug
    ):
        with pytest.raises(ConflictError):
            TWO.create(change)
    with pytest.raises(ConflictError):
        TWO.change("ground_floor", FloorChange(aliases=("first floor",)))
    model = TWO
    for n in range(14):
        model, _ = model.create(FloorChange(name=f"Level {n}", level=2))
    with pytest.raises(ConflictError) as err:
        model.create(FloorChange(name="One Too Many"))
    assert err.value.details == {"limit": 16}
    many = HomeFloors(
        (Floor(name="Big", slug="big", level=0, rooms=tuple(f"r{i}" for i in range(256))),)
    )
    with pytest.raises(ConflictError):
        many.place("r256", "big")
    assert many.place("r3", "big") == many  # a room already there is not one more


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {},
        {"name": ""},
        {"name": " \x00 "},
        {"name": "x" * 65},
        {"name": "Attic", "level": -6},
        {"name": "Attic", "level": "1"},
        {"name": "Attic", "level": False},
        {"name": "Attic", "aliases": ["ok", ""]},
        {"name": "Attic", "rooms": []},
    ],
)
def test_floor_bodies_are_checked(body: object) -> None:
    with pytest.raises(InvalidParamsError):
        FloorChange.from_json(body, creating=True)


def test_a_floor_body_is_cleaned() -> None:
    change = FloorChange.from_json(
        {"name": "  Attic\x00 ", "level": -1, "aliases": ["loft", "LOFT", "Dachboden"]},
        creating=True,
    )
    assert change == FloorChange(name="Attic", level=-1, aliases=("loft", "Dachboden"))
    with pytest.raises(InvalidParamsError):
        FloorChange.from_json({"level": 2}, creating=True)  # a new floor needs a name
    assert FloorChange.from_json({"level": 2}) == FloorChange(level=2)


def test_seeds_name_rooms_by_name_slug_or_alias() -> None:
    seeds = [
        FloorConfig(name="Ground Floor", level=0, rooms=("Living Room", "Küche")),
        FloorConfig(name="Attic", level=2, aliases=("loft",), rooms=("bedroom",)),
    ]
    model = TWO.seeded(seeds, {"kitchen": ("Küche",)})
    assert [(f.name, f.level, f.aliases, f.rooms) for f in model.floors] == [
        ("Ground Floor", 0, (), ("kitchen", "hall", "living_room")),
        ("First Floor", 1, ("upstairs",), ()),
        ("Attic", 2, ("loft",), ("bedroom",)),
    ]
    assert seed_fingerprint(seeds[0]) != seed_fingerprint(
        FloorConfig(name="Ground Floor", level=0, rooms=("Living Room",))
    )


async def test_the_store_keeps_the_model_and_the_applied_seeds(tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    try:
        store = FloorStore(db)
        assert await store.load() == (HomeFloors(), {})
        moved = TWO.place("kitchen", "first_floor")
        await store.save(moved, {"ground_floor": "abc"})
        await store.save(moved, {"first_floor": "def"})
    finally:
        db.close()
    db = Database(tmp_path / "bridge.db")
    try:
        model, seeds = await FloorStore(db).load()
        assert model == moved
        assert seeds == {"ground_floor": "abc", "first_floor": "def"}
        # A room written on two floors (not by this code) stays on the first only.
        db.execute_sync('UPDATE matter_floors SET rooms = \'["hall","kitchen"]\'')
        model, _ = await FloorStore(db).load()
        assert [f.rooms for f in model.floors] == [("hall", "kitchen"), ()]
    finally:
        db.close()
