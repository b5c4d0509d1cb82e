"""The compact profile's kitchen appliances: a microwave oven and a fridge with parts.

Recorded dumps (Home Assistant's test corpus) are imported into the real
python-matter-server; ``home__appliances`` over ``/mcp/compact`` reaches their cooking,
modes and cabinet temperatures, and sends exactly what the Matter specification says
(SetCookingParameters in seconds, SetTemperature in 0.01 °C, ChangeToMode by the
fridge's own mode names), never another kind's tool.
"""

from __future__ import annotations

import json

import pytest

from tests.mcp.test_compact import compact_client, device
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

MICROWAVE, FRIDGE = "microwave_oven", "silabs_refrigerator"

controller, home = home_fixtures("mcp_compact_appliances", (MICROWAVE, FRIDGE))


async def test_cook_modes_and_cabinet_temperature(home: Home) -> None:
    broad = home.token("device:control:*", "device:read:*", agent_id="kitchen")
    microwave = device(home, MICROWAVE)
    fridge = device(home, FRIDGE)  # endpoint 1: the fridge's modes
    assert home.service.matter is not None
    parts = sorted(
        d.name for d in home.service.matter.bridge.devices() if d.node_id == fridge.node_id
    )
    async with compact_client(home, broad, "auto") as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
        # The fridge's OnOff is not a control of its device type: no lights tool.
        assert sorted(tools) == ["home__appliances", "home__home_state"]
        assert sorted(tools["home__appliances"]["target"]["enum"]) == sorted(
            [microwave.name, *parts]
        )
        assert tools["home__appliances"]["action"]["enum"] == [
            "start",
            "stop",
            "pause",
            "resume",
            "mode",
            "cook",
            "temperature",
        ]

        async def sent(**args: object) -> list[dict[str, object]]:
            result = await client.call_tool("home__appliances", args)
            assert result.is_error is False, result
            return list(json.loads(result.content[0].text)["sent"])  # type: ignore[union-attr]

        # Two minutes is 120 s of CookTime; the oven starts once it is set.
        (cook,) = await sent(target=microwave.name, action="cook", minutes=2)
        assert (cook["command"], cook["payload"]) == (
            "SetCookingParameters",
            {"cookTime": 120, "startAfterSetting": True},
        )
        # "Rapid Cool" is the fridge's mode 1 (its SupportedModes).
        (mode,) = await sent(target=fridge.name, action="mode", mode="Rapid Cool")
        assert (mode["cluster"], mode["payload"]) == (
            "RefrigeratorAndTemperatureControlledCabinetMode",
            {"newMode": 1},
        )
        # The freezer cabinet (endpoint 2: -18 to -15 °C): -16 °C is -1600.
        freezer = next(
            d
            for d in home.service.matter.bridge.devices()
            if d.node_id == fridge.node_id and d.endpoint_id == 2
        )
        (temp,) = await sent(target=freezer.name, action="temperature", celsius=-16)
        assert (temp["command"], temp["payload"]) == (
            "SetTemperature",
            {"targetTemperature": -1600},
        )
        # A microwave cannot be set to a temperature: the answer says what it can do.
        wrong = await client.call_tool(
            "home__appliances", {"target": microwave.name, "action": "temperature", "celsius": 90}
        )
        assert wrong.structured_content["error"]["code"] == "INVALID_PARAMS"
