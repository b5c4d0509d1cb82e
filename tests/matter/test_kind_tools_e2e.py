"""Issue 29's kinds end to end: matter.js devices, the real controller, the whole bridge.

One bridge (its managed controller in the fabric namespace, HTTP API on 127.0.0.1) and
one fresh matter.js device per kind of devices/kinds/. Each is commissioned through
``POST /v1/devices/commission`` and must get exactly the tools the specification says
its device type and features call for; then each kind's primary function is invoked
through its own per-device tool over HTTP with a signed token, and confirmed by the
device's own report (its STATE lines) or, for a sensor, by the value the device
script publishes, read back in human units. Expected values come from the Matter
specification and the device scripts' documented initial values
(tests/matter/test_virtual_kinds.py SPECS), never from the bridge's code.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest

from bridge.demo.virtual_devices import VirtualDevice
from tests.matter.test_virtual_kinds import Kind
from tests.support.device_host import DeviceHost, device_host
from tests.support.fabric import Fabric, ThreadedBridge

pytestmark = pytest.mark.fabric

# kind -> (the name it is commissioned with, the slug that name gives, its tools' suffixes)
KINDS: dict[Kind, tuple[str, str, list[str]]] = {
    # Fan: FanModeSequence 2 and MultiSpeed (SpeedMax 3) - mode, percent, speed steps.
    Kind.FAN: (
        "Bedroom Fan",
        "bedroom_fan",
        ["set_fan_mode", "set_fan_speed", "set_fan_step", "state"],
    ),
    # Air purifier: the same fan, and a HEPA filter whose condition it reports (matter.js
    # implements no ResetCondition, the command is optional: no reset tool).
    Kind.AIR_PURIFIER: (
        "Hall Air Purifier",
        "hall_air_purifier",
        ["set_fan_mode", "set_fan_speed", "set_fan_step", "state"],
    ),
    # RVC: clean modes by name, pause/resume/dock, start/stop by run-mode tags, rooms.
    Kind.ROBOT_VACUUM: (
        "Robot Vacuum",
        "robot_vacuum",
        [
            "set_clean_mode",
            "pause",
            "resume",
            "return_to_base",
            "start",
            "stop",
            "clean_areas",
            "state",
        ],
    ),
    Kind.LAUNDRY_WASHER: (
        "Laundry Washer",
        "laundry_washer",
        ["set_cycle", "start", "stop", "pause", "resume", "state"],
    ),
    Kind.DISHWASHER: (
        "Kitchen Dishwasher",
        "kitchen_dishwasher",
        ["set_cycle", "start", "stop", "pause", "resume", "state"],
    ),
    Kind.WATER_VALVE: ("Garden Valve", "garden_valve", ["open", "close", "state"]),
    # Closure (Matter 1.5): open needs a person's confirmation.
    Kind.GARAGE_DOOR: ("Garage Door", "closure_garage_door", ["open", "close", "stop", "state"]),
    # Water heater: its Thermostat (setpoint, Off/Heat, SetpointRaiseLower are mandatory),
    # boost, and its own modes.
    Kind.WATER_HEATER: (
        "Boiler Water Heater",
        "boiler_water_heater",
        [
            "set_temperature",
            "set_mode",
            "adjust_temperature",
            "boost",
            "cancel_boost",
            "set_heater_mode",
            "state",
        ],
    ),
    Kind.EV_CHARGER: (
        "Driveway EV Charger",
        "driveway_ev_charger",
        ["enable_charging", "disable_charging", "set_charging_mode", "state"],
    ),
    Kind.ENERGY_PLUG: ("Desk Energy Plug", "desk_energy_plug", ["on", "off", "toggle", "state"]),
    Kind.ILLUMINANCE: ("Hall Light Sensor", "hall_light_sensor", ["state"]),
    Kind.PRESSURE: ("Weather Pressure Sensor", "weather_pressure_sensor", ["state"]),
    Kind.FLOW: ("Garden Flow Sensor", "garden_flow_sensor", ["state"]),
    Kind.LEAK: ("Sink Leak Sensor", "sink_leak_sensor", ["state"]),
    Kind.AIR_QUALITY: ("Office Air Quality Sensor", "office_air_quality_sensor", ["state"]),
    Kind.SMOKE_CO: ("Hall Smoke Alarm", "hall_smoke_alarm", ["state"]),
    Kind.DRAPERY: (
        "Lounge Drapery",
        "blind_lounge_drapery",
        ["open", "close", "stop", "set_position", "state"],
    ),
    # Chime (Matter 1.4): PlayChimeSound plays the selected sound.
    Kind.CHIME: ("Front Door Chime", "front_door_chime", ["play", "state"]),
    # Cook Surface: OnOff with OffOnly (no on, no toggle), levels by name.
    Kind.COOK_SURFACE: (
        "Hob Front Left",
        "cook_surface_hob_front_left",
        ["off", "set_temperature_level", "state"],
    ),
}
BATCH = 6


class Home:
    """The module's bridge, its devices and the node each was commissioned as."""

    def __init__(self, bridge: ThreadedBridge, devices: dict[Kind, VirtualDevice]) -> None:
        self.bridge = bridge
        self.devices = devices
        self.nodes: dict[Kind, int] = {}
        self.tools: dict[Kind, list[str]] = {}

    def device_id(self, kind: Kind) -> str:
        return f"{self.nodes[kind]}-1"


def _start(host: DeviceHost) -> dict[Kind, VirtualDevice]:
    devices: dict[Kind, VirtualDevice] = {}
    for i, kind in enumerate(KINDS):
        devices[kind] = host.device(
            kind,  # type: ignore[arg-type]  # the kinds script's names
            id=f"kind-e2e-{kind.value}",
            port=6600 + i,  # 6300 is test_device_events.py's button
            passcode=20204001 + i,
            # Commissioned by QR code (all 12 discriminator bits), distinct from
            # test_virtual_kinds' 0xE40.. and the fabric factory's ..0x0A.
            discriminator=0xC20 + i,  # 0xD40+: test_real_rules.py, alive all session
            label=f"E2E {kind.value}",
        )
    host.start_all(host.devices.values())
    return devices


@pytest.fixture(scope="module")
def home(fabric: Fabric) -> Iterator[Home]:
    with device_host(fabric, "kind-e2e-host") as host:
        devices = _start(host)
        bridge = ThreadedBridge(fabric, "kinds")
        bridge.start()
        try:
            yield Home(bridge, devices)
        finally:
            bridge.stop()


@pytest.fixture
async def http(home: Home) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {home.bridge.token}"}
    async with aiohttp.ClientSession(
        headers=headers, timeout=aiohttp.ClientTimeout(total=120)
    ) as session:
        yield session


async def invoke(home: Home, http: aiohttp.ClientSession, tool: str, **params: Any) -> Any:
    async with http.post(
        f"{home.bridge.url}/v1/invoke", json={"tool": tool, "params": params}
    ) as resp:
        body: dict[str, Any] = await resp.json()
    assert body.get("status") == "success", (tool, body.get("error"))
    return body["result"]


async def reports(
    dev: VirtualDevice, since: int, behavior: str, attribute: str, value: Any
) -> None:
    await asyncio.to_thread(dev.wait_state, behavior, attribute, value, since=since, timeout_s=20)


async def test_every_kind_commissions_with_the_tools_its_type_calls_for(
    home: Home, http: aiohttp.ClientSession
) -> None:
    started = time.monotonic()
    got: dict[Kind, list[str]] = {}
    for kind, (name, _slug, _suffixes) in KINDS.items():
        dev = home.devices[kind]
        assert dev.pairing is not None
        async with http.post(
            f"{home.bridge.url}/v1/devices/commission", json={"code": dev.pairing.qr, "name": name}
        ) as resp:
            body = await resp.json()
            assert resp.status == 201, (kind, body)
        home.nodes[kind] = int(body["node_id"])
        got[kind] = sorted(body["tools"])
    assert got == {
        kind: sorted(f"{slug}_{s}" for s in suffixes)
        for kind, (_name, slug, suffixes) in KINDS.items()
    }
    print(
        f"{len(KINDS)} kinds commissioned through the bridge in {time.monotonic() - started:.0f} s"
    )


async def test_fan_speed_and_mode_are_attribute_writes_the_fan_follows(
    home: Home, http: aiohttp.ClientSession
) -> None:
    dev, node = home.devices[Kind.FAN], home.nodes[Kind.FAN]
    mark = dev.mark()
    result = await invoke(home, http, "bedroom_fan_set_fan_speed", percent=50)
    # FanControl PercentSetting is attribute 2 (spec 4.4.6.3).
    assert result["sent"] == [
        {
            "kind": "write",
            "node_id": node,
            "endpoint_id": 1,
            "cluster": "FanControl",
            "attribute": "PercentSetting",
            "value": 50,
        }
    ]
    await reports(dev, mark, "fanControl", "percentCurrent", 50)
    mark = dev.mark()
    await invoke(home, http, "bedroom_fan_set_fan_mode", mode="high")  # FanMode High = 3
    await reports(dev, mark, "fanControl", "percentCurrent", 100)
    state = await invoke(home, http, "bedroom_fan_state")
    assert (state["fan_mode"], state["fan_speed_percent"]) == ("high", 100)
    # A mode the fan's sequence (Off/Low/Med/High/Auto) lacks is refused before sending.
    async with http.post(
        f"{home.bridge.url}/v1/invoke",
        json={"tool": "bedroom_fan_set_fan_mode", "params": {"mode": "smart"}},
    ) as resp:
        assert resp.status == 400


async def test_air_purifier_reports_its_filter(home: Home, http: aiohttp.ClientSession) -> None:
    state = await invoke(home, http, "hall_air_purifier_state")
    # HepaFilterMonitoring Condition 87 %, ChangeIndication 0 = OK (the script's values).
    assert (state["hepa_filter_percent"], state["hepa_filter"]) == (87, "ok")


async def test_robot_vacuum_cleans_rooms_by_name_pauses_and_docks(
    home: Home, http: aiohttp.ClientSession
) -> None:
    dev, node = home.devices[Kind.ROBOT_VACUUM], home.nodes[Kind.ROBOT_VACUUM]
    mark = dev.mark()
    result = await invoke(home, http, "robot_vacuum_clean_areas", areas=["Kitchen", "Bedroom"])
    # Kitchen and Bedroom are areas 1 and 3; run mode 1 is the one tagged Cleaning (0x4001).
    assert result["sent"] == [
        {
            "kind": "command",
            "node_id": node,
            "endpoint_id": 1,
            "cluster": "ServiceArea",
            "command": "SelectAreas",
            "payload": {"newAreas": [1, 3]},
        },
        {
            "kind": "command",
            "node_id": node,
            "endpoint_id": 1,
            "cluster": "RvcRunMode",
            "command": "ChangeToMode",
            "payload": {"newMode": 1},
        },
    ]
    await reports(dev, mark, "serviceArea", "selectedAreas", [1, 3])
    await reports(dev, mark, "rvcOperationalState", "operationalState", 1)  # Running
    mark = dev.mark()
    await invoke(home, http, "robot_vacuum_pause")
    await reports(dev, mark, "rvcOperationalState", "operationalState", 2)  # Paused
    mark = dev.mark()
    await invoke(home, http, "robot_vacuum_resume")
    await reports(dev, mark, "rvcOperationalState", "operationalState", 1)
    mark = dev.mark()
    await invoke(home, http, "robot_vacuum_return_to_base")
    await reports(dev, mark, "rvcOperationalState", "operationalState", 66)  # Docked
    mark = dev.mark()
    await invoke(home, http, "robot_vacuum_set_clean_mode", mode="Mop")  # mode 2
    await reports(dev, mark, "rvcCleanMode", "currentMode", 2)
    state = await invoke(home, http, "robot_vacuum_state")
    assert (state["clean_mode"], state["status"], state["selected_areas"]) == (
        "Mop",
        "docked",
        ["Kitchen", "Bedroom"],
    )
    # A room the robot does not know is refused before anything is sent.
    async with http.post(
        f"{home.bridge.url}/v1/invoke",
        json={"tool": "robot_vacuum_clean_areas", "params": {"areas": ["Attic"]}},
    ) as resp:
        assert resp.status == 400


async def test_washer_cycle_by_name_and_its_programme(
    home: Home, http: aiohttp.ClientSession
) -> None:
    dev = home.devices[Kind.LAUNDRY_WASHER]
    mark = dev.mark()
    await invoke(home, http, "laundry_washer_set_cycle", mode="Wool")  # mode 1
    await reports(dev, mark, "laundryWasherMode", "currentMode", 1)
    for tool, state in (("start", 1), ("pause", 2), ("stop", 0)):  # OperationalStateEnum
        mark = dev.mark()
        await invoke(home, http, f"laundry_washer_{tool}")
        await reports(dev, mark, "operationalState", "operationalState", state)
    assert (await invoke(home, http, "laundry_washer_state"))["cycle"] == "Wool"
    dish = home.devices[Kind.DISHWASHER]
    mark = dish.mark()
    await invoke(home, http, "kitchen_dishwasher_start")
    await reports(dish, mark, "operationalState", "operationalState", 1)
    assert (await invoke(home, http, "kitchen_dishwasher_state"))["status"] == "running"


async def test_valve_opens_and_closes(home: Home, http: aiohttp.ClientSession) -> None:
    dev = home.devices[Kind.WATER_VALVE]
    mark = dev.mark()
    await invoke(home, http, "garden_valve_open")
    await reports(dev, mark, "valveConfigurationAndControl", "currentState", 1)  # Open
    assert (await invoke(home, http, "garden_valve_state"))["valve"] == "open"
    mark = dev.mark()
    await invoke(home, http, "garden_valve_close")
    await reports(dev, mark, "valveConfigurationAndControl", "currentState", 0)  # Closed


async def approve_pending(home: Home, approver: str) -> None:
    """Approve the one pending approval as a second agent (nobody approves their own call)."""
    headers = {"Authorization": f"Bearer {approver}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        for _ in range(200):
            async with session.get(f"{home.bridge.url}/v1/approvals?status=pending") as resp:
                pending = (await resp.json())["approvals"]
            if pending:
                async with session.post(
                    f"{home.bridge.url}/v1/approvals/{pending[0]['id']}",
                    json={"decision": "approve"},
                ) as resp:
                    assert resp.status == 200, await resp.text()
                return
            await asyncio.sleep(0.1)
    raise AssertionError("no approval appeared")


async def test_garage_door_opens_after_a_persons_confirmation(
    home: Home, http: aiohttp.ClientSession
) -> None:
    from bridge.auth.keys import KEY_FILE_NAME, NodeKey
    from bridge.auth.tokens import issue_token

    key = NodeKey.load_or_create(home.bridge.state_dir / KEY_FILE_NAME)
    approver = issue_token(key, agent_id="a-person", permissions=["admin:approve"], ttl_s=600)
    dev = home.devices[Kind.GARAGE_DOOR]
    mark = dev.mark()
    opened, _ = await asyncio.gather(
        invoke(home, http, "closure_garage_door_open"), approve_pending(home, approver)
    )
    # ClosureControl MoveTo (timed) with TargetPositionEnum 1 = MoveToFullyOpen.
    assert opened["sent"][0]["payload"] == {"position": 1}
    await reports(
        dev, mark, "closureControl", "overallCurrentState", {"position": 1, "secureState": False}
    )
    assert (await invoke(home, http, "closure_garage_door_state"))["closure"] == "open"


async def test_water_heater_boost_and_ev_charging(home: Home, http: aiohttp.ClientSession) -> None:
    heater = home.devices[Kind.WATER_HEATER]
    mark = heater.mark()
    result = await invoke(home, http, "boiler_water_heater_boost", minutes=10)
    assert result["sent"][0]["payload"] == {"boostInfo": {"duration": 600}}  # seconds
    await reports(heater, mark, "waterHeaterManagement", "boostState", 1)  # Active
    charger = home.devices[Kind.EV_CHARGER]
    mark = charger.mark()
    result = await invoke(home, http, "driveway_ev_charger_enable_charging", max_current_amps=16)
    # mA; the minimum is the charger's own MinimumChargeCurrent (6000 mA).
    assert result["sent"][0]["payload"] == {
        "chargingEnabledUntil": None,
        "minimumChargeCurrent": 6000,
        "maximumChargeCurrent": 16000,
    }
    await reports(charger, mark, "energyEvse", "supplyState", 1)  # ChargingEnabled
    mark = charger.mark()
    await invoke(home, http, "driveway_ev_charger_disable_charging")
    await reports(charger, mark, "energyEvse", "supplyState", 0)  # Disabled


async def test_energy_and_sensors_read_in_human_units(
    home: Home, http: aiohttp.ClientSession
) -> None:
    plug = await invoke(home, http, "desk_energy_plug_state")
    # 120000 mW, 230000 mV, 1000 mA, 1000000 mWh imported (the plug script's values).
    assert (plug["power_w"], plug["voltage_v"], plug["current_a"], plug["energy_kwh"]) == (
        120.0,
        230.0,
        1.0,
        1.0,
    )

    async def sensor(kind: Kind, name: str) -> Any:
        result = await invoke(
            home, http, "core:query_sensor", device_id=home.device_id(kind), sensor=name
        )
        return result["value"] if isinstance(result, dict) and "value" in result else result

    # 20001 = 10000 x log10(100 lux) + 1; 1013 x 0.1 kPa = 1013 hPa; 25 x 0.1 m³/h.
    assert await sensor(Kind.ILLUMINANCE, "illuminance") == 100.0
    assert await sensor(Kind.PRESSURE, "pressure") == 1013
    assert await sensor(Kind.FLOW, "flow") == 2.5
    assert await sensor(Kind.LEAK, "leak") is False
    assert await sensor(Kind.ENERGY_PLUG, "power") == 120.0
    # AirQuality 2 = Fair; CO2 612 ppm (unit 0), PM2.5 8 µg/m³ (unit 4).
    assert await sensor(Kind.AIR_QUALITY, "air_quality") == "fair"
    assert await sensor(Kind.AIR_QUALITY, "co2") == {"value": 612.0, "unit": "ppm"}
    assert await sensor(Kind.AIR_QUALITY, "pm25") == {"value": 8.0, "unit": "µg/m³"}
    assert await sensor(Kind.SMOKE_CO, "smoke") == "normal"
    assert await sensor(Kind.SMOKE_CO, "co_alarm") == "normal"
    # WindowCovering Type 4 = Drapery.
    assert (await invoke(home, http, "blind_lounge_drapery_state"))["covering_type"] == "drapery"


async def test_a_chime_plays_and_a_cook_surface_takes_a_named_level(
    home: Home, http: aiohttp.ClientSession
) -> None:
    """The chime's PlayChimeSound and the cook surface's SetTemperature by level index.

    Confirmed by the devices' own reports: the chime says which sound it played, the
    zone reports its SelectedTemperatureLevel; read back by name.
    """
    chime = home.devices[Kind.CHIME]
    since = chime.mark()
    await invoke(home, http, "front_door_chime_play")
    await reports(chime, since, "chime", "played", 1)  # SelectedChime 1: Westminster
    assert await invoke(home, http, "front_door_chime_state") == {
        "sound": "Westminster",
        "sounds": ["Ding Dong", "Westminster", "Birdsong"],
        "enabled": True,
    }
    hob = home.devices[Kind.COOK_SURFACE]
    since = hob.mark()
    await invoke(home, http, "cook_surface_hob_front_left_set_temperature_level", level="High")
    await reports(hob, since, "temperatureControl", "selectedTemperatureLevel", 2)
    state = await invoke(home, http, "cook_surface_hob_front_left_state")
    assert (state["temperature_level"], state["on"], state["temperature"]) == ("High", True, 120.0)
    async with http.post(
        f"{home.bridge.url}/v1/invoke",
        json={
            "tool": "cook_surface_hob_front_left_set_temperature_level",
            "params": {"level": "Boiling"},
        },
    ) as resp:
        body = await resp.json()
    assert (resp.status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    since = hob.mark()
    await invoke(home, http, "cook_surface_hob_front_left_off")
    await reports(hob, since, "onOff", "onOff", False)
