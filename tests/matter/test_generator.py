"""MatterToolGenerator over every recorded node dump: names, schemas, exact Matter requests."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from bridge.errors import InvalidParamsError, NotFoundError
from bridge.matter import load_cluster_maps
from bridge.matter.home.devices import SLUG_RE, build_devices
from bridge.matter.spec.commands import build_command
from bridge.matter.spec.models import ActionKind, NodeData
from bridge.matter.tools.generator import (
    MatterToolGenerator,
    ToolKind,
    cached_values,
    capability_of,
    find_tool,
)
from bridge.tools.validation import validate_call as validate_params
from tests.matter.dumps import DUMP_FILES, DUMP_IDS, load_dump
from tests.matter.sdk import sdk_command

MAPS = load_cluster_maps()

LIGHT = ["on", "off", "toggle", "state"]
DIM = ["brightness", "on", "off", "toggle", "state"]
THERMO = ["set_temperature", "set_mode", "adjust_temperature", "state"]
COVER = ["open", "close", "stop", "set_position", "set_tilt", "state"]
QUERY = ["core:query_sensor", "matter:control_matter_device"]
GENERIC = ["matter:control_matter_device"]
SURFACE = ["off", "set_temperature_level", "state"]

# dump -> {slug: [tool suffixes in generation order]}, plus the shared tools.
EXPECTED: dict[str, tuple[dict[str, list[str]], list[str]]] = {
    # Issue 29's kinds, each checked against the Matter 1.4 device library (1.5 for the
    # closure): the air purifier's fan is attribute writes (mode from FanModeSequence 2,
    # percent, 10 speed steps) and it resets its two filters; its air-quality, temperature,
    # humidity endpoints are read only; the thermostat endpoint is a thermostat.
    "ha-core/air_purifier": (
        {
            "air_purifier": [
                "reset_carbon_filter",
                "set_fan_mode",
                "set_fan_speed",
                "set_fan_step",
                "reset_hepa_filter",
                "state",
            ],
            "air_purifier_air_quality_sensor": ["state"],
            "air_purifier_temperature_sensor": ["state"],
            "air_purifier_humidity_sensor": ["state"],
            "air_purifier_thermostat": THERMO,
        },
        QUERY,
    ),
    # The lock's battery sits on an endpoint of its own (Power Source): a device to read.
    "ha-core/aqara_u200": (
        {
            "aqara_smart_lock_u200": ["lock", "unlock", "state"],
            "aqara_smart_lock_u200_battery": ["state"],
        },
        QUERY,
    ),
    # A bridged Electrical Sensor endpoint is an energy meter (it used to give 0 devices).
    "ha-core/atios_knx_bridge": ({"energy_meter_electricity_monitor_ac": ["state"]}, QUERY),
    # Its ModeSelect ("Lighting": Dark, Medium, Light) is a mode any device may carry.
    "ha-core/color_temperature_light": (
        {
            "mock_color_temperature_light": [
                "color_temperature",
                "brightness",
                "select_mode",
                "on",
                "off",
                "toggle",
                "state",
            ]
        },
        ["matter:control_matter_device"],
    ),
    "ha-core/eberle_ute3000": (
        {"connected_thermostat_ute_3000": THERMO},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    # RVC: clean mode by the robot's names, Pause/Resume/GoHome (its AcceptedCommandList
    # 0, 3, 128), start/stop by the run modes tagged Cleaning / Idle, rooms by name.
    "ha-core/eufy_vacuum_omni_e28": (
        {
            "eufy_robot_vacuum_omni_e28": [
                "set_clean_mode",
                "pause",
                "resume",
                "return_to_base",
                "start",
                "stop",
                "clean_areas",
                "state",
            ]
        },
        QUERY,
    ),
    "ha-core/eve_contact_sensor": (
        {"contact_sensor_eve_door": ["state"]},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    "ha-core/eve_thermo_v4": (
        {"thermostat_eve_thermo_20ebp1701": THERMO},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    "ha-core/eve_weather_sensor": (
        {"eve_weather_temperature_sensor": ["state"], "eve_weather_humidity_sensor": ["state"]},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    "ha-core/evse_charging": (
        {
            "ev_charger_mock_evse": [
                "enable_charging",
                "disable_charging",
                "set_charging_mode",
                "state",
            ]
        },
        QUERY,
    ),
    # FanModeSequence 0 (off/low/medium/high), no MultiSpeed feature: no speed steps.
    "ha-core/extractor_hood": (
        {
            "mock_extractor_hood": [
                "reset_carbon_filter",
                "set_fan_mode",
                "set_fan_speed",
                "reset_hepa_filter",
                "state",
            ]
        },
        GENERIC,
    ),
    "ha-core/flow_sensor": ({"mock_flow_sensor": ["state"]}, QUERY),
    # Generic switches: their presses are events (on /v1/events), not tools.
    "ha-core/generic_switch_multi": (
        {"mock_generic_switch_1": [], "mock_generic_switch_2": []},
        GENERIC,
    ),
    "ha-core/heiman_co_sensor": ({"smoke_alarm_smart_co_sensor": ["state"]}, QUERY),
    "ha-core/heiman_smoke_detector": (
        {"smoke_sensor": ["state"]},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    # The monitor's OnOff (its display) is not an Air Quality Sensor control: no on/off.
    "ha-core/ikea_air_quality_monitor": ({"alpstuga_air_quality_monitor": ["state"]}, QUERY),
    "ha-core/ikea_bilresa_dual_button": (
        {"bilresa_dual_button_switch_1": [], "bilresa_dual_button_switch_2": []},
        GENERIC,
    ),
    "ha-core/laundrywasher": (
        {
            "laundry_washer": [
                "set_cycle",
                "on",
                "off",
                "toggle",
                "start",
                "stop",
                "pause",
                "resume",
                "set_temperature_level",  # Low, Medium, High
                "state",
            ]
        },
        GENERIC,
    ),
    "ha-core/leak_sensor": ({"water_leak_detector": ["state"]}, QUERY),
    "ha-core/longan_link_thermostat": (
        {
            "thermostat_longan_link_hvac": [
                "set_fan_mode",
                "set_fan_speed",
                "on",
                "off",
                "toggle",
                *THERMO,
            ]
        },
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    # MicrowaveOvenMode accepts no command (AcceptedCommandList []): no set_mode.
    "ha-core/microwave_oven": (
        {"microwave_oven": ["cook", "start", "stop", "pause", "resume", "state"]},
        GENERIC,
    ),
    "ha-core/mock_closure_garage_door": (
        {"matter_closure": ["open", "close", "stop", "state"]},
        GENERIC,
    ),
    "ha-core/mock_composed_bridge": (
        {"kitchen_plug": LIGHT, "kitchen_plug_temperature_sensor": ["state"]},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    "ha-core/mock_dimmable_light": ({"mock_dimmable_light": DIM}, ["matter:control_matter_device"]),
    # A Door Lock is not controlled through OnOff (device library): no on/off/toggle.
    "ha-core/mock_door_lock": (
        {"mock_door_lock": ["lock", "unlock", "state"]},
        ["matter:control_matter_device"],
    ),
    "ha-core/mock_fan": (
        {"mocked_fan_switch": ["set_fan_mode", "set_fan_speed", "set_fan_step", "state"]},
        ["matter:control_matter_device"],
    ),
    "ha-core/mock_onoff_light": ({"mock_onoff_light": LIGHT}, ["matter:control_matter_device"]),
    "ha-core/mock_solar_inverter": ({"mock_solar_inverter": ["state"]}, QUERY),
    "ha-core/mock_valve": ({"mock_valve": ["open", "close", "state"]}, GENERIC),
    # A Matter 1.4 chime: play its selected sound; its sounds by name.
    "ha-core/mock_chime": ({"mock_chime": ["play", "state"]}, GENERIC),
    # A cooktop (on/off) with one cook surface set by its named temperature levels.
    "ha-core/mock_cooktop": (
        {"mock_cooktop": ["off", "state"], "mock_cooktop_cook_surface": SURFACE},
        QUERY,
    ),
    # A doorbell's presses are Switch events (device.event, core:wait_for_event): no tool.
    "ha-core/mock_doorbell": ({"mock_doorbell": []}, GENERIC),
    # An oven: the cavity starts and stops (OvenCavityOperationalState), its mode and its
    # temperature are set; the cooktop and its cook surface as above.
    "ha-core/mock_oven": (
        {
            "mock_oven": [],
            "mock_oven_cabinet": ["start", "stop", "set_mode", "set_temperature", "state"],
            "mock_oven_cooktop": ["off", "state"],
            "mock_oven_cook_surface": SURFACE,
        },
        QUERY,
    ),
    # A pump without the ConstantSpeed or LocalOperation features runs in "normal" mode
    # only: its mode, whether it runs and its speed are read, no mode to set.
    "ha-core/mock_pump": ({"mock_pump": ["setpoint", "on", "off", "toggle", "state"]}, QUERY),
    # A speaker: LevelControl is its volume and OnOff its mute (off is muted), never a
    # light's brightness or on/off.
    "ha-core/mock_speaker": (
        {"mock_speaker": ["volume", "mute", "unmute", "state"]},
        GENERIC,
    ),
    "ha-core/mock_thermostat": (
        {"mock_thermostat": THERMO},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    "ha-core/mock_window_covering_full": (
        {"blind_mock_full_window_covering": COVER},
        ["matter:control_matter_device"],
    ),
    "ha-core/pressure_sensor": ({"mock_pressure_sensor": ["state"]}, QUERY),
    "ha-core/resideo_x2s_thermostat": (
        {"x2s_smart_thermostat": THERMO},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
    # SupportedModes is null on the dishwasher: no cycle tool (no names to offer).
    "ha-core/silabs_dishwasher": (
        {"dishwasher": ["start", "stop", "pause", "state"], "dishwasher_energy_meter": ["state"]},
        QUERY,
    ),
    # A Refrigerator is not controlled through OnOff; its cabinets set their temperature.
    "ha-core/silabs_refrigerator": (
        {
            "refrigerator_fridge": ["set_mode", "state"],
            "refrigerator_cabinet_2": ["set_temperature", "state"],
            "refrigerator_cabinet_3": ["set_temperature", "state"],
        },
        GENERIC,
    ),
    "ha-core/wago_home_blind_control": (
        {
            "home_blind_wi_fi": COVER,
            "home_blind_wi_fi_switch_2": [],
            "home_blind_wi_fi_switch_3": [],
        },
        ["matter:control_matter_device"],
    ),
    "ha-core/yandex_smart_socket": ({"plug_yndx_00540": LIGHT}, ["matter:control_matter_device"]),
    "matterjs-commissioned/node-1-onoff": (
        {"light_test_onoff": LIGHT},
        ["matter:control_matter_device"],
    ),
    "matterjs-commissioned/node-2-dimmable": (
        {"light_test_dimmable": DIM},
        ["matter:control_matter_device"],
    ),
    "matterjs-commissioned/node-3-color": (
        {"light_test_color": ["set_color", "color_temperature", *DIM]},
        ["matter:control_matter_device"],
    ),
    "matterjs-commissioned/node-4-thermostat": (
        {"test_thermostat": THERMO},
        ["core:query_sensor", "matter:control_matter_device"],
    ),
}

# One example call per tool suffix, in human units.
EXAMPLES: dict[str, dict[str, Any]] = {
    "brightness": {"percent": 30},
    "set_color": {"color": "orange"},
    "color_temperature": {"kelvin": 2700},
    "set_temperature": {"celsius": 21.5},
    "set_mode": {"mode": "heat"},
    "adjust_temperature": {"degrees": 1.5},
    "set_position": {"percent_open": 25},
    "set_tilt": {"percent_open": 40},
    "lock": {"pin_code": "1234"},
    "set_fan_mode": {"mode": "high"},
    "set_fan_speed": {"percent": 40},
    "set_fan_step": {"speed": 0},
    "cook": {"minutes": 2},
    "boost": {"minutes": 30},
    "open": {},
    "set_temperature_level": {"level": "High"},
    "setpoint": {"percent": 60},
    "volume": {"percent": 40},
}


def example(tool: Any) -> dict[str, Any]:
    """Return an example call: EXAMPLES by suffix, else the device's own choices."""
    name = tool.definition.name
    params = next((dict(v) for k, v in EXAMPLES.items() if name.endswith(k)), {})
    properties = tool.definition.parameters["properties"]
    if "mode" in properties and "enum" in properties["mode"]:
        params = {"mode": properties["mode"]["enum"][-1]}
    if "areas" in properties:
        params = {"areas": properties["areas"]["items"]["enum"][:2]}
    for unit in ("celsius", "fahrenheit"):
        if unit in properties and "maximum" in properties[unit] and name.endswith("temperature"):
            params = {unit: properties[unit]["maximum"]}
    return params


def generate(name: str, unit: str = "C") -> tuple[list[Any], list[Any]]:
    devices = build_devices([NodeData.from_json(load_dump(name))])
    tools = MatterToolGenerator(MAPS, node_id="node-a", unit=unit).generate(devices)
    return devices, tools


def test_every_dump_has_expectations() -> None:
    assert sorted(EXPECTED) == DUMP_IDS
    assert len(DUMP_FILES) == 47


@pytest.mark.parametrize("name", DUMP_IDS)
def test_tool_names_per_dump(name: str) -> None:
    devices, tools = generate(name)
    per_device, shared = EXPECTED[name]
    assert [d.slug for d in devices] == list(per_device)
    for device in devices:
        assert SLUG_RE.match(device.slug)
        names = [t.definition.name for t in tools if t.device_id == device.id]
        assert names == [f"{device.slug}_{s}" for s in per_device[device.slug]]
    assert [t.definition.key for t in tools if t.device_id is None] == shared


@pytest.mark.parametrize("name", DUMP_IDS)
def test_definitions_carry_permissions_routing_and_matter_metadata(name: str) -> None:
    devices, tools = generate(name)
    by_id = {d.id: d for d in devices}
    for tool in tools:
        defn = tool.definition
        assert defn.requires.capabilities == ("matter_bridge",)
        assert defn.routing.prefer_local is True
        assert defn.routing.node_affinity == ("node-a",)
        assert defn.routing.hop_limit == 1
        if tool.device_id is None:
            continue
        device = by_id[tool.device_id]
        assert defn.namespace == "matter"
        matter = defn.metadata["matter"]
        assert (matter["node_id"], matter["endpoint_id"]) == (device.node_id, device.endpoint_id)
        if tool.kind is ToolKind.STATE:
            assert defn.category.value == "sensing"
            assert defn.requires.permissions == (f"device:read:{device.id}",)
        else:
            assert defn.category.value == "acting"
            assert defn.requires.permissions == (f"device:control:{device.id}",)
            assert ("command" in matter) != ("attribute" in matter)
        assert device.name in defn.description


@pytest.mark.parametrize("name", DUMP_IDS)
def test_every_action_builds_with_the_sdk_classes(name: str) -> None:
    """Each tool's example call plans commands that chip.clusters accepts as they are.

    The payload ``build_command`` checked is parsed exactly as the controller parses a
    ``device_command`` (``dataclass_from_dict`` into the SDK's command class).
    """
    _devices, tools = generate(name)
    for tool in tools:
        if tool.kind is not ToolKind.ACTION:
            continue
        params = validate_params(tool.definition, copy.deepcopy(example(tool)))
        actions = tool.plan(params)
        assert actions, tool.definition.name
        matter = tool.definition.metadata["matter"]
        for action in actions:
            if action.kind is ActionKind.COMMAND:
                # A command on another cluster of the endpoint is named "Cluster.Command".
                commands = (
                    matter["command"]
                    if isinstance(matter["command"], list)
                    else [matter["command"]]
                )
                qualified = f"{action.cluster}.{action.name}"
                assert (action.name in commands and action.cluster == matter["cluster"]) or (
                    qualified in commands
                )
                sdk_command(build_command(action.cluster, action.name, action.payload))
            else:
                assert action.cluster == matter["cluster"]
                targets = matter["attribute"]
                assert action.name in (targets if isinstance(targets, list) else [targets])


@pytest.mark.parametrize("name", DUMP_IDS)
def test_state_reads_recorded_values_in_human_units(name: str) -> None:
    devices, tools = generate(name)
    for tool in tools:
        if tool.kind is not ToolKind.STATE:
            continue
        device = next(d for d in devices if d.id == tool.device_id)
        reads = tool.plan({})
        paths = {p for r in reads for p in r.paths}
        assert all(r.kind is ActionKind.READ for r in reads)
        state = tool.state_from(cached_values(device))
        # Recorded devices are at rest: no transition fields (``moving``, a target).
        assert list(state) == [p.field.field for p in tool.state if not p.field.motion]
        assert paths  # every state tool reads at least one attribute


STATES = {
    "ha-core/aqara_u200": {"lock_state": "locked"},
    # ModeSelect CurrentMode 0 is the mode labelled "Dark".
    "ha-core/color_temperature_light": {
        "color_mode": "hue_saturation",
        "color_temperature_kelvin": 3521,
        "brightness_percent": 50,
        "selected_mode": "Dark",
        "on": True,
    },
    "ha-core/eve_weather_sensor": {"temperature": 16.03},
    "ha-core/mock_thermostat": {
        "temperature": 18.0,
        "heating_setpoint": 20.0,
        "cooling_setpoint": 26.0,
        "mode": "auto",
    },
    "ha-core/longan_link_thermostat": {
        "fan_mode": "off",
        "fan_speed_percent": 0,
        "on": True,
        "temperature": 28.3,
        "heating_setpoint": None,
        "cooling_setpoint": None,
        "mode": "cool",
    },
    "matterjs-commissioned/node-3-color": {
        "color_mode": "color_temperature",
        "color": {"hue": 170, "saturation": 79},
        "color_xy": {"x": 0.3805, "y": 0.3769},
        "color_temperature_kelvin": 3333,
        "brightness_percent": 30,
        "on": True,
    },
    # WindowCovering Type 6 = Shutter, 8 = TiltBlindLiftAndTilt (spec 5.3.5.2).
    "ha-core/mock_window_covering_full": {
        "covering_type": "shutter",
        "percent_open": 100.0,
        "tilt_percent_open": 100.0,
    },
    "ha-core/wago_home_blind_control": {
        "covering_type": "tilt_blind",
        "percent_open": 100.0,
        "tilt_percent_open": 100.0,
    },
    # Issue 29's kinds, from the recorded values and the specification's units and enums:
    # AirQuality 1 = Good; CO2 394 with MeasurementUnit 0 = ppm, PM2.5 with 4 = µg/m³;
    # LevelValue 1 = Low; humidity 4621 = 46.21 %; temperature 1971 = 19.71 °C.
    "ha-core/ikea_air_quality_monitor": {
        "air_quality": "good",
        "co2": {"value": 394.0, "unit": "ppm"},
        "co2_level": "low",
        "pm25": {"value": 0.0, "unit": "µg/m³"},
        "pm25_level": "low",
        "humidity_percent": 46.21,
        "temperature": 19.71,
    },
    # Exported 42279000 mWh = 42.279 kWh; ActivePower -850000 mW = -850 W (feeding in);
    # Voltage 234899 mV = 234.9 V; ActiveCurrent -3620 mA = -3.62 A.
    "ha-core/mock_solar_inverter": {
        "energy_exported_kwh": 42.279,
        "power_w": -850.0,
        "voltage_v": 234.9,
        "current_a": -3.62,
    },
    # BatPercentRemaining 200 (half percent) = 100 %; BatChargeLevel 0 = OK; clean mode 0
    # is "Auto Mop & Vacuum", run mode 0 "Idle"; OperationalState 0 = Stopped, no error.
    "ha-core/eufy_vacuum_omni_e28": {
        "battery_percent": 100.0,
        "battery_level": "ok",
        "clean_mode": "Auto Mop & Vacuum",
        "status": "stopped",
        "error": None,
        "run_mode": "Idle",
        "selected_areas": [],
        "current_area": None,
    },
    # COState 0 = Normal; CO concentration 0 ppm; BatteryAlert 0 = Normal.
    "ha-core/heiman_co_sensor": {
        "co": {"value": 0.0, "unit": "ppm"},
        "battery_percent": 100.0,
        "battery_level": "ok",
        "co_alarm": "normal",
        "battery_alert": "normal",
    },
    # A Water Leak Detector's StateValue true = leak.
    "ha-core/leak_sensor": {"leak": True},
    # EVSE State 3 = PluggedInCharging, SupplyState 1 = ChargingEnabled, mode 1 named
    # "Auto-scheduled"; no power or energy recorded.
    "ha-core/evse_charging": {
        "energy_kwh": None,
        "energy_exported_kwh": None,
        "power_w": None,
        "voltage_v": None,
        "current_a": None,
        "charger_state": "charging",
        "supply": "charging_enabled",
        "session_energy_kwh": 0.0,
        "charging_mode": "Auto-scheduled",
    },
    # CookTime 30 s, CountdownTime 30 s; mode 0 "Normal".
    "ha-core/microwave_oven": {
        "cook_minutes": 0.5,
        "mode": "Normal",
        "status": "stopped",
        "error": None,
        "minutes_left": 0.5,
    },
    # OverallCurrentState.Position 1 = FullyOpened, MainState 0 = Stopped (Matter 1.5).
    "ha-core/mock_closure_garage_door": {"closure": "open", "motion": "stopped"},
    "ha-core/mock_valve": {"valve": "closed", "minutes_until_closed": None},
    # SelectedChime 0 of InstalledChimeSounds (ChimeID, Name) structs; Enabled true.
    "ha-core/mock_chime": {
        "sound": "Classic Ding Dong",
        "sounds": ["Classic Ding Dong", "Merry Melodies", "Digital Alert"],
        "enabled": True,
    },
    # OperationMode 0 = Normal, PumpStatus 0x20 = Running, Speed 1000 rpm; CurrentLevel 200
    # is the pump scale's top (1-200 = 0.5-100 %), not 79 % of a light's 254.
    "ha-core/mock_pump": {
        "flow_m3h": 5.0,
        "setpoint_percent": 100.0,
        "on": True,
        "pressure_hpa": 100,
        "pump_mode": "normal",
        "effective_pump_mode": "normal",
        "running": True,
        "speed_rpm": 1000,
        "temperature": 60.0,
    },
    # OnOff false: muted; CurrentLevel 1 of MinLevel 1 - MaxLevel 254: the volume's bottom.
    "ha-core/mock_speaker": {"muted": True, "volume_percent": 0},
    # The freezer cabinet's TemperatureSetpoint -1800 = -18 °C (the fridge is first).
    "ha-core/silabs_refrigerator": {"mode": "Normal"},
    # FanMode 5 = Auto; PercentCurrent and SpeedCurrent 255 are out of range: unknown.
    "ha-core/air_purifier": {
        "carbon_filter_percent": 100,
        "carbon_filter": "ok",
        "fan_mode": "auto",
        "fan_speed_percent": None,
        "fan_step": None,
        "hepa_filter_percent": 100,
        "hepa_filter": "ok",
    },
}


@pytest.mark.parametrize("name", sorted(STATES))
def test_state_values(name: str) -> None:
    devices, tools = generate(name)
    state_tool = next(t for t in tools if t.kind is ToolKind.STATE)
    device = next(d for d in devices if d.id == state_tool.device_id)
    assert state_tool.state_from(cached_values(device)) == STATES[name]


MOVING = {
    # (dump, attributes changed) -> the state, with the transition fields it now shows.
    # LevelControl RemainingTime 1/8/1 (tenths of a second left).
    ("matterjs-commissioned/node-3-color", (("1/8/1", 20),)): {
        "color_mode": "color_temperature",
        "color": {"hue": 170, "saturation": 79},
        "color_xy": {"x": 0.3805, "y": 0.3769},
        "color_temperature_kelvin": 3333,
        "moving": True,
        "brightness_percent": 30,
        "on": True,
    },
    # ColorControl RemainingTime 1/768/2 alone says so too.
    ("matterjs-commissioned/node-3-color", (("1/768/2", 5),)): {
        "color_mode": "color_temperature",
        "color": {"hue": 170, "saturation": 79},
        "color_xy": {"x": 0.3805, "y": 0.3769},
        "color_temperature_kelvin": 3333,
        "moving": True,
        "brightness_percent": 30,
        "on": True,
    },
    # WindowCovering OperationalStatus 1/258/10 = lift closing (0b1000 | global 0b10),
    # target 1/258/11 = 6000 (40 % open), current 1/258/14 = 0 (fully open).
    (
        "ha-core/mock_window_covering_full",
        (("1/258/10", 0b1010), ("1/258/11", 6000), ("1/258/14", 0)),
    ): {
        "covering_type": "shutter",
        "percent_open": 100.0,
        "tilt_percent_open": 100.0,
        "moving": True,
        "target_percent_open": 40.0,
    },
    # Stopped again: the transition fields are gone, whatever the target says.
    (
        "ha-core/mock_window_covering_full",
        (("1/258/10", 0), ("1/258/11", 6000), ("1/258/14", 6000)),
    ): {"covering_type": "shutter", "percent_open": 40.0, "tilt_percent_open": 100.0},
}


@pytest.mark.parametrize(("name", "changes"), sorted(MOVING))
def test_state_says_moving_with_target_and_current(
    name: str, changes: tuple[tuple[str, int], ...]
) -> None:
    doc = load_dump(name)
    doc["attributes"].update(dict(changes))
    devices = build_devices([NodeData.from_json(doc)])
    tools = MatterToolGenerator(MAPS, node_id="node-a").generate(devices)
    state_tool = next(t for t in tools if t.kind is ToolKind.STATE)
    device = next(d for d in devices if d.id == state_tool.device_id)
    assert state_tool.state_from(cached_values(device)) == MOVING[(name, changes)]


def tool_named(name: str, tool: str, unit: str = "C") -> Any:
    _devices, tools = generate(name, unit)
    return next(t for t in tools if t.definition.name == tool)


def sent(name: str, tool: str, params: dict[str, Any], unit: str = "C") -> list[dict[str, Any]]:
    found = tool_named(name, tool, unit)
    params = validate_params(found.definition, params)
    return [a.to_json() for a in found.plan(params)]


def cmd(
    node: int, cluster: str, command: str, payload: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "kind": "command",
        "node_id": node,
        "endpoint_id": 1,
        "cluster": cluster,
        "command": command,
        "payload": payload,
        **extra,
    }


def write(node: int, attribute: str, value: Any) -> dict[str, Any]:
    return {
        "kind": "write",
        "node_id": node,
        "endpoint_id": 1,
        "cluster": "Thermostat",
        "attribute": attribute,
        "value": value,
    }


OPTS = {"optionsMask": 0, "optionsOverride": 0}


def test_onoff_commands() -> None:
    d = "matterjs-commissioned/node-1-onoff"
    assert sent(d, "light_test_onoff_on", {}) == [cmd(1, "OnOff", "On", {})]
    assert sent(d, "light_test_onoff_off", {}) == [cmd(1, "OnOff", "Off", {})]
    assert sent(d, "light_test_onoff_toggle", {}) == [cmd(1, "OnOff", "Toggle", {})]


def test_brightness_percent_to_level_with_onoff() -> None:
    d = "matterjs-commissioned/node-2-dimmable"
    tool = tool_named(d, "light_test_dimmable_brightness")
    assert tool.definition.parameters["properties"]["percent"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 100,
        "description": "Brightness in percent (0–100).",  # noqa: RUF001
    }
    assert tool.definition.parameters["required"] == ["percent"]
    assert tool.definition.description == (
        "Set the brightness of Test dimmable, 0–100 % (0 turns it off)."  # noqa: RUF001
    )
    assert sent(d, "light_test_dimmable_brightness", {"percent": 30}) == [
        cmd(
            2, "LevelControl", "MoveToLevelWithOnOff", {"level": 77, "transitionTime": None, **OPTS}
        )
    ]
    assert sent(d, "light_test_dimmable_brightness", {"percent": 0, "transition_seconds": 2.5}) == [
        cmd(2, "LevelControl", "MoveToLevelWithOnOff", {"level": 1, "transitionTime": 25, **OPTS})
    ]
    assert sent(d, "light_test_dimmable_brightness", {"percent": 100})[0]["payload"]["level"] == 254


def test_color_picks_the_device_mode() -> None:
    # matter.js colour light: HS + XY + CT, no enhanced hue -> MoveToHueAndSaturation.
    d = "matterjs-commissioned/node-3-color"
    assert sent(d, "light_test_color_set_color", {"color": "orange"}) == [
        cmd(
            3,
            "ColorControl",
            "MoveToHueAndSaturation",
            {"hue": 27, "saturation": 254, "transitionTime": 0, **OPTS},
        )
    ]
    assert sent(d, "light_test_color_set_color", {"color": "#0000ff"}) == [
        cmd(
            3,
            "ColorControl",
            "MoveToHueAndSaturation",
            {"hue": 169, "saturation": 254, "transitionTime": 0, **OPTS},
        )
    ]
    assert sent(d, "light_test_color_set_color", {"hue": 120, "saturation": 50}) == [
        cmd(
            3,
            "ColorControl",
            "MoveToHueAndSaturation",
            {"hue": 85, "saturation": 127, "transitionTime": 0, **OPTS},
        )
    ]
    with pytest.raises(InvalidParamsError, match="unknown colour 'blurple'"):
        sent(d, "light_test_color_set_color", {"color": "blurple"})
    with pytest.raises(InvalidParamsError, match="give either 'color'"):
        sent(d, "light_test_color_set_color", {})


def test_color_temperature_kelvin_to_mireds_within_physical_limits() -> None:
    d = "matterjs-commissioned/node-3-color"  # physical 153..500 mireds
    tool = tool_named(d, "light_test_color_color_temperature")
    assert tool.definition.description == (
        "Set the white colour temperature of Test color in kelvin (2000-6536 K; lower is warmer)."
    )
    assert sent(d, tool.definition.name, {"kelvin": 2700}) == [
        cmd(
            3,
            "ColorControl",
            "MoveToColorTemperature",
            {"colorTemperatureMireds": 370, "transitionTime": 0, **OPTS},
        )
    ]
    assert (
        sent(d, tool.definition.name, {"kelvin": 1000})[0]["payload"]["colorTemperatureMireds"]
        == 500
    )
    assert (
        sent(d, tool.definition.name, {"kelvin": 20000})[0]["payload"]["colorTemperatureMireds"]
        == 153
    )


def test_thermostat_heat_cool_setpoint_by_mode() -> None:
    # matter.js thermostat: Heating+Cooling, SystemMode heat (4), no limits -> defaults.
    d = "matterjs-commissioned/node-4-thermostat"
    tool = tool_named(d, "test_thermostat_set_temperature")
    assert tool.definition.parameters == {
        "type": "object",
        "properties": {
            "celsius": {
                "type": "number",
                "minimum": 7.0,
                "maximum": 32.0,
                "description": "Target temperature in °C (7-32).",
            }
        },
        "required": ["celsius"],
        "additionalProperties": False,
    }
    assert sent(d, tool.definition.name, {"celsius": 21.5}) == [
        write(4, "OccupiedHeatingSetpoint", 2150)
    ]
    assert sent(d, tool.definition.name, {"celsius": 31}) == [
        write(4, "OccupiedHeatingSetpoint", 3000)
    ]  # clamped to the heating maximum


def test_thermostat_auto_mode_respects_deadband_and_limits() -> None:
    # mock thermostat: Heating+Cooling+AutoMode, SystemMode auto, deadband 2.5 °C,
    # heat 7..30 °C, cool 16..32 °C.
    d = "ha-core/mock_thermostat"
    assert sent(d, "mock_thermostat_set_temperature", {"celsius": 22}) == [
        write(150, "OccupiedHeatingSetpoint", 2075),
        write(150, "OccupiedCoolingSetpoint", 2325),
    ]
    assert sent(d, "mock_thermostat_set_temperature", {"celsius": 10}) == [
        write(150, "OccupiedHeatingSetpoint", 875),
        write(150, "OccupiedCoolingSetpoint", 1600),
    ]


def test_thermostat_fahrenheit() -> None:
    d = "ha-core/eberle_ute3000"  # heating only, abs 5..30 °C
    tool = tool_named(d, "connected_thermostat_ute_3000_set_temperature", unit="F")
    assert tool.definition.parameters["properties"]["fahrenheit"]["minimum"] == 41.0
    assert tool.definition.parameters["properties"]["fahrenheit"]["maximum"] == 86.0
    assert sent(d, tool.definition.name, {"fahrenheit": 70}, unit="F") == [
        write(20, "OccupiedHeatingSetpoint", 2111)
    ]
    assert sent(
        d, "connected_thermostat_ute_3000_adjust_temperature", {"degrees": -2}, unit="F"
    ) == [cmd(20, "Thermostat", "SetpointRaiseLower", {"mode": 0, "amount": -11})]


def test_thermostat_modes_follow_control_sequence() -> None:
    heat_only = tool_named("ha-core/eberle_ute3000", "connected_thermostat_ute_3000_set_mode")
    assert heat_only.definition.parameters["properties"]["mode"]["enum"] == ["off", "heat"]
    both_auto = tool_named("ha-core/mock_thermostat", "mock_thermostat_set_mode")
    assert both_auto.definition.parameters["properties"]["mode"]["enum"] == [
        "off",
        "heat",
        "cool",
        "auto",
    ]
    assert sent("ha-core/mock_thermostat", "mock_thermostat_set_mode", {"mode": "cool"}) == [
        write(150, "SystemMode", 3)
    ]
    with pytest.raises(InvalidParamsError):
        sent("ha-core/eberle_ute3000", "connected_thermostat_ute_3000_set_mode", {"mode": "cool"})


def test_unlock_is_dangerous_and_timed() -> None:
    tool = tool_named("ha-core/mock_door_lock", "mock_door_lock_unlock")
    assert tool.definition.dangerous is True
    assert tool.definition.confirmation is not None
    assert tool.definition.confirmation.mode == "always"
    assert tool.definition.confirmation.message == "Unlock Mock Door Lock?"
    assert sent("ha-core/mock_door_lock", "mock_door_lock_unlock", {}) == [
        cmd(16, "DoorLock", "UnlockDoor", {}, timed=True)
    ]
    lock = tool_named("ha-core/mock_door_lock", "mock_door_lock_lock")
    assert lock.definition.dangerous is False


PIN_SCHEMA = {
    "type": "object",
    "properties": {
        "pin_code": {
            "type": "string",
            "pattern": "^[0-9]{4,8}$",
            "description": "The lock's PIN, 4-8 digits, if it asks for one (never logged).",
        }
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("dump", "node", "slug"),
    [
        ("ha-core/mock_door_lock", 16, "mock_door_lock"),
        ("ha-core/aqara_u200", 20, "aqara_smart_lock_u200"),
    ],
)
def test_lock_and_unlock_take_an_optional_pin_that_is_never_logged(
    dump: str,
    node: int,
    slug: str,
) -> None:
    for suffix, command in (("lock", "LockDoor"), ("unlock", "UnlockDoor")):
        tool = tool_named(dump, f"{slug}_{suffix}")
        defn = tool.definition
        assert defn.parameters == PIN_SCHEMA
        # The audit log keeps no parameters of a tool with a secret one.
        assert defn.audit.log_params is False
        assert defn.audit.log_result is False
        assert dict(defn.audit.extra) == {"secret_params": ["pin_code"]}
        assert defn.audit.notify_admins is (suffix == "unlock")
        params = validate_params(defn, {"pin_code": "04321"})
        (action,) = tool.plan(params)
        # The exact payload carries the PIN as the SDK's PINCode (bytes on the wire) ...
        assert (action.kind, action.cluster, action.name, dict(action.payload), action.timed) == (
            ActionKind.COMMAND,
            "DoorLock",
            command,
            {"PINCode": "04321"},
            True,
        )
        wire = build_command("DoorLock", command, action.payload)
        assert wire.payload == {"PINCode": "MDQzMjE="}  # base64 of the PIN's bytes
        assert sdk_command(wire).PINCode == b"04321"
        # ... and every rendering of it (results, errors, diagnostics) hides it.
        assert action.to_json() == cmd(
            node, "DoorLock", command, {"PINCode": "<redacted>"}, timed=True
        )
        assert "04321" not in repr(action.to_json())
        assert sent(dump, defn.name, {}) == [cmd(node, "DoorLock", command, {}, timed=True)]
        for bad in ("123", "123456789", "12a4", "", " 1234"):
            with pytest.raises(InvalidParamsError) as info:
                validate_params(defn, {"pin_code": bad})
            assert "pin_code" in info.value.message
        # A caller that skips schema validation still meets the converter's check,
        # and the message names the parameter without echoing the PIN.
        with pytest.raises(InvalidParamsError) as info:
            tool.plan({"pin_code": "12a45"})
        assert info.value.message == "pin_code must be a string of 4 to 8 digits"
        assert "12a45" not in repr(info.value.details)


def test_generic_tool_refuses_unlock_and_pins() -> None:
    _devices, tools = generate("ha-core/mock_door_lock")
    generic = next(t for t in tools if t.kind is ToolKind.GENERIC)
    with pytest.raises(InvalidParamsError, match="use the tool 'mock_door_lock_unlock' instead"):
        generic.plan(
            {"device_id": "16-1", "cluster": "DoorLock", "command": "UnlockDoor", "payload": {}}
        )
    with pytest.raises(InvalidParamsError, match="PINCode cannot be sent through"):
        generic.plan(
            {
                "device_id": "16-1",
                "cluster": "DoorLock",
                "command": "LockDoor",
                "payload": {"PINCode": "1234"},
            }
        )
    # Locking without a PIN is not dangerous: the generic tool may send it.
    assert [
        a.to_json()
        for a in generic.plan(
            {"device_id": "16-1", "cluster": "DoorLock", "command": "LockDoor", "payload": {}}
        )
    ] == [cmd(16, "DoorLock", "LockDoor", {}, timed=True)]


def test_window_covering_position() -> None:
    d = "ha-core/mock_window_covering_full"
    assert sent(d, "blind_mock_full_window_covering_set_position", {"percent_open": 25}) == [
        cmd(50, "WindowCovering", "GoToLiftPercentage", {"liftPercent100thsValue": 7500})
    ]
    assert sent(d, "blind_mock_full_window_covering_open", {}) == [
        cmd(50, "WindowCovering", "UpOrOpen", {})
    ]


TILT_SCHEMA = {
    "type": "object",
    "properties": {
        "percent_open": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "description": "How far the slats are open, in percent.",
        }
    },
    "required": ["percent_open"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("dump", "node", "slug", "name"),
    [
        (
            "ha-core/mock_window_covering_full",
            50,
            "blind_mock_full_window_covering",
            "Mock Full Window Covering",
        ),
        ("ha-core/wago_home_blind_control", 343, "home_blind_wi_fi", "Home Blind Wi-Fi"),
    ],
)
def test_window_covering_tilt(dump: str, node: int, slug: str, name: str) -> None:
    tool = tool_named(dump, f"{slug}_set_tilt")
    assert tool.definition.parameters == TILT_SCHEMA
    assert tool.definition.description.startswith(f"Tilt the slats of {name}")
    assert tool.definition.metadata["matter"]["command"] == "GoToTiltPercentage"
    assert sent(dump, tool.definition.name, {"percent_open": 40}) == [
        cmd(node, "WindowCovering", "GoToTiltPercentage", {"tiltPercent100thsValue": 6000})
    ]
    assert sent(dump, tool.definition.name, {"percent_open": 0}) == [
        cmd(node, "WindowCovering", "GoToTiltPercentage", {"tiltPercent100thsValue": 10000})
    ]
    assert sent(dump, tool.definition.name, {"percent_open": 100}) == [
        cmd(node, "WindowCovering", "GoToTiltPercentage", {"tiltPercent100thsValue": 0})
    ]
    assert sent(dump, tool.definition.name, {"percent_open": 33.333}) == [
        cmd(node, "WindowCovering", "GoToTiltPercentage", {"tiltPercent100thsValue": 6667})
    ]
    assert sent(dump, f"{slug}_set_position", {"percent_open": 40}) == [
        cmd(node, "WindowCovering", "GoToLiftPercentage", {"liftPercent100thsValue": 6000})
    ]
    with pytest.raises(InvalidParamsError, match="percent_open must be a finite number"):
        tool.plan({"percent_open": float("nan")})


def test_no_tilt_tool_without_the_tilt_features() -> None:
    doc = load_dump("ha-core/mock_window_covering_full")
    doc["attributes"]["1/258/65532"] = 1 | 4  # Lift + PositionAwareLift only
    devices = build_devices([NodeData.from_json(doc)])
    names = [t.definition.name for t in MatterToolGenerator(MAPS).device_tools(devices[0])]
    assert names == [
        f"blind_mock_full_window_covering_{s}"
        for s in ("open", "close", "stop", "set_position", "state")
    ]


def test_generic_tool_checks_against_chip_clusters() -> None:
    _devices, tools = generate("matterjs-commissioned/node-1-onoff")
    generic = next(t for t in tools if t.kind is ToolKind.GENERIC)
    assert generic.definition.key == "matter:control_matter_device"
    # device:control:<id> to command (access defaults to "control"), device:read:<id> to read.
    assert generic.definition.requires.permissions == ("device:{access}:{device_id}",)
    assert generic.definition.parameters["properties"]["access"]["default"] == "control"
    ok = generic.plan(
        {
            "device_id": "1-1",
            "cluster": "Identify",
            "command": "Identify",
            "payload": {"identifyTime": 5},
        }
    )
    assert [a.to_json() for a in ok] == [cmd(1, "Identify", "Identify", {"identifyTime": 5})]
    with pytest.raises(InvalidParamsError, match="has no command 'Onn'"):
        generic.plan({"device_id": "1-1", "cluster": "OnOff", "command": "Onn", "payload": {}})
    with pytest.raises(InvalidParamsError, match="identifyTime must be an integer"):
        generic.plan(
            {
                "device_id": "1-1",
                "cluster": "Identify",
                "command": "Identify",
                "payload": {"identifyTime": "five"},
            }
        )
    with pytest.raises(InvalidParamsError, match="unknown field"):
        generic.plan(
            {
                "device_id": "1-1",
                "cluster": "Identify",
                "command": "Identify",
                "payload": {"identifyTime": 5, "extra": 1},
            }
        )
    with pytest.raises(InvalidParamsError, match="has no LevelControl cluster"):
        generic.plan(
            {"device_id": "1-1", "cluster": "LevelControl", "command": "MoveToLevel", "payload": {}}
        )
    with pytest.raises(NotFoundError):
        generic.plan({"device_id": "9-9", "cluster": "OnOff", "command": "On"})


def test_generic_tool_reads_one_attribute_by_name_or_id() -> None:
    _devices, tools = generate("matterjs-commissioned/node-1-onoff")
    generic = next(t for t in tools if t.kind is ToolKind.GENERIC)
    # OnOff is cluster 6, its OnOff attribute 0 (spec 1.5.6).
    expected = [
        {
            "kind": "read",
            "node_id": 1,
            "endpoint_id": 1,
            "cluster": "OnOff",
            "attributes": ["OnOff"],
        }
    ]
    by_name = {"device_id": "1-1", "access": "read", "cluster": "OnOff", "attribute": "OnOff"}
    assert [a.to_json() for a in generic.plan(by_name)] == expected
    by_id = {"device_id": "1-1", "access": "read", "cluster": 6, "attribute": 0}
    assert [a.to_json() for a in generic.plan(by_id)] == expected
    refusals = [
        ({"attribute": "Onn"}, "OnOff has no attribute 'Onn'"),
        ({"attribute": 0xFFF0}, "Test onoff's OnOff cluster has no attribute 0xFFF0"),
        ({"cluster": 0xFFF1FC00}, "has no 0xFFF1FC00 cluster"),
        ({"cluster": "Nope"}, "unknown Matter cluster 'Nope'"),
        ({"cluster": "LevelControl", "attribute": "CurrentLevel"}, "has no LevelControl cluster"),
        ({"command": "On"}, "a read takes no command"),
        ({"payload": {"x": 1}}, "a read takes no payload"),
    ]
    for change, message in refusals:
        with pytest.raises(InvalidParamsError, match=message):
            generic.plan({**by_name, **change})
    with pytest.raises(InvalidParamsError, match="a read needs 'attribute'"):
        generic.plan({"device_id": "1-1", "access": "read", "cluster": "OnOff"})
    with pytest.raises(InvalidParamsError, match="a command takes no 'attribute'"):
        generic.plan({**by_name, "access": "control", "command": "On"})
    with pytest.raises(InvalidParamsError, match="a command needs 'command'"):
        generic.plan({"device_id": "1-1", "cluster": "OnOff"})
    with pytest.raises(NotFoundError):
        generic.plan({**by_name, "device_id": "9-9"})


def test_query_sensor_reads_one_sensor() -> None:
    devices, tools = generate("ha-core/eve_weather_sensor")
    sensor = next(t for t in tools if t.kind is ToolKind.SENSOR)
    assert sensor.definition.key == "core:query_sensor"
    # Neither the home's ids nor its readings: every reading a cluster map defines.
    assert sensor.definition.parameters["properties"]["device_id"] == {
        "type": "string",
        "pattern": "^[0-9]+-[0-9]+$",
        "description": "The device to read ('<node>-<endpoint>').",
    }
    assert sensor.definition.parameters["properties"]["sensor"]["enum"] == SENSOR_READINGS
    params = {"device_id": "29-2", "sensor": "humidity"}
    reads = sensor.plan(params)
    assert [r.to_json() for r in reads] == [
        {
            "kind": "read",
            "node_id": 29,
            "endpoint_id": 2,
            "cluster": "RelativeHumidityMeasurement",
            "attributes": ["MeasuredValue"],
        }
    ]
    values = cached_values(devices[1])
    assert sensor.state_from(values, params=params) == {
        "device_id": "29-2",
        "name": "Eve Weather Humidity Sensor",
        "sensor": "humidity",
        "value": 80.66,
    }
    with pytest.raises(InvalidParamsError, match="has no humidity sensor"):
        sensor.plan({"device_id": "29-1", "sensor": "humidity"})


ODD_NODES: list[dict[str, Any]] = [
    {"node_id": 7, "attributes": {}},
    {"node_id": 7, "available": True, "attributes": {"1/29/0": "garbage", "1/6/0": True}},
    {
        "node_id": 7,
        "available": True,
        "attributes": {
            "0/40/5": "\x00\x00",
            "0/40/3": {"TLVValue": None, "Reason": None},
            "1/29/0": [{"0": 256, "1": 1}],
            "1/29/1": [6],
            "1/6/65529": "not-a-list",
            "1/6/65532": {"TLVValue": None, "Reason": None},
            "1/6/0": {"TLVValue": None},
        },
    },
    {
        "node_id": 7,
        "available": True,
        "attributes": {
            "1/29/0": [{"0": 769, "1": 1}],
            "1/29/1": [513],
            "1/513/65532": 3,
            "1/513/18": 2000,
            "1/513/3": "hot",
            "1/513/27": 99,
            "1/513/28": None,
            "x/y/z": 1,
        },
    },
]


@pytest.mark.parametrize("doc", ODD_NODES)
def test_odd_data_never_crashes(doc: dict[str, Any]) -> None:
    devices = build_devices([NodeData.from_json(doc)])
    tools = MatterToolGenerator(MAPS).generate(devices)
    for device in devices:
        assert SLUG_RE.match(device.slug)
        assert device.name
    for tool in tools:
        if tool.kind is ToolKind.STATE:
            dev = next(d for d in devices if d.id == tool.device_id)
            tool.state_from(cached_values(dev))


def test_odd_data_names_and_tools() -> None:
    devices = build_devices([NodeData.from_json(ODD_NODES[2])])
    assert [(d.name, d.slug) for d in devices] == [("Matter Light", "matter_light")]
    assert MatterToolGenerator(MAPS).device_tools(devices[0]) == []  # OnOff has no usable data
    thermo = build_devices([NodeData.from_json(ODD_NODES[3])])
    names = [t.definition.name for t in MatterToolGenerator(MAPS).device_tools(thermo[0])]
    # SystemMode is null -> no set_mode; no AcceptedCommandList -> mandatory commands assumed.
    assert names == [
        "matter_thermostat_set_temperature",
        "matter_thermostat_adjust_temperature",
        "matter_thermostat_state",
    ]


def fleet(name: str, count: int) -> list[Any]:
    """Return ``count`` copies of a dump's devices with node ids 1000, 1001, …."""
    nodes = []
    for i in range(count):
        doc = copy.deepcopy(load_dump(name))
        doc["node_id"] = 1000 + i
        nodes.append(NodeData.from_json(doc))
    return build_devices(nodes)


def shared(devices: list[Any]) -> dict[str, Any]:
    return {t.definition.key: t for t in MatterToolGenerator(MAPS).shared_tools(devices)}


# Every ``sensor:`` name of cluster_maps/*.yaml, written out.
SENSOR_READINGS = [
    "air_quality",
    "battery",
    "co",
    "co2",
    "co_alarm",
    "contact",
    "energy",
    "energy_exported",
    "flow",
    "formaldehyde",
    "freeze",
    "humidity",
    "illuminance",
    "leak",
    "no2",
    "occupancy",
    "ozone",
    "pm1",
    "pm10",
    "pm25",
    "power",
    "pressure",
    "radon",
    "rain",
    "smoke",
    "soil_moisture",
    "temperature",
    "tvoc",
]


def test_shared_tools_name_no_device_of_the_home() -> None:
    """The shared tools read the same for every token: no id, name, room or count of a device."""
    lights = fleet("matterjs-commissioned/node-1-onoff", 30)
    sensors = fleet("ha-core/eve_weather_sensor", 3)
    for devices in (lights[:1], lights, sensors, lights + sensors):
        for tool in shared(devices).values():
            text = json.dumps(tool.definition.to_json())
            for device in devices:
                assert device.id not in text, (tool.definition.key, device.id)
                assert device.name not in text, (tool.definition.key, device.name)
    # Nor how many there are: one device or thirty-three, the same definitions.
    one = {k: t.definition.to_json() for k, t in shared(lights[:1] + sensors[:1]).items()}
    every = {k: t.definition.to_json() for k, t in shared(lights + sensors).items()}
    assert one == every
    generic = shared(lights)["matter:control_matter_device"]
    assert generic.definition.parameters["properties"]["device_id"] == {
        "type": "string",
        "pattern": "^[0-9]+-[0-9]+$",
        "description": "The device to command or read ('<node>-<endpoint>').",
    }
    # Checked against the devices when called.
    assert [
        a.to_json()
        for a in generic.plan({"device_id": "1029-1", "cluster": "OnOff", "command": "On"})
    ] == [cmd(1029, "OnOff", "On", {})]
    with pytest.raises(NotFoundError):
        generic.plan({"device_id": "1030-1", "cluster": "OnOff", "command": "On"})
    query = shared(sensors)["core:query_sensor"].definition
    assert query.parameters["properties"]["sensor"]["enum"] == SENSOR_READINGS
    # The state tools the description points to are the ones tagged "sensor".
    state = MatterToolGenerator(MAPS).device_tools(sensors[0])[-1].definition
    assert state.tags == ("matter", "temperature_sensor", "state", "sensor")
    light_state = MatterToolGenerator(MAPS).device_tools(lights[0])[-1].definition
    assert light_state.tags == ("matter", "light", "state")


@pytest.mark.parametrize("name", DUMP_IDS)
def test_execution_type_and_intent(name: str) -> None:
    """Every generated tool runs on this node; acting tools are actions, reads compute."""
    _, tools = generate(name)
    for tool in tools:
        d = tool.definition
        assert d.type.value == "server", d.identity
        expected = "compute" if tool.kind in (ToolKind.STATE, ToolKind.SENSOR) else "action"
        assert d.intent.value == expected, d.identity
        assert d.to_json()["tool"].get("intent") == (None if expected == "compute" else "action")


def test_find_tool_answers_which_tool_does_a_capability() -> None:
    devices, tools = generate("matterjs-commissioned/node-3-color")
    (light,) = devices
    found = {
        cap: find_tool(tools, cap, device_id=light.id)
        for cap in ("on", "set_color", "color_temperature", "brightness", "state", "unlock")
    }
    assert {cap: t.definition.name if t else None for cap, t in found.items()} == {
        "on": "light_test_color_on",
        "set_color": "light_test_color_set_color",
        "color_temperature": "light_test_color_color_temperature",
        "brightness": "light_test_color_brightness",
        "state": "light_test_color_state",
        "unlock": None,
    }
    moved = [dataclasses.replace(light, room="Den")]
    room_tools = MatterToolGenerator(MAPS, node_id="node-a").generate(moved)
    room_off = find_tool(room_tools, "off", room="den")
    assert room_off is not None
    assert room_off.definition.name == "room_den_lights_off"
    assert find_tool(room_tools, "off", room="attic") is None
    assert capability_of(room_off) == "off"


def test_generation_pauses_the_collector_only_while_it_runs() -> None:
    """The model and tools are one allocation burst: no collection inside, none lost."""
    import gc

    from bridge.matter.spec.models import gc_paused

    nodes = []
    for copy_no in range(4):  # a few hundred devices: dozens of collections unpaused
        for i, name in enumerate(DUMP_IDS):
            doc = load_dump(name)
            doc["node_id"] = 1000 * (copy_no + 1) + i
            nodes.append(NodeData.from_json(doc))
    generator = MatterToolGenerator(load_cluster_maps(), node_id="n")
    before = gc.get_stats()[0]["collections"]
    with gc_paused():  # as MatterToolSync.sync does
        generator.generate(build_devices(nodes))
        # Read inside: the first allocation after the pause may well collect (it should).
        during = gc.get_stats()[0]["collections"]
    assert gc.isenabled()
    assert during == before  # unpaused, the collector would run over them here
    gc.disable()
    try:
        with gc_paused():
            generator.generate(build_devices(nodes))
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_a_cook_surface_is_set_by_its_named_levels() -> None:
    """TemperatureControl's TemperatureLevel feature: SetTemperature with the level index."""
    d = "ha-core/mock_cooktop"
    tool = tool_named(d, "mock_cooktop_cook_surface_set_temperature_level")
    assert tool.definition.parameters["properties"]["level"]["enum"] == ["Low", "Medium", "High"]
    [action] = sent(d, "mock_cooktop_cook_surface_set_temperature_level", {"level": "High"})
    assert (action["cluster"], action["command"], action["payload"]) == (
        "TemperatureControl",
        "SetTemperature",
        {"targetTemperatureLevel": 2},
    )
    with pytest.raises(InvalidParamsError):
        sent(d, "mock_cooktop_cook_surface_set_temperature_level", {"level": "Boiling"})
    devices, tools = generate(d)
    surface = next(x for x in devices if x.slug == "mock_cooktop_cook_surface")
    state = next(t for t in tools if t.device_id == surface.id and t.kind is ToolKind.STATE)
    assert state.state_from(cached_values(surface))["temperature_level"] == "Medium"


@pytest.mark.parametrize(
    "levels",
    [None, [], ["Low", 3, "High"], ["Low", "", "High"], ["Low", "Low"], ["x"] * 40, "Low"],
)
def test_levels_that_cannot_be_numbered_make_no_level_tool(levels: Any) -> None:
    dump = load_dump("ha-core/mock_cooktop")
    for key in [k for k in dump["attributes"] if k.endswith("/86/5")]:
        dump["attributes"][key] = levels
    devices = build_devices([NodeData.from_json(dump)])
    tools = MatterToolGenerator(MAPS, node_id="node-a").generate(devices)
    assert not any(t.definition.name.endswith("set_temperature_level") for t in tools)


def test_an_oven_cavity_starts_and_stops() -> None:
    d = "ha-core/mock_oven"
    for suffix, command in (("start", "Start"), ("stop", "Stop")):
        [action] = sent(d, f"mock_oven_cabinet_{suffix}", {})
        assert (action["cluster"], action["command"], action["payload"]) == (
            "OvenCavityOperationalState",
            command,
            {},
        )


def test_a_chime_plays_its_selected_sound() -> None:
    [action] = sent("ha-core/mock_chime", "mock_chime_play", {})
    assert (action["cluster"], action["command"], action["payload"]) == (
        "Chime",
        "PlayChimeSound",
        {},
    )


def test_a_pump_mode_is_offered_by_its_features() -> None:
    """Minimum and maximum with ConstantSpeed, local with LocalOperation: a written mode."""
    dump = load_dump("ha-core/mock_pump")
    feature_key = next(k for k in dump["attributes"] if k.endswith("/512/65532"))
    dump["attributes"][feature_key] = 8 | 64  # ConstantSpeed | LocalOperation
    devices = build_devices([NodeData.from_json(dump)])
    tools = MatterToolGenerator(MAPS, node_id="node-a").generate(devices)
    tool = next(t for t in tools if t.definition.name == "mock_pump_set_pump_mode")
    modes = tool.definition.parameters["properties"]["mode"]["enum"]
    assert modes == ["normal", "minimum", "maximum", "local"]
    [action] = [
        a.to_json() for a in tool.plan(validate_params(tool.definition, {"mode": "maximum"}))
    ]
    assert (action["kind"], action["cluster"], action["attribute"], action["value"]) == (
        "write",
        "PumpConfigurationAndControl",
        "OperationMode",
        2,
    )
    with pytest.raises(InvalidParamsError):
        validate_params(tool.definition, {"mode": "turbo"})


def test_a_pumps_level_is_its_setpoint_not_a_brightness() -> None:
    """LevelControl on a pump sets its setpoint (% of its range); other kinds keep brightness."""
    _devices, tools = generate("ha-core/mock_pump")
    names = {t.definition.name for t in tools}
    assert "mock_pump_setpoint" in names
    assert not any(n.endswith("_brightness") for n in names)
    setpoint = next(t for t in tools if t.definition.name == "mock_pump_setpoint")
    assert "brightness" not in json.dumps(setpoint.definition.to_json()).casefold()
    [action] = [
        a.to_json() for a in setpoint.plan(validate_params(setpoint.definition, {"percent": 50}))
    ]
    assert (action["cluster"], action["command"]) == ("LevelControl", "MoveToLevelWithOnOff")
    assert action["payload"]["level"] == 100  # the pump scale: 1-200 is 0.5-100 %
    for percent, level in ((0.5, 1), (37.5, 75), (100, 200)):
        [action] = [
            a.to_json()
            for a in setpoint.plan(validate_params(setpoint.definition, {"percent": percent}))
        ]
        assert action["payload"]["level"] == level
    for wrong in (0, 0.4, 100.5, -1):
        with pytest.raises(InvalidParamsError):
            validate_params(setpoint.definition, {"percent": wrong})
    # The same cluster on a light is still its brightness, and a light has no setpoint.
    for name, (per_device, _shared) in EXPECTED.items():
        for suffixes in per_device.values():
            if name != "ha-core/mock_pump":
                assert "setpoint" not in suffixes, name
    assert any("brightness" in s for d, _ in EXPECTED.values() for s in d.values())


def test_a_speaker_sets_its_volume_and_mutes_without_a_brightness() -> None:
    """Speaker (Matter device library): the level is its volume, OnOff off is muted."""
    devices, tools = generate("ha-core/mock_speaker")
    [speaker] = devices
    assert speaker.kind == "speaker"
    names = {t.definition.name for t in tools}
    assert not {n for n in names if n.endswith(("_brightness", "_on", "_off", "_toggle"))}
    [action] = sent("ha-core/mock_speaker", "mock_speaker_volume", {"percent": 100})
    # MoveToLevel, not ...WithOnOff: a volume change never unmutes or mutes it.
    assert (action["cluster"], action["command"]) == ("LevelControl", "MoveToLevel")
    assert action["payload"]["level"] == 254
    [action] = sent("ha-core/mock_speaker", "mock_speaker_volume", {"percent": 0})
    assert action["payload"]["level"] == 1  # MinLevel: the quietest, still unmuted
    assert sent("ha-core/mock_speaker", "mock_speaker_mute", {}) == [cmd(107, "OnOff", "Off", {})]
    assert sent("ha-core/mock_speaker", "mock_speaker_unmute", {}) == [cmd(107, "OnOff", "On", {})]
    volume = next(t for t in tools if t.definition.name == "mock_speaker_volume")
    assert "brightness" not in json.dumps(volume.definition.to_json()).casefold()


def test_a_doorbell_is_a_device_whose_presses_are_events() -> None:
    devices, _tools = generate("ha-core/mock_doorbell")
    [bell] = devices
    assert bell.kind == "doorbell"
    assert 0x003B in bell.clusters  # Switch: its presses reach /v1/events as device.event
