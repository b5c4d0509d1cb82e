"""Names spoken commands hear change live: device aliases and room aliases."""

from __future__ import annotations

import asyncio

import pytest

from bridge.cli.main import main
from bridge.matter import slugify
from tests.support.home import Home
from tests.voice.sentence_set import ROOM_ALIASES

pytestmark = pytest.mark.controller


async def test_an_alias_added_alone_is_heard_at_once(home: Home) -> None:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*"))
    reply = await engine.handle("turn on the big lamp", "en", token=token)
    assert (reply.handled, reply.calls) == (False, ())
    # Only the aliases change: no new name, no new room, so no tool is renamed.
    await home.patch_device("node-3-color", {"aliases": ["big lamp"]})
    reply = await engine.handle("turn on the big lamp", "en", token=token)
    assert reply.handled, reply.speech
    assert [c["tool"] for c in reply.calls] == ["matter:light_sofa_lamp_on"]
    # Listing follows permission: a token sees the tools it may call.
    status, tool = await home.request(
        "GET", "/v1/tools/matter:light_sofa_lamp_on", home.token("device:control:*")
    )
    assert status == 200, tool
    assert tool["tool"]["metadata"]["aliases"] == ["big lamp"], tool
    # Tool search (BM25 over metadata.aliases among others) finds the device by its alias.
    status, found = await home.request(
        "GET", "/v1/tools?q=big%20lamp&limit=3", home.token("device:control:*")
    )
    assert status == 200, found
    assert found["tools"][0]["identity"].startswith("matter:light_sofa_lamp_"), found


async def test_room_aliases_are_set_checked_persisted_and_heard(home: Home) -> None:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    assert home.service.matter is not None
    verify = home.service.invocation.verifier.verify
    control = verify(home.token("device:control:*"))
    manage, reader = home.token("device:manage:*"), home.token("device:read:*")
    # The room is called "Kitchen": its kind's everyday words are heard without an alias
    # ("Küche", bridge.voice.room_words), a word of no kind only once it is an alias.
    reply = await engine.handle("schalte das Licht in der Küche aus", "de", token=control)
    assert [c["tool"] for c in reply.calls] == ["matter:room_kitchen_lights_off"], reply.speech
    sentence = "schalte das Licht in der Kombüse aus"
    reply = await engine.handle(sentence, "de", token=control)
    assert (reply.handled, reply.calls) == (False, ())

    status, body = await home.request("GET", "/v1/rooms", reader)
    assert status == 200, body
    kitchen = next(r for r in body["rooms"] if r["room"] == "Kitchen")
    assert (kitchen["slug"], kitchen["aliases"]) == ("kitchen", [])
    assert {d["id"] for d in kitchen["devices"]} == {
        home.ids["node-1-onoff"],
        home.ids["node-2-dimmable"],
        home.ids["eve_contact_sensor"],
    }
    assert "room_kitchen_lights_off" in kitchen["tools"]

    status, room = await home.request(
        "PATCH",
        "/v1/rooms/kitchen",
        manage,
        {"aliases": ["Kombüse", "cuisine", "kombüse", "keuken"]},
    )
    assert status == 200, room
    assert room["aliases"] == ["Kombüse", "cuisine", "keuken"]  # duplicates dropped
    reply = await engine.handle(sentence, "de", token=control)
    assert reply.handled, reply.speech
    assert [c["tool"] for c in reply.calls] == ["matter:room_kitchen_lights_off"]
    reply = await engine.handle("allume les lumières de la cuisine", "fr", token=control)
    assert [c["tool"] for c in reply.calls] == ["matter:room_kitchen_lights_on"], reply.speech
    # The room tools carry the aliases: tool search and agents find them too.
    status, tool = await home.request(
        "GET", "/v1/tools/matter:room_kitchen_lights_off", home.token("device:control:*")
    )
    assert tool["tool"]["metadata"]["aliases"] == ["Kombüse", "cuisine", "keuken"]
    assert "also called Kombüse, cuisine, keuken" in tool["tool"]["description"]
    bridge = home.service.matter.bridge
    assert bridge.names is not None
    furnished = {slugify(room): tuple(aliases) for room, aliases in ROOM_ALIASES.items()}
    living = furnished["living_room"]  # set by the furnished home
    assert await bridge.names.load_room_aliases() == {
        "kitchen": ("Kombüse", "cuisine", "keuken"),
        **furnished,
    }

    # Refused, and nothing changes: another room's name or alias, bad bodies, no such
    # room, a token that may not manage every device of the room.
    for ref, aliases in (("Hall", ["Kitchen"]), ("hall", ["KOMBÜSE"])):
        status, answer = await home.request(
            "PATCH", f"/v1/rooms/{ref}", manage, {"aliases": aliases}
        )
        assert (status, answer["error"]["code"]) == (409, "CONFLICT"), answer
        assert answer["error"]["details"]["room"] == "Kitchen"
    for bad in (
        {},
        {"aliases": "Küche"},
        {"aliases": [""]},
        {"aliases": [7]},
        {"aliases": [f"r{i}" for i in range(17)]},
        {"aliases": [], "name": "x"},
    ):
        status, answer = await home.request("PATCH", "/v1/rooms/Kombüse", manage, bad)
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS"), bad
    status, answer = await home.request("PATCH", "/v1/rooms/attic", manage, {"aliases": []})
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND")
    assert "Kitchen" not in answer["error"]["message"]  # this token may not list rooms
    status, answer = await home.request(
        "PATCH", "/v1/rooms/attic", home.token("device:manage:*", "device:read:*"), {"aliases": []}
    )
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND")
    assert "Kitchen" in answer["error"]["message"]
    one = home.token(f"device:manage:{home.ids['node-1-onoff']}")
    for token in (one, reader):
        status, answer = await home.request("PATCH", "/v1/rooms/kitchen", token, {"aliases": []})
        assert (status, answer["error"]["code"]) == (403, "PERMISSION_DENIED"), answer
    status, body = await home.request("GET", "/v1/rooms", reader)
    assert {r["room"]: r["aliases"] for r in body["rooms"]} == {
        "Bathroom": list(furnished["bathroom"]),
        "Hall": list(furnished["hall"]),
        "Kitchen": ["Kombüse", "cuisine", "keuken"],
        "Living Room": list(living),
        "Salon": [],
        "Schlafzimmer": [],
        "Slaapkamer": [],
        "Terraza": [],
    }

    # The room is found by its alias, and an empty list removes the aliases.
    status, room = await home.request("PATCH", "/v1/rooms/cuisine", manage, {"aliases": []})
    assert (status, room["room"], room["aliases"]) == (200, "Kitchen", [])
    reply = await engine.handle(sentence, "de", token=control)
    assert (reply.handled, reply.calls) == (False, ())
    assert await bridge.names.load_room_aliases() == furnished


async def test_rooms_cli_lists_and_edits_aliases(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATMOSPHERE_BRIDGE_TOKEN", home.token("device:manage:*", "device:read:*"))
    alias = ["rooms", "alias", "Slaapkamer"]

    async def run(*args: str) -> int:
        return await asyncio.to_thread(main, [*args, "--url", home.url])

    assert await run(*alias, "add", "bedroom", "upstairs") == 0
    assert capsys.readouterr().out.startswith(
        "room Slaapkamer (slaapkamer): bedroom, upstairs (live on "
    )
    assert await run(*alias, "remove", "UPSTAIRS") == 0
    capsys.readouterr()
    assert await run("rooms", "alias", "BEDROOM", "list") == 0  # found by its alias
    assert capsys.readouterr().out == "bedroom\n"
    assert await run("rooms", "list") == 0
    out = capsys.readouterr().out.splitlines()
    assert "Slaapkamer (slaapkamer): Bedroom Thermostat; also called bedroom" in out
    assert "  room_slaapkamer_temperature" in out
    for bad, code in (
        ((*alias, "remove", "Nope"), "NOT_FOUND"),
        (("rooms", "alias", "attic", "list"), "NOT_FOUND"),
        ((*alias, "add"), "INVALID_PARAMS"),
        (("rooms", "alias", "Salon", "add", "bedroom"), "CONFLICT"),
    ):
        assert await run(*bad) == 1, bad
        assert f"error [{code}]" in capsys.readouterr().err, bad
    assert home.service.matter is not None
    (room,) = [r for r in home.service.matter.bridge.rooms() if r.slug == "slaapkamer"]
    assert room.aliases == ("bedroom",)


async def test_answers_name_only_what_the_token_may_see(home: Home) -> None:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    verify = home.service.invocation.verifier.verify
    everything = verify(home.token("device:control:*", "device:read:*"))
    kitchen = verify(home.token(f"device:control:{home.ids['node-1-onoff']}"))
    one_lamp = verify(home.token(f"device:read:{home.ids['mock_dimmable_light']}"))
    reply = await engine.handle("please the sofa lamb", "en", token=everything)
    assert "Sofa Lamp" in reply.suggestions, reply
    reply = await engine.handle("please the sofa lamb", "en", token=kitchen)
    assert (reply.handled, reply.calls, reply.suggestions) == (False, (), ())
    assert reply.speech == "Sorry, I didn't understand that."
    # Two devices are called "Reading Lamp": a token sees only the one it may use.
    reply = await engine.handle("turn on the reading lamp", "en", token=everything)
    assert reply.suggestions == ("Reading Lamp (Schlafzimmer)", "Reading Lamp (Salon)")
    # The only Reading Lamp this token sees is the one meant; it may read, not switch it.
    reply = await engine.handle("turn on the reading lamp", "en", token=one_lamp)
    assert (reply.handled, reply.suggestions) == (False, ())
    assert reply.speech == "Sorry, you are not allowed to do that with Reading Lamp."
    reply = await engine.handle("turn on the reading lamp", "en", token=kitchen)
    assert (reply.handled, reply.calls, reply.suggestions) == (False, (), ())
    assert reply.speech == "Sorry, I didn't understand that."


async def test_the_speakers_room_picks_a_shared_name_among_what_the_token_may_see(
    home: Home,
) -> None:
    """Said in the salon, "the reading lamp" is the salon's; never one the token can't see."""
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    verify = home.service.invocation.verifier.verify
    everything = verify(home.token("device:control:*", "device:read:*"))
    bedroom_lamp = home.ids["mock_dimmable_light"]  # Reading Lamp (Schlafzimmer)
    salon_lamp = home.ids["color_temperature_light"]  # Reading Lamp (Salon)
    reply = await engine.handle("turn on the reading lamp", "en", token=everything, area="Salon")
    assert [c["tool"] for c in reply.calls] == ["matter:light_reading_lamp_2_on"], reply
    reply = await engine.handle(
        "turn off the reading lamp", "en", token=everything, area="Schlafzimmer"
    )
    assert [c["tool"] for c in reply.calls] == ["matter:light_reading_lamp_off"], reply
    # said in a room with neither: which one, as before
    reply = await engine.handle("turn on the reading lamp", "en", token=everything, area="Hall")
    assert reply.calls == ()
    assert reply.suggestions == ("Reading Lamp (Schlafzimmer)", "Reading Lamp (Salon)")
    # a token that may use only the bedroom's lamp, said in the salon: the salon's lamp is
    # no lamp to it, so the one it sees is meant and the salon's is never touched
    only_bedroom = verify(home.token(f"device:control:{bedroom_lamp}"))
    reply = await engine.handle("turn on the reading lamp", "en", token=only_bedroom, area="Salon")
    assert [c["tool"] for c in reply.calls] == ["matter:light_reading_lamp_on"], reply
    # one that may read every lamp but switch only the bedroom's sees both: the salon's
    # is meant, and refused (nothing is switched)
    reads_all = verify(home.token(f"device:control:{bedroom_lamp}", "device:read:*"))
    reply = await engine.handle("turn on the reading lamp", "en", token=reads_all, area="Salon")
    assert reply.handled is False
    assert reply.speech == "Sorry, you are not allowed to do that with Reading Lamp."
    only_salon = verify(home.token(f"device:control:{salon_lamp}", f"device:read:{salon_lamp}"))
    reply = await engine.handle(
        "turn off the reading lamp", "en", token=only_salon, area="Schlafzimmer"
    )
    assert [c["tool"] for c in reply.calls] == ["matter:light_reading_lamp_2_off"], reply
