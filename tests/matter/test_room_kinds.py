"""Room tools of issue 29's kinds, planned from recorded devices: fans, coverings, valves.

A recorded fan (Home Assistant's mock: FanControl only, no OnOff), a shutter (the mock
full window covering, Type 6), a tilt blind (WAGO's, Type 8) and a water valve are put
in one room;
the room gets ``fans_on/off/speed`` and ``covers_open/close/position`` tools whose plans
call each member's own tool with the values the Matter specification calls for. A
garage door (ClosureControl) in the same room gets no room tool. The fabric module
(tests/matter/test_room_events_fabric.py) runs the same tools against matter.js devices.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bridge.matter.home.devices import build_devices
from bridge.matter.spec.models import NodeData
from bridge.matter.tools.generator import MatterToolGenerator, ToolKind, find_tool
from tests.matter.dumps import load_dump
from tests.matter.test_generator import MAPS

DUMPS = (
    "ha-core/mock_fan",
    "ha-core/mock_window_covering_full",
    "ha-core/wago_home_blind_control",
    "ha-core/mock_closure_garage_door",
    "ha-core/mock_valve",
)


def _home() -> tuple[list[Any], list[Any]]:
    devices = build_devices([NodeData.from_json(load_dump(name)) for name in DUMPS])
    moved = [dataclasses.replace(d, room="Lounge") for d in devices]
    return moved, MatterToolGenerator(MAPS).generate(moved)


def _calls(tool: Any, params: dict[str, Any]) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(c.member.name, c.identity, dict(c.params)) for c in tool.room.calls(params)]


def test_a_room_gets_fan_and_cover_tools_and_none_for_its_garage_door() -> None:
    _devices, tools = _home()
    rooms = sorted(t.definition.name for t in tools if t.kind is ToolKind.ROOM)
    assert rooms == [
        "room_lounge_covers_close",
        "room_lounge_covers_open",
        "room_lounge_covers_position",
        "room_lounge_fans_off",
        "room_lounge_fans_on",
        "room_lounge_fans_speed",
        "room_lounge_valves_close",
        "room_lounge_valves_open",
    ]
    # A question for the room's plain "on" (the lights') never finds its fans.
    assert find_tool(tools, "on", room="lounge") is None
    assert find_tool(tools, "fans_on", room="lounge") is not None


def test_fan_room_tools_plan_each_fans_own_tool() -> None:
    devices, tools = _home()
    (fan,) = [d for d in devices if d.kind == "fan"]
    on = find_tool(tools, "fans_on", room="lounge")
    off = find_tool(tools, "fans_off", room="lounge")
    speed = find_tool(tools, "fans_speed", room="lounge")
    assert on is not None
    assert off is not None
    assert speed is not None
    # The mock fan has no OnOff: on is FanMode High (in every FanModeSequence), off is Off.
    assert _calls(on, {}) == [(fan.name, f"matter:{fan.slug}_set_fan_mode@1.0.0", {"mode": "high"})]
    assert _calls(off, {}) == [(fan.name, f"matter:{fan.slug}_set_fan_mode@1.0.0", {"mode": "off"})]
    assert _calls(speed, {"percent": 40}) == [
        (fan.name, f"matter:{fan.slug}_set_fan_speed@1.0.0", {"percent": 40})
    ]
    assert speed.definition.parameters["properties"]["percent"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 100,
        "description": "Fan speed in percent (0-100).",
    }
    # Permission: controlling every member, as a room of lights.
    assert speed.definition.requires.permissions == (f"device:control:{fan.id}",)


def test_cover_room_tools_choose_by_covering_type() -> None:
    devices, tools = _home()
    covers = {d.slug: d for d in devices if d.kind == "blind"}
    shutter = covers["blind_mock_full_window_covering"]
    blind = covers["home_blind_wi_fi"]
    close = find_tool(tools, "covers_close", room="lounge")
    position = find_tool(tools, "covers_position", room="lounge")
    assert close is not None
    assert position is not None
    # WindowCovering Type 6 = Shutter, 8 = TiltBlindLiftAndTilt (spec 5.3.5.2).
    assert close.definition.parameters["properties"]["covering_type"]["enum"] == [
        "shutter",
        "tilt_blind",
    ]
    assert _calls(close, {}) == [
        (shutter.name, f"matter:{shutter.slug}_close@1.0.0", {}),
        (blind.name, f"matter:{blind.slug}_close@1.0.0", {}),
    ]
    assert _calls(close, {"covering_type": "shutter"}) == [
        (shutter.name, f"matter:{shutter.slug}_close@1.0.0", {}),
        (blind.name, None, {}),
    ]
    (skipped,) = [c for c in close.room.calls({"covering_type": "shutter"}) if c.identity is None]
    assert skipped.note == "not a shutter: left as it is"
    assert _calls(position, {"percent_open": 30}) == [
        (shutter.name, f"matter:{shutter.slug}_set_position@1.0.0", {"percent_open": 30.0}),
        (blind.name, f"matter:{blind.slug}_set_position@1.0.0", {"percent_open": 30.0}),
    ]
    assert set(position.definition.requires.permissions) == {
        f"device:control:{shutter.id}",
        f"device:control:{blind.id}",
    }


def test_valve_room_tools_open_and_close_every_valve() -> None:
    devices, tools = _home()
    (valve,) = [d for d in devices if d.kind == "valve"]
    close = find_tool(tools, "valves_close", room="lounge")
    assert close is not None
    assert _calls(close, {}) == [(valve.name, f"matter:{valve.slug}_close@1.0.0", {})]
    assert close.definition.requires.permissions == (f"device:control:{valve.id}",)
