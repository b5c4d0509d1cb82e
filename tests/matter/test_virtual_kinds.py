"""Every virtual device kind of devices/kinds/, commissioned over the real controller.

One fresh matter.js device per kind, started in a few parallel batches and commissioned
one after another by the session's python-matter-server (its QR code: the full
discriminator, so 30 devices never answer for each other). Each node is then checked
against the Matter specification, written out below and not derived from the device
script: the endpoint's device type, the server clusters the device library requires for
it (and the optional ones the kind promises), feature maps, and the initial values in
the spec's units. Then the primary function of a few kinds is driven through the
controller and confirmed by the device's own report, and a press on the generic switch
arrives as a ``node_event`` on the controller's WebSocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.device_host import DeviceHost, HostedDevice, device_host
from tests.support.fabric import Fabric, ThreadedController

pytestmark = pytest.mark.fabric


# The ``--kind`` names of devices/kinds/index.mjs (issue 29): every DeviceKind but the
# five the virtual_device.mjs script had before.
Kind = DeviceKind
KINDS = [
    k
    for k in DeviceKind
    if k
    not in (
        DeviceKind.ONOFF,
        DeviceKind.DIMMABLE,
        DeviceKind.COLOR,
        DeviceKind.THERMOSTAT,
        DeviceKind.COVER,
    )
]


# Cluster ids (Matter 1.4 application cluster specification).
IDENTIFY, GROUPS, ON_OFF, LEVEL_CONTROL, DESCRIPTOR, BINDING = 3, 4, 6, 8, 29, 30
SWITCH, BOOLEAN_STATE, AIR_QUALITY, SMOKE_CO_ALARM = 59, 69, 91, 92
OPERATIONAL_STATE, RVC_OPERATIONAL_STATE = 96, 97
LAUNDRY_WASHER_MODE, RVC_RUN_MODE, RVC_CLEAN_MODE, DISHWASHER_MODE = 81, 84, 85, 89
HEPA_FILTER, VALVE = 113, 129
ELECTRICAL_POWER, ELECTRICAL_ENERGY, WATER_HEATER_MANAGEMENT = 144, 145, 148
ENERGY_EVSE, POWER_TOPOLOGY, ENERGY_EVSE_MODE, WATER_HEATER_MODE = 153, 156, 157, 158
DOOR_LOCK, WINDOW_COVERING, CLOSURE_CONTROL, CLOSURE_DIMENSION = 257, 258, 260, 261
SERVICE_AREA = 336
TEMPERATURE_CONTROL, CHIME = 86, 1366
THERMOSTAT, FAN_CONTROL = 513, 514
ILLUMINANCE, TEMPERATURE, PRESSURE, FLOW, HUMIDITY, OCCUPANCY = 1024, 1026, 1027, 1028, 1029, 1030
CO2, PM25 = 1037, 1066
FEATURE_MAP = 65532


@dataclass(frozen=True)
class Spec:
    """What the specification says a node of this kind carries on endpoint 1."""

    device_types: tuple[int, ...]
    clusters: tuple[int, ...]
    attributes: dict[str, Any] = field(default_factory=dict)


def _covering(covering_type: int, end_product: int, feature_map: int) -> Spec:
    # WindowCovering 5.3: Type (0), EndProductType (13), positions in 1/100 % (0 open).
    return Spec(
        (514,),
        (IDENTIFY, WINDOW_COVERING),
        {
            "1/258/0": covering_type,
            "1/258/13": end_product,
            f"1/258/{FEATURE_MAP}": feature_map,
            "1/258/14": 0,
        },
    )


SPECS: dict[Kind, Spec] = {
    # Generic Switch 0x000F; Switch features MS(2)+MSR(4)+MSL(8)+MSM(16) = 30.
    # On/Off Light Switch (0x0103): Identify server, a Binding server, OnOff (and
    # Identify) as client clusters (Descriptor ClientList); no binding yet.
    Kind.LIGHT_SWITCH: Spec(
        (0x0103,),
        (IDENTIFY, BINDING),
        {"1/30/0": [], "1/29/2": [IDENTIFY, ON_OFF]},
    ),
    Kind.BUTTON: Spec(
        (15,),
        (IDENTIFY, SWITCH),
        {
            "1/59/0": 2,
            "1/59/1": 0,
            "1/59/2": 3,
            f"1/59/{FEATURE_MAP}": 30,
        },
    ),
    # Water Leak Detector 0x0043, Water Freeze Detector 0x0041, Rain Sensor 0x0044,
    # Contact Sensor 0x0015: BooleanState.StateValue.
    Kind.LEAK: Spec((67,), (IDENTIFY, BOOLEAN_STATE), {"1/69/0": False}),
    Kind.FREEZE: Spec((65,), (IDENTIFY, BOOLEAN_STATE), {"1/69/0": False}),
    Kind.RAIN: Spec((68,), (IDENTIFY, BOOLEAN_STATE), {"1/69/0": False}),
    Kind.CONTACT: Spec((21,), (IDENTIFY, BOOLEAN_STATE), {"1/69/0": True}),
    # Occupancy Sensor 0x0107: Occupancy bitmap 0, type PIR (0), PIR feature bit 1.
    Kind.OCCUPANCY: Spec(
        (263,),
        (IDENTIFY, OCCUPANCY),
        {
            "1/1030/0": 0,
            "1/1030/1": 0,
            "1/1030/2": 1,
            f"1/1030/{FEATURE_MAP}": 2,
        },
    ),
    # Light Sensor 0x0106: 10000*log10(100 lux)+1.
    Kind.ILLUMINANCE: Spec(
        (262,),
        (IDENTIFY, ILLUMINANCE),
        {
            "1/1024/0": 20001,
            "1/1024/1": 1,
            "1/1024/2": 50001,
        },
    ),
    # Pressure Sensor 0x0305: 101.3 kPa in 0.1 kPa.
    Kind.PRESSURE: Spec((773,), (IDENTIFY, PRESSURE), {"1/1027/0": 1013}),
    # Flow Sensor 0x0306: 2.5 m³/h in 0.1 m³/h.
    Kind.FLOW: Spec((774,), (IDENTIFY, FLOW), {"1/1028/0": 25}),
    # Humidity Sensor 0x0307: 45.5 % in 0.01 %.
    Kind.HUMIDITY: Spec((775,), (IDENTIFY, HUMIDITY), {"1/1029/0": 4550}),
    # Temperature Sensor 0x0302: 21.35 °C in 0.01 °C.
    Kind.TEMPERATURE: Spec((770,), (IDENTIFY, TEMPERATURE), {"1/1026/0": 2135}),
    # Air Quality Sensor 0x002C: AirQuality Fair (2), features FAIR+MOD+VPOOR+XPOOR = 15;
    # CO2 612 ppm (unit 0) and PM2.5 8 µg/m³ (unit 4), numeric measurement feature (1).
    Kind.AIR_QUALITY: Spec(
        (44,),
        (IDENTIFY, AIR_QUALITY, TEMPERATURE, HUMIDITY, CO2, PM25),
        {
            "1/91/0": 2,
            f"1/91/{FEATURE_MAP}": 15,
            "1/1026/0": 2210,
            "1/1029/0": 4100,
            "1/1037/0": 612.0,
            "1/1037/8": 0,
            "1/1037/9": 0,
            f"1/1037/{FEATURE_MAP}": 1,
            "1/1066/0": 8.0,
            "1/1066/8": 4,
            "1/1066/9": 0,
            f"1/1066/{FEATURE_MAP}": 1,
        },
    ),
    # Smoke CO Alarm 0x0076: ExpressedState Normal (0), SmokeState/COState Normal,
    # features SMOKE(1)+CO(2).
    Kind.SMOKE_CO: Spec(
        (118,),
        (IDENTIFY, SMOKE_CO_ALARM),
        {
            "1/92/0": 0,
            "1/92/1": 0,
            "1/92/2": 0,
            f"1/92/{FEATURE_MAP}": 3,
        },
    ),
    # Fan 0x002B: FanMode Off, sequence Off/Low/Med/High/Auto (2), percent 0,
    # SpeedMax 3; features SPD(1)+AUT(2).
    Kind.FAN: Spec(
        (43,),
        (IDENTIFY, GROUPS, FAN_CONTROL),
        {
            "1/514/0": 0,
            "1/514/1": 2,
            "1/514/2": 0,
            "1/514/3": 0,
            "1/514/4": 3,
            f"1/514/{FEATURE_MAP}": 3,
        },
    ),
    # Air Purifier 0x002D with a HEPA filter at 87 % (Condition and Warning features: 3).
    Kind.AIR_PURIFIER: Spec(
        (45,),
        (IDENTIFY, FAN_CONTROL, HEPA_FILTER),
        {
            "1/514/0": 0,
            "1/113/0": 87,
            "1/113/1": 1,
            "1/113/2": 0,
            f"1/113/{FEATURE_MAP}": 3,
        },
    ),
    # Extractor Hood 0x007A.
    Kind.EXTRACTOR_HOOD: Spec((122,), (FAN_CONTROL, HEPA_FILTER), {"1/514/0": 0}),
    # Water Heater 0x050F: Thermostat (heat setpoint 55 °C), WaterHeaterManagement
    # (immersion element 1, boost inactive), WaterHeaterMode Manual (1).
    Kind.WATER_HEATER: Spec(
        (1295,),
        (THERMOSTAT, WATER_HEATER_MANAGEMENT, WATER_HEATER_MODE),
        {
            "1/513/0": 5200,
            "1/513/18": 5500,
            "1/148/0": 1,
            "1/148/1": 0,
            "1/148/5": 0,
            "1/158/1": 1,
        },
    ),
    # On/Off Plug-in Unit 0x010A and Electrical Sensor 0x0510: AC power mode (2),
    # 230 V, 1 A, 120 W (mV, mA, mW); 1 kWh imported (mWh); AC feature (2);
    # imported + cumulative energy features (1 + 4).
    Kind.ENERGY_PLUG: Spec(
        (266, 1296),
        (
            IDENTIFY,
            GROUPS,
            ON_OFF,
            ELECTRICAL_POWER,
            ELECTRICAL_ENERGY,
            POWER_TOPOLOGY,
        ),
        {
            "1/6/0": True,
            "1/144/0": 2,
            "1/144/4": 230_000,
            "1/144/5": 1000,
            "1/144/8": 120_000,
            f"1/144/{FEATURE_MAP}": 2,
            "1/145/1": {"0": 1_000_000},
            f"1/145/{FEATURE_MAP}": 5,
        },
    ),
    # EVSE 0x050C with Electrical Sensor 0x0510 (its power/energy measurement; 1.4 §9.3
    # composes them on one endpoint): plugged in, no demand (1); supply disabled (0); 32 A.
    Kind.EV_CHARGER: Spec(
        (1292, 1296),
        (ENERGY_EVSE, ENERGY_EVSE_MODE),
        {
            "1/153/0": 1,
            "1/153/1": 0,
            "1/153/2": 0,
            "1/153/5": 32_000,
            "1/153/6": 6000,
            "1/157/1": 0,
        },
    ),
    # Robotic Vacuum Cleaner 0x0074: docked (66), run mode Idle (0), clean mode Vacuum (1);
    # ServiceArea with the Maps feature (4), one map, three rooms.
    Kind.ROBOT_VACUUM: Spec(
        (116,),
        (
            IDENTIFY,
            RVC_RUN_MODE,
            RVC_CLEAN_MODE,
            RVC_OPERATIONAL_STATE,
            SERVICE_AREA,
        ),
        {
            "1/97/4": 66,
            "1/84/1": 0,
            "1/85/1": 1,
            f"1/336/{FEATURE_MAP}": 4,
            "1/336/1": [{"0": 1, "1": "Ground floor"}],
            "1/336/2": [],
        },
    ),
    # Laundry Washer 0x0073 / Dishwasher 0x0075: OperationalState Stopped (0).
    Kind.LAUNDRY_WASHER: Spec(
        (115,),
        (OPERATIONAL_STATE, LAUNDRY_WASHER_MODE),
        {
            "1/96/4": 0,
            "1/81/1": 0,
        },
    ),
    Kind.DISHWASHER: Spec((117,), (OPERATIONAL_STATE, DISHWASHER_MODE), {"1/96/4": 0, "1/89/1": 0}),
    # Window Covering 0x0202; features LF(1)+PA_LF(4) = 5, with TL(2)+PA_TL(16) = 23.
    Kind.ROLLER_SHADE: _covering(0, 0, 5),
    Kind.DRAPERY: _covering(4, 16, 5),
    Kind.AWNING: _covering(5, 19, 5),
    Kind.SHUTTER: _covering(6, 17, 5),
    Kind.VENETIAN_BLIND: _covering(8, 13, 23),
    # Closure 0x0230 (Matter 1.5): ClosureControl Positioning (1); MainState Stopped (0),
    # no errors, OverallCurrentState fully closed (Position 0) and secure (SecureState 3).
    Kind.GARAGE_DOOR: Spec(
        (560,),
        (IDENTIFY, CLOSURE_CONTROL),
        {
            "1/260/1": 0,
            "1/260/2": [],
            "1/260/3": {"0": 0, "3": True},
            f"1/260/{FEATURE_MAP}": 1,
        },
    ),
    # Closure Panel 0x0231 (Matter 1.5): ClosureDimension Positioning (1); CurrentState and
    # TargetState fully closed (Position 10000 = 100.00 %), Resolution 1.00 %, StepValue 10 %.
    Kind.CLOSURE_PANEL: Spec(
        (561,),
        (CLOSURE_DIMENSION,),
        {
            "1/261/0": {"0": 10000},
            "1/261/1": {"0": 10000},
            "1/261/2": 100,
            "1/261/3": 1000,
            f"1/261/{FEATURE_MAP}": 1,
        },
    ),
    # Door Lock 0x000A: locked (1), deadbolt (0), actuator enabled.
    Kind.DOOR_LOCK: Spec(
        (10,),
        (IDENTIFY, DOOR_LOCK),
        {
            "1/257/0": 1,
            "1/257/1": 0,
            "1/257/2": True,
        },
    ),
    # Water Valve 0x0042: closed (0), default open duration 600 s.
    Kind.WATER_VALVE: Spec((66,), (IDENTIFY, VALVE), {"1/129/1": 600, "1/129/4": 0, "1/129/5": 0}),
    # Chime 0x0146 (Matter 1.4): InstalledChimeSounds (ChimeID, Name), SelectedChime 1,
    # Enabled.
    Kind.CHIME: Spec(
        (326,),
        (CHIME,),
        {
            "1/1366/0": [
                {"0": 0, "1": "Ding Dong"},
                {"0": 1, "1": "Westminster"},
                {"0": 2, "1": "Birdsong"},
            ],
            "1/1366/1": 1,
            "1/1366/2": True,
        },
    ),
    # Cook Surface 0x0077: OnOff (OffOnly feature, 4), TemperatureControl with the
    # TemperatureLevel feature (2): SelectedTemperatureLevel 0 of three named levels;
    # TemperatureMeasurement 120.00 C.
    Kind.COOK_SURFACE: Spec(
        (119,),
        (ON_OFF, TEMPERATURE_CONTROL, TEMPERATURE),
        {
            "1/6/0": True,
            f"1/6/{FEATURE_MAP}": 4,
            "1/86/4": 0,
            "1/86/5": ["Low", "Medium", "High"],
            f"1/86/{FEATURE_MAP}": 2,
            "1/1026/0": 12000,
        },
    ),
    # Speaker 0x0022: OnOff is its mute (on = sound), LevelControl its volume (1-254),
    # here 127 with Options ExecuteIfOff (bit 0) so a muted speaker's volume can be set.
    Kind.SPEAKER: Spec(
        (34,),
        (ON_OFF, LEVEL_CONTROL),
        {"1/6/0": True, "1/8/0": 127, "1/8/2": 1, "1/8/3": 254, "1/8/15": 1},
    ),
}


class Ws:
    """A raw JSON client of python-matter-server's WebSocket API."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    async def call(self, command: str, timeout_s: float = 90.0, **args: Any) -> Any:
        message_id = str(next(self._ids))
        await self.ws.send_json({"message_id": message_id, "command": command, "args": args})
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.ws.receive_json()
                if msg.get("message_id") == message_id:
                    if "error_code" in msg:
                        raise AssertionError(f"{command} failed: {msg}")
                    return msg.get("result")
                if "event" in msg:
                    self.events.append(msg)

    async def next_event(self, timeout_s: float) -> dict[str, Any]:
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.ws.receive_json()
                if "event" in msg:
                    return msg  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def _connect(url: str, headers: dict[str, str]) -> AsyncIterator[Ws]:
    # The controller answers only clients sending its per-run key (controller_guard).
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, max_msg_size=0, headers=headers) as ws,
    ):
        await ws.receive_json()  # server info
        yield Ws(ws)


@dataclass
class Commissioned:
    """One kind's running device and the node the controller recorded for it."""

    device: VirtualDevice
    node: dict[str, Any]

    @property
    def node_id(self) -> int:
        return int(self.node["node_id"])


def _start_all(host: DeviceHost, kinds: list[Kind]) -> dict[Kind, HostedDevice]:
    """Start one device per kind, all in one device host (matter.js loads once)."""
    devices: dict[Kind, HostedDevice] = {}
    for i, kind in enumerate(kinds):
        devices[kind] = host.device(
            kind,
            id=f"kind-{kind.value}",
            port=6100 + i,
            passcode=20203001 + i,
            # Distinct full discriminators (commissioned by QR code, which carries all 12
            # bits), none ending in 0x0A like the fabric factory's, so no device of another
            # test answers for one of these.
            discriminator=0xE40 + i,
            label=f"Test {kind.value}",
        )
    host.start_all(devices.values())
    return devices


async def _commission_all(
    url: str, headers: dict[str, str], devices: dict[Kind, VirtualDevice]
) -> dict[Kind, Any]:
    nodes: dict[Kind, Any] = {}
    async with _connect(url, headers) as ws:
        for kind, dev in devices.items():
            assert dev.pairing is not None, f"{kind} printed no pairing codes"
            nodes[kind] = await ws.call(
                "commission_with_code", timeout_s=180, code=dev.pairing.qr, network_only=True
            )
    return nodes


@pytest.fixture(scope="module")
def kinds(
    fabric: Fabric, matter_controller: ThreadedController
) -> Iterator[dict[Kind, Commissioned]]:
    """Every kind started and commissioned by the session controller."""
    started = time.monotonic()
    with device_host(fabric, "kinds-host") as host:
        devices = _start_all(host, KINDS)
        nodes = asyncio.run(
            _commission_all(matter_controller.url, matter_controller.headers, devices)
        )
        print(
            f"{len(devices)} kinds started and commissioned in {time.monotonic() - started:.0f} s"
        )
        yield {kind: Commissioned(devices[kind], nodes[kind]) for kind in KINDS}


def test_every_kind_has_a_spec() -> None:
    assert sorted(SPECS) == sorted(KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=[k.value for k in KINDS])
def test_kind_matches_the_device_library(kinds: dict[Kind, Commissioned], kind: Kind) -> None:
    spec = SPECS[kind]
    attributes = kinds[kind].node["attributes"]
    assert kinds[kind].node["available"] is True
    # The root endpoint lists endpoint 1 as its only part; endpoint 1 carries the device type(s).
    assert attributes["0/29/3"] == [1]
    device_types = sorted(entry["0"] for entry in attributes["1/29/0"])
    assert device_types == sorted(spec.device_types)
    servers = set(attributes["1/29/1"])
    missing = set(spec.clusters) - servers
    assert not missing, f"{kind}: clusters {sorted(missing)} missing from {sorted(servers)}"
    for path, expected in spec.attributes.items():
        assert path in attributes, f"{kind}: {path} not reported"
        assert attributes[path] == expected, f"{kind}: {path} is {attributes[path]!r}"
    # The controller decoded every cluster the endpoint serves (no unknown placeholders).
    for cluster in servers:
        assert f"1/{cluster}/{FEATURE_MAP}" in attributes, f"{kind}: cluster {cluster} unread"


def test_robot_vacuum_rooms_by_name(kinds: dict[Kind, Commissioned]) -> None:
    areas = kinds[Kind.ROBOT_VACUUM].node["attributes"]["1/336/0"]
    # AreaStruct: 0 AreaID, 1 MapID, 2 AreaInfo{0 LocationInfo{0 LocationName}}.
    named = [(a["0"], a["1"], a["2"]["0"]["0"]) for a in areas]
    assert named == [(1, 1, "Kitchen"), (2, 1, "Living room"), (3, 1, "Bedroom")]


# The primary function of kinds whose commands the device script implements: the
# controller sends the command, the device itself reports the result (its STATE line).
# Payload field names are the SDK's; Matter requires a timed invoke for lock and EVSE.
COMMANDS = [
    (
        Kind.ROBOT_VACUUM,
        [
            (
                SERVICE_AREA,
                "SelectAreas",
                {"newAreas": [1, 3]},
                ("serviceArea", "selectedAreas", [1, 3]),
            ),
            (
                RVC_RUN_MODE,
                "ChangeToMode",
                {"newMode": 1},
                ("rvcOperationalState", "operationalState", 1),
            ),
            (RVC_OPERATIONAL_STATE, "Pause", {}, ("rvcOperationalState", "operationalState", 2)),
            (RVC_OPERATIONAL_STATE, "Resume", {}, ("rvcOperationalState", "operationalState", 1)),
            (RVC_OPERATIONAL_STATE, "GoHome", {}, ("rvcOperationalState", "operationalState", 66)),
            (RVC_CLEAN_MODE, "ChangeToMode", {"newMode": 2}, ("rvcCleanMode", "currentMode", 2)),
        ],
    ),
    (
        Kind.LAUNDRY_WASHER,
        [
            (
                LAUNDRY_WASHER_MODE,
                "ChangeToMode",
                {"newMode": 1},
                ("laundryWasherMode", "currentMode", 1),
            ),
            (OPERATIONAL_STATE, "Start", {}, ("operationalState", "operationalState", 1)),
            (OPERATIONAL_STATE, "Pause", {}, ("operationalState", "operationalState", 2)),
            (OPERATIONAL_STATE, "Stop", {}, ("operationalState", "operationalState", 0)),
        ],
    ),
    (
        Kind.DISHWASHER,
        [
            (OPERATIONAL_STATE, "Start", {}, ("operationalState", "operationalState", 1)),
        ],
    ),
    (
        Kind.WATER_VALVE,
        [
            (VALVE, "Open", {}, ("valveConfigurationAndControl", "currentState", 1)),
            (VALVE, "Close", {}, ("valveConfigurationAndControl", "currentState", 0)),
        ],
    ),
    (
        Kind.GARAGE_DOOR,
        [
            (
                CLOSURE_CONTROL,
                "MoveTo",
                {"position": 1},
                ("closureControl", "overallCurrentState", {"position": 1, "secureState": False}),
            ),
        ],
    ),
    (Kind.DOOR_LOCK, [(DOOR_LOCK, "UnlockDoor", {}, ("doorLock", "lockState", 2))]),
    (
        Kind.DRAPERY,
        [
            (
                WINDOW_COVERING,
                "GoToLiftPercentage",
                {"liftPercent100thsValue": 10000},
                ("windowCovering", "currentPositionLiftPercent100ths", 10000),
            ),
        ],
    ),
    (
        Kind.VENETIAN_BLIND,
        [
            (
                WINDOW_COVERING,
                "GoToTiltPercentage",
                {"tiltPercent100thsValue": 5000},
                ("windowCovering", "currentPositionTiltPercent100ths", 5000),
            ),
        ],
    ),
    (
        Kind.WATER_HEATER,
        [
            (
                WATER_HEATER_MANAGEMENT,
                "Boost",
                {"boostInfo": {"duration": 600}},
                ("waterHeaterManagement", "boostState", 1),
            ),
        ],
    ),
    (
        Kind.EV_CHARGER,
        [
            (
                ENERGY_EVSE,
                "EnableCharging",
                {
                    "chargingEnabledUntil": None,
                    "minimumChargeCurrent": 6000,
                    "maximumChargeCurrent": 16000,
                },
                ("energyEvse", "supplyState", 1),
            ),
            (ENERGY_EVSE, "Disable", {}, ("energyEvse", "supplyState", 0)),
        ],
    ),
]
TIMED = {DOOR_LOCK, ENERGY_EVSE, CLOSURE_CONTROL}


@pytest.mark.parametrize(("kind", "steps"), COMMANDS, ids=[k.value for k, _ in COMMANDS])
async def test_primary_function_through_the_controller(
    kinds: dict[Kind, Commissioned],
    matter_controller: ThreadedController,
    kind: Kind,
    steps: list[tuple[int, str, dict[str, Any], tuple[str, str, Any]]],
) -> None:
    target = kinds[kind]
    async with _connect(matter_controller.url, matter_controller.headers) as ws:
        for cluster, command, payload, (behavior, attribute, value) in steps:
            mark = target.device.mark()
            timed = {"timed_request_timeout_ms": 5000} if cluster in TIMED else {}
            await ws.call(
                "device_command",
                node_id=target.node_id,
                endpoint_id=1,
                cluster_id=cluster,
                command_name=command,
                payload=payload,
                **timed,
            )
            await asyncio.to_thread(
                target.device.wait_state, behavior, attribute, value, since=mark, timeout_s=15
            )


async def test_fan_current_follows_the_setting(
    kinds: dict[Kind, Commissioned], matter_controller: ThreadedController
) -> None:
    fan = kinds[Kind.FAN]
    async with _connect(matter_controller.url, matter_controller.headers) as ws:
        mark = fan.device.mark()
        result = await ws.call(
            "write_attribute", node_id=fan.node_id, attribute_path="1/514/2", value=50
        )
        assert [entry["Status"] for entry in result] == [0]
        await asyncio.to_thread(
            fan.device.wait_state, "fanControl", "percentCurrent", 50, since=mark, timeout_s=15
        )
        # FanMode High (3) moves the setting to 100 % and the fan follows.
        await ws.call("write_attribute", node_id=fan.node_id, attribute_path="1/514/0", value=3)
        await asyncio.to_thread(
            fan.device.wait_state, "fanControl", "percentCurrent", 100, since=mark, timeout_s=15
        )
        read = await ws.call("read_attribute", node_id=fan.node_id, attribute_path="1/514/3")
        assert read == {"1/514/3": 100}


async def test_button_press_arrives_as_node_events(
    kinds: dict[Kind, Commissioned], matter_controller: ThreadedController
) -> None:
    button = kinds[Kind.BUTTON]
    async with _connect(matter_controller.url, matter_controller.headers) as ws:
        await ws.call("start_listening", timeout_s=120)
        pressed = time.monotonic()
        await asyncio.to_thread(button.device.press)  # SIGUSR1: one short press
        events: list[dict[str, Any]] = []
        first_at = None
        while not any(e["event_id"] == 6 for e in events):
            msg = await ws.next_event(timeout_s=10)
            data = msg["data"]
            if msg["event"] == "node_event" and data["node_id"] == button.node_id:
                first_at = first_at or time.monotonic()
                events.append(data)
    # Switch events (spec 1.13.7): InitialPress 1, ShortRelease 3, MultiPressComplete 6;
    # event data is keyed by field name.
    assert [(e["endpoint_id"], e["cluster_id"], e["event_id"]) for e in events] == [
        (1, 59, 1),
        (1, 59, 3),
        (1, 59, 6),
    ]
    assert events[0]["data"] == {"newPosition": 1}
    assert events[1]["data"] == {"previousPosition": 1}
    assert events[2]["data"] == {"previousPosition": 1, "totalNumberOfPressesCounted": 1}
    assert first_at is not None
    print(f"first press event {first_at - pressed:.2f} s after the press")
