"""The shared Matter tools tell a token nothing about the devices it may not see.

A recorded weather sensor (two sensor endpoints) and an on/off light are imported into
the real python-matter-server as test nodes. A token that may see only the light lists
``core:query_sensor`` and ``matter:control_matter_device`` over HTTP (``/v1/tools``) and
MCP (``tools/list``): neither names a sensor's id or name, nor how many devices there
are. Its calls for the sensors it may not read answer exactly as for a device that does
not exist (status, code, and message with the id swapped), and no answer lists another
device's id. A token that may read the sensor reads it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp.test_server import mcp_client
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

SENSOR, LIGHT = "eve_weather_sensor", "node-1-onoff"

controller, home = home_fixtures("shared_visibility", (SENSOR, LIGHT))

SHARED = ("core:query_sensor", "matter:control_matter_device")


def _hidden(home: Home, *visible: str) -> list[str]:
    """Return the ids and names of the devices a token that sees ``visible`` may not see.

    The module's controller keeps earlier tests' nodes: every device but those.
    """
    assert home.service.matter is not None
    devices = home.service.matter.bridge.devices()
    seen = {d.name for d in devices if d.id in visible}
    hidden = [d for d in devices if d.id not in visible]
    return [d.id for d in hidden] + [d.name for d in hidden if d.name not in seen]


async def test_listings_of_the_shared_tools_name_no_hidden_device(home: Home) -> None:
    light = home.ids[LIGHT]
    token = home.token(f"device:read:{light}", f"device:control:{light}", agent_id="lamp-only")
    status, listing = await home.request("GET", "/v1/tools", token)
    assert status == 200
    shown = {t["identity"].split("@")[0]: t for t in listing["tools"]}
    async with mcp_client(home.url, token) as client:
        mcp = {t.name: t for t in (await client.list_tools()).tools}
    texts = [json.dumps(shown[k]) for k in SHARED if k in shown] + [
        json.dumps(mcp[n].model_dump(mode="json"))
        for n in ("core__query_sensor", "matter__control_matter_device")
        if n in mcp
    ]
    assert texts
    for text in texts:
        for secret in _hidden(home, light):
            assert secret not in text
        assert "One of" not in text  # no count of the home's devices either
    # Both are listed to a token that may use some device: what they say is the same
    # for every token, so listing them tells nothing.
    assert set(SHARED) <= set(shown)
    assert {"core__query_sensor", "matter__control_matter_device"} <= set(mcp)


async def _call(home: Home, token: str, tool: str, params: dict[str, Any]) -> tuple[int, Any]:
    return await home.invoke(tool, params, token)


async def test_a_hidden_sensor_answers_as_an_unknown_device(home: Home) -> None:
    light = home.ids[LIGHT]
    thermometer = home.ids[SENSOR]  # the weather sensor's temperature endpoint
    sensor = thermometer.replace("-1", "-2")  # its humidity endpoint: hidden
    token = home.token(
        f"device:read:{light}",
        f"device:control:{light}",
        f"device:read:{thermometer}",
        agent_id="lamp-and-thermometer",
    )
    unknown = "999-1"
    for tool, params in (
        ("core:query_sensor", {"sensor": "humidity"}),
        ("matter:control_matter_device", {"cluster": "OnOff", "command": "On"}),
        (
            "matter:control_matter_device",
            {
                "access": "read",
                "cluster": "RelativeHumidityMeasurement",
                "attribute": "MeasuredValue",
            },
        ),
    ):
        hidden = await _call(home, token, tool, {"device_id": sensor, **params})
        missing = await _call(home, token, tool, {"device_id": unknown, **params})
        assert hidden[0] == missing[0] == 403, (tool, hidden, missing)
        h, m = hidden[1]["error"], missing[1]["error"]
        assert h["code"] == m["code"] == "PERMISSION_DENIED"
        assert json.dumps(h).replace(sensor, "X") == json.dumps(m).replace(unknown, "X")
        for secret in _hidden(home, light, thermometer):
            assert secret not in json.dumps(m), (tool, m)
    # An unknown id by a token that may read every device: no id of the home either.
    everything = home.token("device:read:*", agent_id="reads-all")
    status, body = await _call(
        home, everything, "core:query_sensor", {"device_id": unknown, "sensor": "temperature"}
    )
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), body
    for secret in _hidden(home):
        assert secret not in json.dumps(body)


async def test_a_token_that_may_read_the_sensor_reads_it(home: Home) -> None:
    sensor = home.ids[SENSOR]
    token = home.token(f"device:read:{sensor}", agent_id="sensor-reader")
    status, body = await _call(
        home, token, "core:query_sensor", {"device_id": sensor, "sensor": "temperature"}
    )
    assert status == 200, body
    # The Eve Weather's recorded MeasuredValue 1603 (0.01 °C).
    assert body["result"]["value"] == 16.03
    # A reading the device lacks names only its own readings.
    status, body = await _call(
        home, token, "core:query_sensor", {"device_id": sensor, "sensor": "co2"}
    )
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), body
    assert body["error"]["details"]["known"] == ["temperature"]
