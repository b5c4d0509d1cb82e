"""Spoken commands about several devices at once, on a real controller.

Two door locks (Home Assistant's mock lock and a recorded Aqara U200) and two blinds
(the mock window covering and a recorded WAGO blind control), imported as test nodes
into the real python-matter-server. "Lock all the doors" locks each lock the caller may
see and names them all; "unlock all the doors" asks a person for each unlock and never
says they are unlocked; "lock the door" with the speaker's room unknown asks which room
when the locks are in two rooms, and takes the home's only lock when there is one; the
blinds of one room are named together ("A and B"), never "A or B".
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

LOCK, LOCK2, BLIND, BLIND2 = (
    "mock_door_lock",
    "aqara_u200",
    "mock_window_covering_full",
    "wago_home_blind_control",
)
controller, home = home_fixtures("voice_many", (LOCK, LOCK2, BLIND, BLIND2))
FURNISHED = {
    LOCK: ("Front Door", "Hall"),
    LOCK2: ("Back Door", "Kitchen"),
    BLIND: ("Left Blind", "Living Room"),
    BLIND2: ("Right Blind", "Living Room"),
}


async def furnish(home: Home, skip: tuple[str, ...] = ()) -> None:
    for stem, (name, room) in FURNISHED.items():
        if stem not in skip:
            await home.patch_device(stem, {"name": name, "room": room})


async def say(home: Home, text: str, lang: str = "en", area: str | None = None) -> Any:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*"))
    return await engine.handle(text, lang, token=token, area=area)


def device_of(home: Home, call: dict[str, Any]) -> str:
    """Return the dump stem of the device a call's tool belongs to (its name's slug)."""
    assert home.service.matter is not None
    name = str(call["tool"]).removeprefix("matter:")
    devices = [d for d in home.service.matter.bridge.devices() if name.startswith(f"{d.slug}_")]
    device = max(devices, key=lambda d: len(d.slug))
    return next(stem for stem, i in home.ids.items() if i == device.id)


async def test_every_lock_at_once_each_named_in_its_language(home: Home) -> None:
    await furnish(home)
    reply = await say(home, "lock all the doors")
    assert sorted(device_of(home, c) for c in reply.calls) == sorted([LOCK, LOCK2])
    assert all(c["ok"] for c in reply.calls)
    assert "Front Door" in reply.speech
    assert "Back Door" in reply.speech
    assert reply.speech.endswith("are locked.")
    german = await say(home, "schließ alle Türen ab", "de")
    assert sorted(device_of(home, c) for c in german.calls) == sorted([LOCK, LOCK2])
    assert german.speech.endswith("sind abgeschlossen.")
    dutch = await say(home, "vergrendel alle deuren", "nl")
    assert dutch.speech.endswith("zijn op slot.")


async def test_unlocking_every_door_asks_a_person_and_never_says_it_is_done(home: Home) -> None:
    await furnish(home)
    reply = await say(home, "unlock all the doors")
    assert sorted(device_of(home, c) for c in reply.calls) == sorted([LOCK, LOCK2])
    assert all(c.get("pending") == "approval" for c in reply.calls)
    assert "approval" in reply.speech
    assert "Front Door" in reply.speech
    assert "Back Door" in reply.speech
    assert "not locked" not in reply.speech
    assert "Unlocked" not in reply.speech


async def test_the_door_is_the_speakers_room_one_or_the_homes_only_one(home: Home) -> None:
    await furnish(home)
    # two locks in two rooms, the speaker's room unknown: which room, nothing done
    unknown = await say(home, "lock the door")
    assert list(unknown.calls) == []
    assert "which room" in unknown.speech
    kitchen = await say(home, "lock the door", area="Kitchen")
    assert [device_of(home, c) for c in kitchen.calls] == [LOCK2]
    # the Aqara lock out of the home's rooms: the Front Door is then the only lock in a
    # room, but one in no room makes "the door" ambiguous still
    await home.patch_device(LOCK2, {"room": None})
    still = await say(home, "lock the door")
    assert list(still.calls) == []


async def test_the_homes_only_lock_is_the_door(home: Home) -> None:
    await furnish(home, skip=(LOCK2,))
    assert home.service.matter is not None
    # the second lock's tools are out of the caller's sight: a token for the first only
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    front = home.ids[LOCK]
    token = home.service.invocation.verifier.verify(home.token(f"device:control:{front}"))
    reply = await engine.handle("lock the door", "en", token=token, area=None)
    assert [device_of(home, c) for c in reply.calls] == [LOCK]
    assert reply.speech == "Locked Front Door."
    french = await engine.handle("verrouille la porte", "fr", token=token, area=None)
    assert [device_of(home, c) for c in french.calls] == [LOCK]


async def test_the_blinds_of_a_room_are_named_together(home: Home) -> None:
    await furnish(home)
    status, answer = await home.request(
        "PATCH", "/v1/rooms/Living Room", home.token("device:manage:*"), {"aliases": ["Wohnzimmer"]}
    )
    assert status == 200, answer
    reply = await say(home, "close the blinds in the living room")
    assert sorted(device_of(home, c) for c in reply.calls) == sorted([BLIND, BLIND2])
    assert reply.speech == "Left Blind and Right Blind are closed."
    stop = await say(home, "stop the blinds in the living room")
    assert sorted(device_of(home, c) for c in stop.calls) == sorted([BLIND, BLIND2])
    assert stop.speech == "Stopped Left Blind and Right Blind."
    german = await say(home, "stelle die Jalousien im Wohnzimmer auf 40 Prozent", "de")
    assert sorted(device_of(home, c) for c in german.calls) == sorted([BLIND, BLIND2])
    assert german.speech == "Left Blind und Right Blind sind zu 40 Prozent geöffnet."
