"""Every generated tool invoked through MatterToolSync against the real python-matter-server.

All recorded dumps are loaded with ``import_test_node`` into a controller that runs in
the fabric's private network namespace; the server builds each command from the SDK's
own classes, so a wrong command name or payload type fails there. Test nodes never change
state (real devices come with the fabric tests), so state tools read recorded values.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.errors import DeviceUnavailableError, InvalidParamsError
from bridge.matter.tools.generator import ToolKind, cached_values
from bridge.tools.context import CallContext
from bridge.tools.validation import validate_call
from tests.matter.dumps import DUMP_FILES
from tests.matter.test_generator import EXAMPLES
from tests.matter.test_generator import example as generator_example
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import connected_sync, import_node, import_test_nodes

pytestmark = pytest.mark.controller


@pytest.fixture(scope="module")
def test_node_controller(fabric: Fabric) -> Iterator[ThreadedController]:
    """A controller of its own, so the imported test nodes stay out of other tests."""
    with running_controller(fabric, "generator") as ctl:
        yield ctl


def _command(cluster: str, command: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "command",
        "endpoint_id": 1,
        "cluster": cluster,
        "command": command,
        "payload": payload,
    }


_LEVEL_77 = {"level": 77, "transitionTime": None, "optionsMask": 0, "optionsOverride": 0}
# What the matter.js dumps' tools must send for the EXAMPLES parameters, written out from
# the Matter specification (node ids left out: the controller assigns them on import):
# 30 % is level 77 of 1-254; orange is hue 27 of 0-254 (38 degrees), full saturation 254;
# 2700 K is 370 mireds; 21.5 degrees C is 2150 (0.01 degree units); SystemMode heat is 4;
# SetpointRaiseLower takes tenths of a degree (15) and mode 2 (both setpoints).
SENT = {
    "light_test_onoff_on": [_command("OnOff", "On", {})],
    "light_test_onoff_toggle": [_command("OnOff", "Toggle", {})],
    "light_test_dimmable_off": [_command("OnOff", "Off", {})],
    "light_test_dimmable_brightness": [_command("LevelControl", "MoveToLevelWithOnOff", _LEVEL_77)],
    "light_test_color_set_color": [
        _command(
            "ColorControl",
            "MoveToHueAndSaturation",
            {
                "hue": 27,
                "saturation": 254,
                "transitionTime": 0,
                "optionsMask": 0,
                "optionsOverride": 0,
            },
        )
    ],
    "light_test_color_color_temperature": [
        _command(
            "ColorControl",
            "MoveToColorTemperature",
            {
                "colorTemperatureMireds": 370,
                "transitionTime": 0,
                "optionsMask": 0,
                "optionsOverride": 0,
            },
        )
    ],
    "test_thermostat_set_temperature": [
        {
            "kind": "write",
            "endpoint_id": 1,
            "cluster": "Thermostat",
            "attribute": "OccupiedHeatingSetpoint",
            "value": 2150,
        }
    ],
    "test_thermostat_set_mode": [
        {
            "kind": "write",
            "endpoint_id": 1,
            "cluster": "Thermostat",
            "attribute": "SystemMode",
            "value": 4,
        }
    ],
    "test_thermostat_adjust_temperature": [
        _command("Thermostat", "SetpointRaiseLower", {"mode": 2, "amount": 15})
    ],
}
# The states of the matter.js dumps' recorded values (attributes 1/6/0, 1/8/0, 1/768/*,
# 1/513/*), converted by hand: level 77 is 30 %; ColorMode 2 is colour temperature;
# 300 mireds is 3333 K; hue 120 of 254 is 170 degrees; saturation 200 of 254 is 79 %;
# x 24939 and y 24701 of 65536 are 0.3805 and 0.3769; 2100/2250/2600 are 21.0/22.5/26.0 C.
STATES = {
    "light_test_onoff_state": {"on": False},
    "light_test_dimmable_state": {"brightness_percent": 30, "on": True},
    "light_test_color_state": {
        "color_mode": "color_temperature",
        "color": {"hue": 170, "saturation": 79},
        "color_xy": {"x": 0.3805, "y": 0.3769},
        "color_temperature_kelvin": 3333,
        "brightness_percent": 30,
        "on": True,
    },
    "test_thermostat_state": {
        "temperature": 21.0,
        "heating_setpoint": 22.5,
        "cooling_setpoint": 26.0,
        "mode": "heat",
    },
}


def _without_node(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in action.items() if k != "node_id"} for action in actions]


def example_params(tool: Any) -> dict[str, Any]:
    name = tool.definition.name
    if tool.kind is ToolKind.GENERIC:
        return {}
    if name.endswith("_set_mode") and "mode" in tool.definition.parameters["properties"]:
        return {"mode": tool.definition.parameters["properties"]["mode"]["enum"][1]}
    params = copy.deepcopy(next((v for k, v in EXAMPLES.items() if name.endswith(k)), {}))
    try:
        validate_call(tool.definition, copy.deepcopy(params))
    except InvalidParamsError:
        # Issue 29's kinds: the device's own modes, rooms and limits (test_generator's).
        return generator_example(tool)
    return params


async def test_every_tool_through_the_real_controller(
    test_node_controller: ThreadedController,
) -> None:
    dumps = [json.loads(p.read_text()) for p in DUMP_FILES]
    async with connected_sync(test_node_controller) as (adapter, registry, _events, bridge):
        await import_test_nodes(adapter, dumps)
        # node_added events arrive for each import; wait until all devices are there.
        for _ in range(100):
            if len({d.node_id for d in bridge.devices()}) >= len(dumps) - 1:
                break
            await asyncio.sleep(0.1)
        node_ids = sorted({n.node_id for n in adapter.nodes()})
        assert len(node_ids) == len(dumps)
        assert node_ids[0] >= 900000
        tools = [bridge.tool(i.definition.identity) for i in registry.list(namespace="matter")]
        action_tools = [t for t in tools if t.kind is ToolKind.ACTION]
        assert len(action_tools) >= 60
        # Test nodes keep their recorded values whatever is written to them.
        recorded = {d.id: cached_values(d) for d in bridge.devices()}
        invoked = 0
        checked_sent: set[str] = set()
        checked_states: set[str] = set()
        for listed in action_tools:
            # An earlier write may have regenerated the tool (the bridge caches written values).
            tool = bridge.tool(listed.definition.identity)
            entry = registry.get(tool.definition.identity)
            assert entry is not None
            assert entry.handler is not None
            params = validate_call(tool.definition, example_params(tool))
            # The handler sends exactly its tool's plan (and, for the named tools, what
            # the specification says, written out in SENT).
            expected = [a.to_json() for a in tool.plan(params)]
            result = await entry.handler(params, CallContext())
            assert result["sent"] == expected, tool.definition.name
            assert result["results"] == [None] * len(expected), tool.definition.name
            if tool.definition.name in SENT:
                assert _without_node(result["sent"]) == SENT[tool.definition.name]
                checked_sent.add(tool.definition.name)
            invoked += 1
        assert invoked == len(action_tools)
        # State tools read the recorded values back through the controller.
        state_tools = [t for t in tools if t.kind is ToolKind.STATE]
        for tool in state_tools:
            entry = registry.get(tool.definition.identity)
            assert entry is not None
            assert entry.handler is not None
            state = await entry.handler({}, CallContext())
            assert tool.device_id is not None
            assert state == tool.state_from(recorded[tool.device_id]), tool.definition.name
            if tool.definition.name in STATES:
                assert state == STATES[tool.definition.name], tool.definition.name
                checked_states.add(tool.definition.name)
        assert (checked_sent, checked_states) == (set(SENT), set(STATES))
        # The generic tool: the server rejects what chip.clusters does not have.
        generic = registry.get("matter:control_matter_device@1.0.0")
        assert generic is not None
        assert generic.handler is not None
        light = next(d for d in bridge.devices() if d.slug == "light_test_onoff")
        ok = await generic.handler(
            {
                "device_id": light.id,
                "cluster": "Identify",
                "command": "Identify",
                "payload": {"identifyTime": 3},
            },
            CallContext(),
        )
        assert ok["sent"][0]["payload"] == {"identifyTime": 3}
        with pytest.raises(InvalidParamsError):
            await generic.handler(
                {"device_id": light.id, "cluster": "OnOff", "command": "Onn", "payload": {}},
                CallContext(),
            )
        # An unavailable device fails fast; its tools stay listed as unavailable.
        node = adapter.node(light.node_id)
        assert node is not None
        node.available = False
        bridge.apply_node(node)
        on = registry.get(f"matter:{light.slug}_on@1.0.0")
        assert on is not None
        assert on.available is False
        assert on.handler is not None
        with pytest.raises(DeviceUnavailableError):
            await on.handler({}, CallContext())
    assert registry.list(namespace="matter") == []


async def test_a_written_mode_steers_the_next_setpoint_at_once(
    test_node_controller: ThreadedController,
) -> None:
    # A test node never reports attribute changes: only the bridge's own cache of the
    # accepted SystemMode write can make set_temperature choose the cooling setpoint.
    dump = next(json.loads(p.read_text()) for p in DUMP_FILES if p.stem == "node-4-thermostat")
    async with connected_sync(test_node_controller) as (adapter, _registry, _events, bridge):
        node_id = await import_node(adapter, dump)
        device = next(d for d in bridge.devices() if d.node_id == node_id)
        prefix = f"matter:{device.slug}"
        mode = await bridge.call(f"{prefix}_set_mode@1.0.0", {"mode": "cool"})
        assert mode["sent"] == [
            {
                "kind": "write",
                "node_id": node_id,
                "endpoint_id": 1,
                "cluster": "Thermostat",
                "attribute": "SystemMode",
                "value": 3,
            },
        ]
        node = adapter.node(node_id)
        assert node is not None
        assert node.attributes["1/513/28"] == 3
        result = await bridge.call(f"{prefix}_set_temperature@1.0.0", {"celsius": 24})
        assert result["sent"] == [
            {
                "kind": "write",
                "node_id": node_id,
                "endpoint_id": 1,
                "cluster": "Thermostat",
                "attribute": "OccupiedCoolingSetpoint",
                "value": 2400,
            },
        ]
        assert node.attributes["1/513/17"] == 2400
        assert node.attributes["1/513/18"] == 2250


async def test_each_wire_command_is_built_once(
    test_node_controller: ThreadedController, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The generic tool checks its payload by building the controller's command; the
    # adapter must send that one instead of building it again (and a map row's command,
    # which nobody built before, is built by the adapter once).
    import bridge.matter.controller.adapter as adapter_module
    import bridge.matter.tools.generator as generator_module
    from bridge.matter.spec.commands import build_command

    built: list[tuple[str, str]] = []

    def counting(cluster: str, command: str, payload: Any) -> Any:
        built.append((cluster, command))
        return build_command(cluster, command, payload)

    monkeypatch.setattr(generator_module, "build_command", counting)
    monkeypatch.setattr(adapter_module, "build_command", counting)
    dump = next(json.loads(p.read_text()) for p in DUMP_FILES if p.stem == "node-1-onoff")
    async with connected_sync(test_node_controller) as (adapter, registry, _events, bridge):
        known = {n.node_id for n in adapter.nodes()}
        await import_test_nodes(adapter, [dump])
        for _ in range(200):
            if {d.node_id for d in bridge.devices()} - known:
                break
            await asyncio.sleep(0.05)
        (light,) = [d for d in bridge.devices() if d.node_id not in known]
        generic = registry.get("matter:control_matter_device@1.0.0")
        assert generic is not None
        assert generic.handler is not None
        sent = len(adapter.sent)
        result = await generic.handler(
            {
                "device_id": light.id,
                "cluster": "Identify",
                "command": "Identify",
                "payload": {"identifyTime": 3},
            },
            CallContext(),
        )
        assert result["sent"][0]["payload"] == {"identifyTime": 3}
        assert len(adapter.sent) == sent + 1
        assert built == [("Identify", "Identify")]
        on = registry.get(f"matter:{light.slug}_on@1.0.0")
        assert on is not None
        assert on.handler is not None
        await on.handler({}, CallContext())
        assert built == [("Identify", "Identify"), ("OnOff", "On")]
