"""Floors in the home model over HTTP: listed within visibility, changed, checked, heard.

A real bridge on a real controller holding the furnished voice test home (its floors
seeded by ``voice.floors``: Ground Floor and First Floor); every change goes through
``/v1/floors`` or ``PATCH /v1/rooms/{room}`` and speech (``/v1/intents/handle``) must
hear the model the API changed.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home
from tests.voice.sentence_set import DUMPS, VOICE, furnish

pytestmark = pytest.mark.controller

ADMIN = ("device:manage:*", "device:read:*")
GROUND = {
    "floor": "Ground Floor",
    "slug": "ground_floor",
    "level": 0,
    "aliases": [],
    "rooms": [
        {"room": "Kitchen", "slug": "kitchen"},
        {"room": "Living Room", "slug": "living_room"},
        {"room": "Hall", "slug": "hall"},
        {"room": "Salon", "slug": "salon"},
        {"room": "Terraza", "slug": "terraza"},
    ],
    "waiting_rooms": [],
}
FIRST = {
    "floor": "First Floor",
    "slug": "first_floor",
    "level": 1,
    "aliases": ["erster Stock", "premier étage", "primera planta", "eerste verdieping"],
    "rooms": [
        {"room": "Schlafzimmer", "slug": "schlafzimmer"},
        {"room": "Slaapkamer", "slug": "slaapkamer"},
        {"room": "Bathroom", "slug": "bathroom"},
    ],
    "waiting_rooms": [],
}


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "api-floors") as ctl:
        yield ctl


@pytest.fixture
async def home(controller: ThreadedController, tmp_path: Path) -> AsyncIterator[Home]:
    async with start_home(
        controller.url, tmp_path / "state", DUMPS, controller.key_file, VOICE
    ) as running:
        await furnish(running)
        yield running


async def said(home: Home, text: str, token: str) -> dict[str, Any]:
    status, body = await home.request("POST", "/v1/intents/handle", token, {"text": text})
    assert status == 200, body
    return dict(body)


def tools(body: dict[str, Any]) -> list[str]:
    return sorted(c["tool"] for c in body["calls"])


async def test_floors_are_listed_within_what_a_token_may_see(home: Home) -> None:
    status, body = await home.request("GET", "/v1/floors", home.token(*ADMIN))
    assert status == 200, body
    assert body == {"floors": [GROUND, FIRST], "count": 2, "rooms_without_floor": []}
    # The rooms listing says each room's floor.
    status, rooms = await home.request("GET", "/v1/rooms", home.token(*ADMIN))
    assert {r["room"]: r["floor"] for r in rooms["rooms"]}["Bathroom"] == "First Floor"

    # A token for the kitchen light knows of the Kitchen only: one floor, one room.
    kitchen = home.token(f"device:control:{home.ids['node-1-onoff']}")
    status, body = await home.request("GET", "/v1/floors", kitchen)
    assert status == 200, body
    assert body == {
        "floors": [
            {
                "floor": "Ground Floor",
                "slug": "ground_floor",
                "level": 0,
                "aliases": [],
                "rooms": [{"room": "Kitchen", "slug": "kitchen"}],
            }
        ],
        "count": 1,
        "rooms_without_floor": [],
    }
    # No device permission at all: nothing, and an unknown floor's error names none.
    nobody = home.token("home:control:kitchen")
    status, body = await home.request("GET", "/v1/floors", nobody)
    assert body == {"floors": [], "count": 0, "rooms_without_floor": []}
    manager = home.token("device:manage:*")
    status, body = await home.request("PATCH", "/v1/rooms/kitchen", manager, {"floor": "Attic"})
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), body
    assert "Ground Floor" not in body["error"]["message"]


async def test_a_floor_set_through_the_api_is_what_speech_hears(home: Home) -> None:
    admin, control = home.token(*ADMIN), home.token("device:control:*")
    before = await said(home, "turn off the lights upstairs", control)
    assert tools(before) == ["matter:room_schlafzimmer_lights_off"], before

    # The Kitchen moves upstairs: the same sentence now reaches its lights too.
    status, room = await home.request("PATCH", "/v1/rooms/Kitchen", admin, {"floor": "first floor"})
    assert status == 200, room
    assert (room["room"], room["floor"]) == ("Kitchen", "First Floor")
    after = await said(home, "turn off the lights upstairs", control)
    assert tools(after) == [
        "matter:room_kitchen_lights_off",
        "matter:room_schlafzimmer_lights_off",
    ], after
    body = await said(home, "turn off the lights downstairs", control)
    assert "matter:room_kitchen_lights_off" not in tools(body), body

    # A floor made through the API, with an alias, is heard by its name and alias.
    status, loft = await home.request(
        "POST", "/v1/floors", admin, {"name": "Loft", "level": 2, "aliases": ["the attic"]}
    )
    assert status == 201, loft
    assert loft == {
        "floor": "Loft",
        "slug": "loft",
        "level": 2,
        "aliases": ["the attic"],
        "rooms": [],
        "waiting_rooms": [],
    }
    status, room = await home.request("PATCH", "/v1/rooms/salon", admin, {"floor": "the attic"})
    assert (status, room["floor"]) == (200, "Loft"), room
    body = await said(home, "turn on the lights in the attic", control)
    assert tools(body) == ["matter:room_salon_lights_on"], body
    assert body["speech"] == "Turned on the lights on Loft."
    # Two floors above the ground floor now: "upstairs" names neither and does nothing.
    body = await said(home, "turn off the lights upstairs", control)
    assert (body["calls"], body["handled"]) == ([], False), body

    # Renamed: heard by the new name, not the old; deleted: its rooms are on no floor.
    status, loft = await home.request("PATCH", "/v1/floors/loft", admin, {"name": "Dachboden"})
    assert (status, loft["slug"], loft["rooms"]) == (
        200,
        "dachboden",
        [{"room": "Salon", "slug": "salon"}],
    ), loft
    body = await said(home, "turn on the lights on the dachboden", control)
    assert tools(body) == ["matter:room_salon_lights_on"], body
    status, gone = await home.request("DELETE", "/v1/floors/Dachboden", admin)
    assert (status, gone["deleted"]["floor"]) == (200, "Dachboden"), gone
    status, listing = await home.request("GET", "/v1/floors", admin)
    assert listing["rooms_without_floor"] == [{"room": "Salon", "slug": "salon"}], listing
    body = await said(home, "turn on the lights in the attic", control)
    assert body["calls"] == [], body
    # Kept in the bridge's database (a 0600 file) for the next start.
    assert home.service.matter is not None
    store = home.service.matter.bridge.floor_store
    assert store is not None
    stored, _ = await store.load()
    assert [(f.name, f.rooms) for f in stored.floors] == [
        ("Ground Floor", ("living_room", "hall", "terraza")),
        ("First Floor", ("schlafzimmer", "slaapkamer", "bathroom", "kitchen")),
    ]
    db_files = [p for p in Path(home.service.config.state_dir).rglob("*.db")]
    assert db_files, "no database file"
    for path in db_files:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


async def test_hostile_floor_requests_get_stable_errors_and_change_nothing(home: Home) -> None:
    admin = home.token(*ADMIN)
    status, before = await home.request("GET", "/v1/floors", admin)
    assert status == 200, before
    for bad in (
        {},
        {"name": ""},
        {"name": "x" * 65},
        {"name": 7},
        {"name": "Attic", "level": 51},
        {"name": "Attic", "level": 1.5},
        {"name": "Attic", "level": True},
        {"name": "Attic", "aliases": "loft"},
        {"name": "Attic", "aliases": [f"a{i}" for i in range(17)]},
        {"name": "Attic", "rooms": ["Kitchen"]},
        {"level": 3},
        ["Attic"],
        "Attic",
    ):
        status, answer = await home.request("POST", "/v1/floors", admin, bad)
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS"), (bad, answer)
    # A word another floor has (name or alias, any case) is a conflict.
    for clash in ({"name": "GROUND FLOOR"}, {"name": "Attic", "aliases": ["Erster Stock"]}):
        status, answer = await home.request("POST", "/v1/floors", admin, clash)
        assert (status, answer["error"]["code"]) == (409, "CONFLICT"), (clash, answer)
    status, answer = await home.request(
        "PATCH", "/v1/floors/first_floor", admin, {"aliases": ["ground floor"]}
    )
    assert (status, answer["error"]["code"]) == (409, "CONFLICT"), answer
    for path, body in (
        ("/v1/floors/first_floor", {}),
        ("/v1/floors/first_floor", {"name": None}),
        ("/v1/floors/first_floor", {"level": -6}),
        ("/v1/rooms/kitchen", {"floor": 7}),
        ("/v1/rooms/kitchen", {"floor": ""}),
        ("/v1/rooms/kitchen", {"floor": "Ground Floor", "name": "x"}),
    ):
        status, answer = await home.request("PATCH", path, admin, body)
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS"), (path, body, answer)
    for method, path, body in (
        ("PATCH", "/v1/floors/attic", {"level": 2}),
        ("DELETE", "/v1/floors/attic", None),
        ("PATCH", "/v1/rooms/attic", {"floor": "Ground Floor"}),
    ):
        status, answer = await home.request(method, path, admin, body)
        assert (status, answer["error"]["code"]) == (404, "NOT_FOUND"), (path, answer)
    # An unknown floor with new aliases: neither is applied.
    status, answer = await home.request(
        "PATCH", "/v1/rooms/kitchen", admin, {"aliases": ["Küche"], "floor": "Attic"}
    )
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND"), answer
    # Permissions: floors need device:manage:floors; a room, every device of it.
    light = home.ids["node-1-onoff"]
    for token, method, path, body in (
        (home.token("device:read:*"), "POST", "/v1/floors", {"name": "Attic"}),
        (home.token(f"device:manage:{light}"), "PATCH", "/v1/floors/first_floor", {"level": 2}),
        (home.token(f"device:manage:{light}"), "PATCH", "/v1/rooms/kitchen", {"floor": None}),
        (home.token("device:manage:floors"), "DELETE", "/v1/floors/ground_floor", None),
    ):
        status, answer = await home.request(method, path, token, body)
        assert (status, answer["error"]["code"]) == (403, "PERMISSION_DENIED"), (path, answer)
    status, after = await home.request("GET", "/v1/floors", admin)
    assert after == before
    status, rooms = await home.request("GET", "/v1/rooms", admin)
    assert next(r for r in rooms["rooms"] if r["room"] == "Kitchen")["aliases"] == []

    # At most 16 floors: 14 more asked at once all land (no change lost to another), the
    # 17th is refused and the 16 stay, in memory and stored.
    answers = await asyncio.gather(
        *(home.request("POST", "/v1/floors", admin, {"name": f"Level {n}"}) for n in range(14))
    )
    assert [status for status, _ in answers] == [201] * 14, answers
    status, answer = await home.request("POST", "/v1/floors", admin, {"name": "One Too Many"})
    assert (status, answer.get("error", {}).get("code")) == (409, "CONFLICT"), answer
    assert answer["error"]["details"] == {"limit": 16}
    status, listing = await home.request("GET", "/v1/floors", admin)
    assert listing["count"] == 16
    # A floor with no room on it yet is still listed for a token that sees everything.
    assert {f["floor"] for f in listing["floors"][2:]} == {f"Level {n}" for n in range(14)}
    assert home.service.matter is not None
    store = home.service.matter.bridge.floor_store
    assert store is not None
    stored, _ = await store.load()
    assert len(stored.floors) == 16
