"""Aliases and room tools on a real bridge: real python-matter-server, test nodes, HTTP.

The four recorded matter.js devices (on/off, dimmable, colour light, thermostat) are
imported into the real controller as test nodes; names, rooms and aliases are set over
``PATCH /v1/devices/{device}``; room tools are called over ``POST /v1/invoke`` with
signed tokens, so the real pipeline checks every member's permission and the real
controller builds every member's command.
"""

from __future__ import annotations

import asyncio

import pytest

from bridge.cli.main import main
from bridge.matter import DeviceNameStore
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

DUMPS = ("node-1-onoff", "node-2-dimmable", "node-3-color", "node-4-thermostat")

controller, home = home_fixtures("rooms", DUMPS)


async def test_aliases_are_validated_persisted_and_listed(home: Home) -> None:
    light = home.ids["node-1-onoff"]
    manage = home.token("device:manage:*")
    path = f"/v1/devices/{light}"
    for bad in (
        {"aliases": "lamp"},
        {"aliases": [""]},
        {"aliases": ["x" * 65]},
        {"aliases": [7]},
        {"aliases": [f"a{i}" for i in range(17)]},
    ):
        status, body = await home.request("PATCH", path, manage, bad)
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), bad
        assert body["error"]["details"]["field"] == "aliases", bad
    status, body = await home.request(
        "PATCH",
        path,
        manage,
        {"name": "Reading Lamp", "aliases": ["Big Lamp", "big lamp ", "Leselampe"]},
    )
    assert status == 200, body
    assert body["device"]["aliases"] == ["Big Lamp", "Leselampe"]
    # The name changed the tool names; the aliases do not.
    assert body["added_tools"] == [
        "light_reading_lamp_off",
        "light_reading_lamp_on",
        "light_reading_lamp_state",
        "light_reading_lamp_toggle",
    ]
    # Another device may not take a name this one already answers to.
    other = f"/v1/devices/{home.ids['node-2-dimmable']}"
    status, body = await home.request("PATCH", other, manage, {"aliases": ["LESELAMPE"]})
    assert (status, body["error"]["code"]) == (409, "CONFLICT")
    assert body["error"]["details"] == {"alias": "LESELAMPE", "device_id": light}
    status, body = await home.request("PATCH", other, manage, {"aliases": ["reading lamp"]})
    assert (status, body["error"]["code"]) == (409, "CONFLICT")
    # Nothing was half-written: the refused device has no aliases, the first keeps its own.
    stored = await DeviceNameStore(home.service.db).load()
    assert stored[light].aliases == ("Big Lamp", "Leselampe")
    assert (
        stored.get(home.ids["node-2-dimmable"]) is None
        or not stored[home.ids["node-2-dimmable"]].aliases
    )
    status, listing = await home.request("GET", "/v1/devices", home.token("device:read:*"))
    assert status == 200
    (entry,) = [d for d in listing["devices"] if d["id"] == light]
    assert entry["aliases"] == ["Big Lamp", "Leselampe"]
    # A room change keeps the aliases.
    status, body = await home.request("PATCH", path, manage, {"room": "Study"})
    assert (body["device"]["room"], body["device"]["aliases"]) == (
        "Study",
        ["Big Lamp", "Leselampe"],
    )


async def test_cli_alias_add_list_remove(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    light = home.ids["node-2-dimmable"]
    monkeypatch.setenv("ATMOSPHERE_BRIDGE_TOKEN", home.token("device:manage:*", "device:read:*"))
    base = ["devices", "--state-dir", str(home.service.state_dir), "alias", light]
    assert await asyncio.to_thread(main, [*base, "add", "Sofa Light", "Couch Lamp"]) == 0
    out = capsys.readouterr().out
    assert "also called Sofa Light, Couch Lamp" in out
    assert await asyncio.to_thread(main, [*base, "remove", "sofa light"]) == 0
    capsys.readouterr()
    assert await asyncio.to_thread(main, [*base, "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["Couch Lamp"]
    assert await asyncio.to_thread(main, [*base, "remove", "Nope"]) == 1
    assert "error [NOT_FOUND]" in capsys.readouterr().err
    assert await asyncio.to_thread(main, [*base, "add"]) == 1
    assert "error [INVALID_PARAMS]" in capsys.readouterr().err
    # rename without NAME only moves the device.
    args = [
        "devices",
        "--state-dir",
        str(home.service.state_dir),
        "rename",
        light,
        "--room",
        "Lounge",
    ]
    assert await asyncio.to_thread(main, args) == 0
    assert " in Lounge, also called Couch Lamp (live on " in capsys.readouterr().out
    assert home.service.matter is not None
    (device,) = [d for d in home.service.matter.bridge.devices() if d.id == light]
    assert (device.room, device.aliases) == ("Lounge", ("Couch Lamp",))


async def put_in_room(home: Home, room: str, *stems: str) -> None:
    manage = home.token("device:manage:*")
    for stem in stems:
        status, body = await home.request(
            "PATCH", f"/v1/devices/{home.ids[stem]}", manage, {"room": room}
        )
        assert status == 200, body


async def test_room_tools_follow_rooms_and_switch_every_light(home: Home) -> None:
    registry = home.service.registry
    assert [t for t in registry.list(namespace="matter") if "room" in t.definition.metadata] == []
    await put_in_room(
        home, "Living Room", "node-1-onoff", "node-2-dimmable", "node-3-color", "node-4-thermostat"
    )
    rooms = sorted(
        t.definition.name
        for t in registry.list(namespace="matter")
        if "room" in t.definition.metadata
    )
    assert rooms == [
        "room_living_room_lights_brightness",
        "room_living_room_lights_color",
        "room_living_room_lights_off",
        "room_living_room_lights_on",
        "room_living_room_temperature",
    ]
    lights = [home.ids[s] for s in ("node-1-onoff", "node-2-dimmable", "node-3-color")]
    off = registry.resolve("matter:room_living_room_lights_off").definition
    assert off.requires.permissions == tuple(f"device:control:{i}" for i in lights)
    assert off.metadata["room"] == {
        "room": "Living Room",
        "slug": "living_room",
        "kind": "lights",
        "devices": lights,
    }

    all_lights = home.token(*(f"device:control:{i}" for i in lights))
    status, body = await home.invoke("matter:room_living_room_lights_off", {}, all_lights)
    assert status == 200, body
    result = body["result"]
    assert (
        result["ok"],
        result["room"],
        result["action"],
        result["succeeded"],
        result["failed"],
    ) == (True, "Living Room", "off", 3, 0)
    assert [d["device_id"] for d in result["devices"]] == lights
    assert [d["result"]["sent"][0]["command"] for d in result["devices"]] == ["Off"] * 3

    # Brightness: dimmable lights get their own level; the on/off light is switched.
    status, body = await home.invoke(
        "matter:room_living_room_lights_brightness", {"percent": 30}, all_lights
    )
    assert status == 200, body
    by_id = {d["device_id"]: d for d in body["result"]["devices"]}
    onoff = by_id[lights[0]]
    assert (onoff["ok"], onoff["note"], onoff["result"]["sent"][0]["command"]) == (
        True,
        "no brightness control: switched on",
        "On",
    )
    for dev in lights[1:]:
        sent = by_id[dev]["result"]["sent"][0]
        assert (sent["command"], sent["payload"]["level"]) == ("MoveToLevelWithOnOff", 77)

    # Colour reaches only the colour light; the others are listed as skipped.
    status, body = await home.invoke(
        "matter:room_living_room_lights_color", {"color": "orange"}, all_lights
    )
    assert status == 200, body
    by_id = {d["device_id"]: d for d in body["result"]["devices"]}
    assert [by_id[i].get("skipped", False) for i in lights] == [True, True, False]
    assert by_id[lights[2]]["result"]["sent"][0]["cluster"] == "ColorControl"

    # The thermostat room tool sets the setpoint in 0.01 °C.
    thermostat = home.ids["node-4-thermostat"]
    status, body = await home.invoke(
        "matter:room_living_room_temperature",
        {"celsius": 21.5},
        home.token(f"device:control:{thermostat}"),
    )
    assert status == 200, body
    (entry,) = body["result"]["devices"]
    assert entry["result"]["sent"][0]["value"] == 2150


async def test_room_tool_needs_every_members_permission(home: Home) -> None:
    await put_in_room(home, "Kitchen", "node-1-onoff", "node-2-dimmable")
    one = home.token(f"device:control:{home.ids['node-1-onoff']}")
    status, body = await home.invoke("matter:room_kitchen_lights_on", {}, one)
    # Out of this token's sight, so answered as an unknown tool: the other member's id
    # (a device it may not see) is not named.
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    assert home.ids["node-2-dimmable"] not in str(body)
    status, body = await home.invoke(
        "matter:room_kitchen_lights_brightness", {"percent": 120}, home.token("device:control:*")
    )
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")


async def test_room_tool_follows_a_rename_and_move_in_one_change(home: Home) -> None:
    # Name and room in one PATCH: the room tool must call the light's new tools.
    manage = home.token("device:manage:*")
    status, body = await home.request(
        "PATCH", f"/v1/devices/{home.ids['node-3-color']}", manage, {"name": "Strip", "room": "Den"}
    )
    assert status == 200, body
    status, body = await home.invoke(
        "matter:room_den_lights_on", {}, home.token("device:control:*")
    )
    assert status == 200, body
    (entry,) = body["result"]["devices"]
    assert (entry["ok"], entry["tool"]) == (True, "matter:light_strip_on@1.0.0")


async def test_room_tools_move_with_their_devices(home: Home) -> None:
    registry = home.service.registry
    await put_in_room(home, "Hall", "node-1-onoff", "node-2-dimmable")
    hall = registry.resolve("matter:room_hall_lights_on").definition
    assert len(hall.requires.permissions) == 2
    await put_in_room(home, "Office", "node-2-dimmable")
    hall = registry.resolve("matter:room_hall_lights_on").definition
    assert hall.requires.permissions == (f"device:control:{home.ids['node-1-onoff']}",)
    assert registry.resolve("matter:room_office_lights_on") is not None
    manage = home.token("device:manage:*")
    status, _ = await home.request(
        "PATCH", f"/v1/devices/{home.ids['node-1-onoff']}", manage, {"room": ""}
    )
    assert status == 200
    names = {t.definition.name for t in registry.list(namespace="matter")}
    assert "room_hall_lights_on" not in names
    assert "room_office_lights_on" in names
