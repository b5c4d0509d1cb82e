"""Issue 29's kinds through the compact profile, end to end on the real controller.

One bridge (its managed controller in the fabric namespace) and one matter.js device of
each kind, commissioned with a name and a room. An agent holding a signed token talks
to ``/mcp/compact`` with the MCP SDK's client: each kind's primary function is called
through its capability tool (``home__fans``, ``home__vacuums`` …) and confirmed by the
device's own report (its STATE lines); ``home__home_state`` answers every kind in human
units, follows the devices' own changes (a leak starts, the plug draws more) and names
only what the token may read. Expected values come from the Matter specification and
the device scripts' documented values (devices/kinds/), never from the bridge's code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.auth import bearer
from tests.support.fabric import Fabric
from tests.support.kinds_home import KindsHome, Member, kinds_home

pytestmark = pytest.mark.fabric

FAN, VACUUM, VALVE, GARAGE, DRAPES, WASHER, HEATER, CHARGER, PLUG, LEAK, AIR, ALARM, LUX, CHIME = (
    "Bedroom Fan",
    "Robot Vacuum",
    "Garden Valve",
    "Garage Door",
    "Lounge Drapes",
    "Washer",
    "Boiler",
    "Car Charger",
    "Desk Plug",
    "Sink Leak Sensor",
    "Office Air Monitor",
    "Hall Smoke Alarm",
    "Hall Light Sensor",
    "Doorbell Chime",
)
MEMBERS = (
    Member(DeviceKind.FAN, FAN, "Bedroom"),
    Member(DeviceKind.ROBOT_VACUUM, VACUUM, "Hall"),
    Member(DeviceKind.WATER_VALVE, VALVE, "Garden"),
    Member(DeviceKind.GARAGE_DOOR, GARAGE, "Garage"),
    Member(DeviceKind.DRAPERY, DRAPES, "Lounge"),
    Member(DeviceKind.LAUNDRY_WASHER, WASHER, "Utility"),
    Member(DeviceKind.WATER_HEATER, HEATER, "Utility"),
    Member(DeviceKind.EV_CHARGER, CHARGER, "Garage"),
    Member(DeviceKind.ENERGY_PLUG, PLUG, "Office"),
    Member(DeviceKind.LEAK, LEAK, "Kitchen"),
    Member(DeviceKind.AIR_QUALITY, AIR, "Office"),
    Member(DeviceKind.SMOKE_CO, ALARM, "Hall"),
    Member(DeviceKind.ILLUMINANCE, LUX, "Hall"),
    Member(DeviceKind.CHIME, CHIME, "Hall"),
)


@pytest.fixture(scope="module")
def home(fabric: Fabric) -> Iterator[KindsHome]:
    # Ports, passcodes and full discriminators no other test module uses.
    with kinds_home(
        fabric, "compact-kinds", MEMBERS, port=6960, passcode=20206101, discriminator=0xF80
    ) as started:
        yield started


def token(home: KindsHome, *permissions: str, agent: str = "compact-kinds") -> str:
    key = home.bridge.service.invocation.key
    return issue_token(key, agent_id=agent, permissions=list(permissions), ttl_s=600)


@contextlib.asynccontextmanager
async def compact(home: KindsHome, bearer_token: str) -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers=bearer(bearer_token)) as http,
        Client(
            streamable_http_client(f"{home.bridge.url}/mcp/compact", http_client=http),
            cache=None,
        ) as client,
    ):
        yield client


async def call(client: Client, tool: str, **args: Any) -> Any:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


async def reports(
    dev: VirtualDevice, since: int, behavior: str, attribute: str, value: Any
) -> None:
    await asyncio.to_thread(dev.wait_state, behavior, attribute, value, since=since, timeout_s=20)


async def state_of(client: Client, name: str) -> dict[str, Any]:
    doc = await call(client, "home__home_state")
    (entry,) = [d for d in doc["devices"] if d["name"] == name]
    return dict(entry)


@pytest.fixture
def agent(home: KindsHome) -> str:
    return token(home, "device:control:*", "device:read:*")


async def test_each_kind_is_a_target_of_its_capability(home: KindsHome, agent: str) -> None:
    async with compact(home, agent) as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
    targets = {name: props["target"]["enum"] for name, props in tools.items() if "target" in props}
    actions = {name: props["action"]["enum"] for name, props in tools.items() if "action" in props}
    assert targets == {
        "home__lights": [PLUG],  # the plug's own on/off
        "home__climate": [HEATER],
        # A room is also a target of the kinds it has room tools of (fans, covers, valves).
        "home__covers": [DRAPES, "Lounge"],
        "home__closures": [GARAGE],
        "home__fans": [FAN, "Bedroom"],
        "home__vacuums": [VACUUM],
        "home__appliances": [WASHER],
        "home__valves": [VALVE, "Garden"],
        "home__chargers": [CHARGER],
        "home__sounds": [CHIME],
    }
    assert actions["home__sounds"] == ["play"]  # a chime is not a speaker: no volume
    assert actions["home__fans"] == ["mode", "speed", "step"]  # MultiSpeed: speed steps too
    assert actions["home__climate"] == [
        "set_temperature",
        "set_mode",
        "boost",
        "cancel_boost",
        "heater_mode",
    ]
    assert actions["home__chargers"] == ["enable", "disable", "mode"]
    assert "home__home_state" in tools


async def test_a_chime_plays_through_the_sounds_tool(home: KindsHome, agent: str) -> None:
    chime = home.devices[CHIME]
    async with compact(home, agent) as client:
        mark = chime.mark()
        await call(client, "home__sounds", target="doorbell chime", action="play")
        # PlayChimeSound plays the selected sound: SelectedChime 1 (the script's Westminster)
        await reports(chime, mark, "chime", "played", 1)
        wrong = await client.call_tool(
            "home__sounds", {"target": CHIME, "action": "volume", "percent": 50}
        )
        assert wrong.is_error is True
        assert wrong.structured_content["error"]["code"] == "INVALID_PARAMS"
        state = await state_of(client, CHIME)
    assert state["enabled"] is True
    assert state["sound"] in state["sounds"]


async def test_fan_speed_mode_and_step(home: KindsHome, agent: str) -> None:
    fan = home.devices[FAN]
    async with compact(home, agent) as client:
        mark = fan.mark()
        # 33 %: speed step 1 of its 3, which the virtual fan keeps (40 % ends at 33 %).
        await call(client, "home__fans", target=FAN, action="speed", percent=33)
        await reports(fan, mark, "fanControl", "percentCurrent", 33)  # the fan's own report
        mark = fan.mark()
        await call(client, "home__fans", target="bedroom fan", action="mode", mode="high")
        await reports(fan, mark, "fanControl", "fanMode", 3)  # FanModeEnum High
        mark = fan.mark()
        await call(client, "home__fans", target=FAN, action="step", speed=1)
        await reports(fan, mark, "fanControl", "speedSetting", 1)
        state = await state_of(client, FAN)
    assert (state["fan_step"], state["room"]) == (1, "Bedroom")


async def test_vacuum_cleans_a_room_by_name_then_docks(home: KindsHome, agent: str) -> None:
    robot = home.devices[VACUUM]
    async with compact(home, agent) as client:
        mark = robot.mark()
        await call(client, "home__vacuums", target=VACUUM, action="clean_rooms", areas=["Kitchen"])
        await reports(robot, mark, "serviceArea", "selectedAreas", [1])  # Kitchen is area 1
        await reports(robot, mark, "rvcOperationalState", "operationalState", 1)  # Running
        await reports(robot, mark, "serviceArea", "currentArea", 1)
        state = await state_of(client, VACUUM)
        assert (state["status"], state["current_area"]) == ("running", "Kitchen")
        mark = robot.mark()
        await call(client, "home__vacuums", target=VACUUM, action="pause")
        await reports(robot, mark, "rvcOperationalState", "operationalState", 2)  # Paused
        mark = robot.mark()
        await call(client, "home__vacuums", target=VACUUM, action="dock")
        await reports(robot, mark, "rvcOperationalState", "operationalState", 66)  # Docked
        state = await state_of(client, VACUUM)
    assert (state["status"], state["selected_areas"]) == ("docked", ["Kitchen"])


async def test_valve_opens_and_closes(home: KindsHome, agent: str) -> None:
    valve = home.devices[VALVE]
    async with compact(home, agent) as client:
        mark = valve.mark()
        await call(client, "home__valves", target=VALVE, action="open")
        await reports(valve, mark, "valveConfigurationAndControl", "currentState", 1)  # Open
        assert (await state_of(client, VALVE))["valve"] == "open"
        mark = valve.mark()
        await call(client, "home__valves", target=VALVE, action="close")
        await reports(valve, mark, "valveConfigurationAndControl", "currentState", 0)
        assert (await state_of(client, VALVE))["valve"] == "closed"
        # A valve is not a cover, a blind not a valve.
        wrong = await client.call_tool("home__covers", {"target": VALVE, "action": "open"})
        assert wrong.structured_content["error"]["code"] == "NOT_FOUND"


async def test_garage_door_opens_only_after_a_persons_approval(home: KindsHome, agent: str) -> None:
    door = home.devices[GARAGE]
    approver = token(home, "admin:approve", agent="a-person")
    args = {"target": GARAGE, "action": "open"}
    async with compact(home, agent) as client:
        mark = door.mark()
        first = await client.call_tool("home__closures", args)
        assert first.is_error is True
        error = first.structured_content["error"]
        assert error["code"] == "CONFIRMATION_REQUIRED"
        await asyncio.sleep(0.5)
        assert door.mark() == mark  # nothing moved before the approval
        body = home.request(
            "POST",
            f"/v1/approvals/{error['details']['approval_id']}",
            {"decision": "approve"},
            token=approver,
        )
        assert body["status"] == "approved", body
        async with asyncio.timeout(30):
            while (done := await client.call_tool("home__closures", args)).is_error:
                assert done.structured_content["error"]["code"] == "CONFIRMATION_REQUIRED"
                await asyncio.sleep(0.2)
        # ClosureControl OverallCurrentState: position 1 = FullyOpened.
        await reports(
            door,
            mark,
            "closureControl",
            "overallCurrentState",
            {"position": 1, "secureState": False},
        )
        assert (await state_of(client, GARAGE))["closure"] == "open"


async def test_drapes_go_to_a_position(home: KindsHome, agent: str) -> None:
    drapes = home.devices[DRAPES]
    async with compact(home, agent) as client:
        mark = drapes.mark()
        await call(client, "home__covers", target=DRAPES, action="position", percent_open=25)
        # 25 % open is 75 % closed: 7500 in 0.01 % (WindowCovering lift percent100ths).
        await reports(drapes, mark, "windowCovering", "currentPositionLiftPercent100ths", 7500)
        assert (await state_of(client, DRAPES))["percent_open"] == 25.0


async def test_washer_runs_a_cycle_by_its_name(home: KindsHome, agent: str) -> None:
    washer = home.devices[WASHER]
    async with compact(home, agent) as client:
        mark = washer.mark()
        await call(client, "home__appliances", target=WASHER, action="cycle", mode="Wool")
        await reports(washer, mark, "laundryWasherMode", "currentMode", 1)  # "Wool" is mode 1
        mark = washer.mark()
        await call(client, "home__appliances", target=WASHER, action="start")
        await reports(washer, mark, "operationalState", "operationalState", 1)  # Running
        await reports(washer, mark, "operationalState", "countdownTime", 5400)  # s, its script
        state = await state_of(client, WASHER)
        assert (state["cycle"], state["status"], state["minutes_left"]) == ("Wool", "running", 90)
        mark = washer.mark()
        await call(client, "home__appliances", target=WASHER, action="stop")
        await reports(washer, mark, "operationalState", "operationalState", 0)  # Stopped


async def test_water_heater_setpoint_and_boost(home: KindsHome, agent: str) -> None:
    heater = home.devices[HEATER]
    async with compact(home, agent) as client:
        mark = heater.mark()
        await call(client, "home__climate", target=HEATER, action="set_temperature", celsius=60)
        await reports(heater, mark, "thermostat", "occupiedHeatingSetpoint", 6000)  # 0.01 °C
        mark = heater.mark()
        result = await call(client, "home__climate", target=HEATER, action="boost", minutes=15)
        assert result["sent"][0]["payload"] == {"boostInfo": {"duration": 900}}  # seconds
        await reports(heater, mark, "waterHeaterManagement", "boostState", 1)  # Active
        mark = heater.mark()
        await call(client, "home__climate", target=HEATER, action="heater_mode", mode="Timed")
        await reports(heater, mark, "waterHeaterMode", "currentMode", 2)
        state = await state_of(client, HEATER)
    assert (state["heating_setpoint"], state["boost"], state["heater_mode"]) == (
        60.0,
        True,
        "Timed",
    )


async def test_charger_enables_and_disables(home: KindsHome, agent: str) -> None:
    charger = home.devices[CHARGER]
    async with compact(home, agent) as client:
        mark = charger.mark()
        await call(client, "home__chargers", target=CHARGER, action="enable", max_current_amps=10)
        await reports(charger, mark, "energyEvse", "supplyState", 1)  # ChargingEnabled
        assert (await state_of(client, CHARGER))["supply"] == "charging_enabled"
        mark = charger.mark()
        await call(client, "home__chargers", target=CHARGER, action="disable")
        await reports(charger, mark, "energyEvse", "supplyState", 0)  # Disabled


async def test_home_state_reads_energy_and_sensors_in_human_units(
    home: KindsHome, agent: str
) -> None:
    plug, leak, air = home.devices[PLUG], home.devices[LEAK], home.devices[AIR]
    async with compact(home, agent) as client:
        # The scripts' values: 120000 mW, 230000 mV, 1000 mA, 1000000 mWh; 20001 is
        # 10000 x log10(100 lux) + 1; AirQuality 2 = Fair, CO2 612 ppm, PM2.5 8 µg/m³,
        # 22.10 °C, 41.00 %RH; SmokeState / COState / BatteryAlert 0 = Normal.
        assert await state_of(client, PLUG) == {
            "id": home.ids[PLUG],
            "name": PLUG,
            "room": "Office",
            "on": True,
            "power_w": 120.0,
            "voltage_v": 230.0,
            "current_a": 1.0,
            "energy_kwh": 1.0,
        }
        assert (await state_of(client, LUX))["illuminance_lux"] == 100.0
        assert {k: v for k, v in (await state_of(client, AIR)).items() if k != "id"} == {
            "name": AIR,
            "room": "Office",
            "air_quality": "fair",
            "co2": {"value": 612.0, "unit": "ppm"},
            "pm25": {"value": 8.0, "unit": "µg/m³"},
            "temperature": 22.1,
            "humidity_percent": 41.0,
        }
        alarm = await state_of(client, ALARM)
        assert (alarm["smoke"], alarm["co_alarm"], alarm["battery_alert"]) == (
            "normal",
            "normal",
            "normal",
        )
        # The devices' own changes (their buttons): 10 W and 1 Wh more, a leak, +400 ppm.
        assert (await state_of(client, LEAK))["leak"] is False  # the sensor starts dry
        for dev, (behavior, attribute, value) in (
            (plug, ("electricalPowerMeasurement", "activePower", 130_000)),
            (leak, ("booleanState", "stateValue", True)),
            (air, ("carbonDioxideConcentrationMeasurement", "measuredValue", 1012)),
        ):
            mark = dev.mark()
            dev.press()
            await asyncio.to_thread(
                dev.wait_state, behavior, attribute, value, since=mark, timeout_s=20, local=True
            )
        async with asyncio.timeout(20):
            while True:
                now = {n: await state_of(client, n) for n in (PLUG, LEAK, AIR)}
                if (
                    now[PLUG]["power_w"] == 130.0
                    and now[PLUG]["energy_kwh"] == 1.001
                    and now[LEAK]["leak"] is True
                    and now[AIR]["co2"] == {"value": 1012.0, "unit": "ppm"}
                ):
                    break
                await asyncio.sleep(0.2)


async def test_home_state_names_only_what_the_token_may_read(home: KindsHome) -> None:
    leak_id = home.ids[LEAK]
    narrow = token(home, f"device:read:{leak_id}", agent="leak-only")
    async with compact(home, narrow) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["home__home_state"]  # no capability: it may control nothing
        doc = await call(client, "home__home_state")
        assert [d["id"] for d in doc["devices"]] == [leak_id]
        assert doc["count"] == 1
        kitchen = await call(client, "home__home_state", area="Kitchen")
        assert [d["name"] for d in kitchen["devices"]] == [LEAK]
        # A room it cannot see answers as one that does not exist.
        hidden = await client.call_tool("home__home_state", {"area": "Garage"})
        error = hidden.structured_content["error"]
        assert (error["code"], error["details"]) == (
            "NOT_FOUND",
            {"room": "Garage", "rooms": ["Kitchen"]},
        )
        # And no capability tool reaches a device out of its sight.
        fans = await client.call_tool(
            "home__fans", {"target": FAN, "action": "speed", "percent": 9}
        )
        assert fans.is_error is True
