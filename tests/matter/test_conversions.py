"""Human units ↔ Matter units: exact values, hypothesis properties and bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.errors import InvalidParamsError
from bridge.matter import MatterToolGenerator, NodeData, build_devices, load_cluster_maps
from bridge.matter.tools import conversions as cv
from bridge.tools.validation import validate_call
from tests.matter.dumps import load_dump

MAPS = load_cluster_maps()

# Ranges a device may report for MinLevel / MaxLevel (1..254, min <= max).
level_ranges = st.integers(1, 254).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo, 254)))


def bad(match: str) -> Any:
    return pytest.raises(InvalidParamsError, match=match)


# --- levels ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("percent", "lo", "hi", "level"),
    [
        (0, 1, 254, 1),
        (0.1, 1, 254, 2),
        (1, 1, 254, 4),
        (30, 1, 254, 77),
        (50, 1, 254, 128),
        (99, 1, 254, 251),
        (100, 1, 254, 254),
        (0, 10, 200, 10),
        (1, 10, 200, 12),
        (50, 10, 200, 105),
        (100, 10, 200, 200),
        # Missing or nonsensical limits fall back to the full 1..254 range.
        (50, None, None, 128),
        (50, 0, 300, 128),
        (50, 100, 50, 177),
        # A one-step range: 0 % is the minimum, anything above is the maximum.
        (0, 5, 6, 5),
        (1, 5, 6, 6),
        (100, 5, 6, 6),
        # A device with no range at all always gets its only level.
        (0, 7, 7, 7),
        (60, 7, 7, 7),
    ],
)
def test_percent_to_level_exact(percent: float, lo: Any, hi: Any, level: int) -> None:
    assert cv.percent_to_level(percent, lo, hi) == level


@given(level_ranges, st.floats(0, 100), st.floats(0, 100))
def test_percent_to_level_is_monotonic_and_within_limits(
    bounds: tuple[int, int], a: float, b: float
) -> None:
    lo, hi = bounds
    la, lb = cv.percent_to_level(a, lo, hi), cv.percent_to_level(b, lo, hi)
    assert lo <= la <= hi
    if a <= b:
        assert la <= lb
    # 0 % is the minimum (the "with OnOff" command turns off); anything above stays on.
    assert (la == lo) == (a == 0 or hi == lo)


@given(level_ranges)
def test_percent_endpoints_are_exact(bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    assert cv.percent_to_level(0, lo, hi) == lo
    assert cv.percent_to_level(100, lo, hi) == hi
    assert cv.level_to_percent(hi, lo, hi) == 100
    assert cv.level_to_percent(lo, lo, hi) == (0 if hi > lo else 100)


@given(level_ranges, st.integers(0, 100))
def test_whole_percent_round_trips_where_the_range_has_the_resolution(
    bounds: tuple[int, int], percent: int
) -> None:
    lo, hi = bounds
    level = cv.percent_to_level(percent, lo, hi)
    back = cv.level_to_percent(level, lo, hi)
    assert back is not None
    if hi - lo >= 100:
        assert back == percent
    else:
        # Fewer levels than percentages: the step size bounds the error.
        assert abs(back - percent) <= math.ceil(100 / (hi - lo)) if hi > lo else back == 100


@given(level_ranges, st.data())
def test_level_round_trips_within_half_a_percent_step(
    bounds: tuple[int, int], data: st.DataObject
) -> None:
    lo, hi = bounds
    level = data.draw(st.integers(lo, hi))
    percent = cv.level_to_percent(level, lo, hi)
    assert percent is not None
    assert 0 <= percent <= 100
    back = cv.percent_to_level(percent, lo, hi)
    assert abs(back - level) <= (hi - lo) / 200 + 1


def test_level_to_percent_unknowns() -> None:
    assert cv.level_to_percent(None, 1, 254) is None
    assert cv.level_to_percent(True, 1, 254) is None  # a bool is not a level
    assert cv.level_to_percent(300, 1, 254) == 100  # out-of-range values are clamped
    assert cv.level_to_percent(0, 1, 254) == 0


@pytest.mark.parametrize("value", [-0.01, 100.5, 1e9, float("nan"), float("inf")])
def test_percent_out_of_range_names_the_parameter(value: float) -> None:
    with bad("^percent must be"):
        cv.percent_to_level(value, 1, 254)


def test_transition_seconds() -> None:
    assert cv.seconds_to_tenths(None) is None
    assert cv.seconds_to_tenths(0) == 0
    assert cv.seconds_to_tenths(2.54) == 25
    assert cv.seconds_to_tenths(6553.4) == 65534
    for value in (-1, 6553.5, float("nan")):
        with bad("^transition_seconds must be"):
            cv.seconds_to_tenths(value)


# --- colours --------------------------------------------------------------------------

# name -> (rgb, Matter hue 0-254, enhanced hue, saturation 0-254, (colorX, colorY))
KNOWN_COLORS = {
    "red": ((255, 0, 0), 0, 0, 254, (41948, 21625)),
    "lime": ((0, 255, 0), 85, 21845, 254, (19661, 39322)),
    "blue": ((0, 0, 255), 169, 43691, 254, (9831, 3933)),
    "white": ((255, 255, 255), 0, 0, 0, (20494, 21561)),
    "orange": ((255, 165, 0), 27, 7068, 254, (32801, 28888)),
}
# The sRGB primaries and D65 white point in CIE 1931 xy, from the sRGB specification.
SRGB_XY = {
    "red": (0.64, 0.33),
    "lime": (0.30, 0.60),
    "blue": (0.15, 0.06),
    "white": (0.3127, 0.3290),
}


@pytest.mark.parametrize("name", sorted(KNOWN_COLORS))
def test_known_colours_exact(name: str) -> None:
    rgb, hue, enhanced, sat, xy = KNOWN_COLORS[name]
    assert cv.parse_color(name) == rgb
    hs = cv.rgb_to_huesat(rgb)
    assert (
        cv.matter_hue(hs.hue),
        cv.matter_enhanced_hue(hs.hue),
        cv.matter_saturation(hs.saturation),
    ) == (hue, enhanced, sat)
    assert cv.rgb_to_xy(rgb) == xy
    if name in SRGB_XY:
        ref = SRGB_XY[name]
        # Within 0.0001 of the published chromaticity (the 4-digit matrix's rounding).
        assert abs(xy[0] / 65536 - ref[0]) < 1e-4
        assert abs(xy[1] / 65536 - ref[1]) < 1e-4


@pytest.mark.parametrize(
    ("text", "rgb"),
    [
        ("#ff8800", (255, 136, 0)),
        ("ff8800", (255, 136, 0)),
        ("#F80", (255, 136, 0)),
        ("  #0a0B0c ", (10, 11, 12)),
        ("Dark Orange", (255, 140, 0)),
        ("dark_orange", (255, 140, 0)),
        ("REBECCA-PURPLE", (102, 51, 153)),
        ("grey", (128, 128, 128)),
        ("gray", (128, 128, 128)),
    ],
)
def test_parse_color_forms(text: str, rgb: tuple[int, int, int]) -> None:
    assert cv.parse_color(text) == rgb


@pytest.mark.parametrize("text", ["blurple", "#ff88", "#ff88000", "#gg0000", "", "#", "warm"])
def test_bad_colour_names_the_parameter(text: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        cv.parse_color(text)
    assert info.value.message.startswith(f"color: unknown colour '{text}'")
    assert info.value.details["field"] == "color"


def test_every_css_name_parses_to_its_hex() -> None:
    assert len(cv.CSS_COLORS) == 148
    for name, hex_text in cv.CSS_COLORS.items():
        assert cv.parse_color(name) == cv.parse_color("#" + hex_text)


@given(st.floats(0, 360), st.floats(0, 100))
def test_matter_hue_and_saturation_stay_in_range(hue: float, sat: float) -> None:
    assert 0 <= cv.matter_hue(hue) <= 254
    assert 0 <= cv.matter_enhanced_hue(hue) <= 65535
    assert 0 <= cv.matter_saturation(sat) <= 254
    # The enhanced hue is the finer scale of the same angle.
    assert abs(cv.matter_enhanced_hue(hue) * 360 / 65536 - hue % 360) <= 360 / 65536 or (
        hue % 360 > 359.99
    )


@given(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)))
def test_xy_stays_in_the_matter_range(rgb: tuple[int, int, int]) -> None:
    x, y = cv.rgb_to_xy(rgb)
    assert 0 <= x <= 65279
    assert 0 <= y <= 65279


@pytest.mark.parametrize(
    ("hue", "sat", "match"),
    [
        (-1, 50, "^hue must be between 0 and 360"),
        (361, 50, "^hue must be"),
        (120, 101, "^saturation must be between 0 and 100"),
        (120, -5, "^saturation must be"),
        (float("nan"), 50, "^hue must be a finite number"),
        ("red", 50, "^hue must be a finite"),
    ],
)
def test_bad_hue_saturation(hue: Any, sat: Any, match: str) -> None:
    with bad(match):
        cv.huesat(hue, sat)


def color_device(features: int, accepted: list[int]) -> Any:
    doc = load_dump("matterjs-commissioned/node-3-color")
    doc["attributes"]["1/768/65532"] = features
    doc["attributes"]["1/768/65529"] = accepted
    (device,) = build_devices([NodeData.from_json(doc)])
    tools = MatterToolGenerator(MAPS).device_tools(device)
    return next((t for t in tools if t.definition.name == "light_test_color_set_color"), None)


HS, ENHANCED, XY, CT = 1, 2, 8, 16
ALL_COLOR_COMMANDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 64, 65, 66, 67, 68, 71, 75, 76]


def plan_color(tool: Any, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (action,) = tool.plan(validate_call(tool.definition, params))
    return action.name, dict(action.payload)


OPTS = {"optionsMask": 0, "optionsOverride": 0, "transitionTime": 0}


@pytest.mark.parametrize("name", sorted(KNOWN_COLORS))
def test_colour_goes_out_in_the_mode_the_feature_map_offers(name: str) -> None:
    _rgb, hue, enhanced, sat, (x, y) = KNOWN_COLORS[name]
    enhanced_tool = color_device(HS | ENHANCED | XY | CT, ALL_COLOR_COMMANDS)
    assert plan_color(enhanced_tool, {"color": name}) == (
        "EnhancedMoveToHueAndSaturation",
        {"enhancedHue": enhanced, "saturation": sat, **OPTS},
    )
    hs_tool = color_device(HS | XY | CT, ALL_COLOR_COMMANDS)
    assert plan_color(hs_tool, {"color": name}) == (
        "MoveToHueAndSaturation",
        {"hue": hue, "saturation": sat, **OPTS},
    )
    xy_tool = color_device(XY | CT, ALL_COLOR_COMMANDS)
    assert plan_color(xy_tool, {"color": name}) == (
        "MoveToColor",
        {"colorX": x, "colorY": y, **OPTS},
    )


def test_colour_feature_without_the_accepted_command_falls_through() -> None:
    # EnhancedHue in the feature map but the command not accepted -> plain hue/saturation.
    tool = color_device(HS | ENHANCED, [6])
    assert plan_color(tool, {"color": "red"})[0] == "MoveToHueAndSaturation"
    assert color_device(CT, ALL_COLOR_COMMANDS) is None  # white-only light: no colour tool


def test_hue_saturation_parameters_and_xy_from_hue() -> None:
    xy_tool = color_device(XY, ALL_COLOR_COMMANDS)
    # hue 240 / 100 % is pure blue.
    assert plan_color(xy_tool, {"hue": 240, "saturation": 100}) == (
        "MoveToColor",
        {"colorX": 9831, "colorY": 3933, **OPTS},
    )
    hs_tool = color_device(HS, ALL_COLOR_COMMANDS)
    assert plan_color(hs_tool, {"hue": 360, "transition_seconds": 1.5}) == (
        "MoveToHueAndSaturation",
        {"hue": 0, "saturation": 254, "optionsMask": 0, "optionsOverride": 0, "transitionTime": 15},
    )
    with bad("^hue must be a finite number"):
        hs_tool.plan({"hue": float("nan")})


# --- colour temperature ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kelvin", "lo", "hi", "mireds"),
    [
        (2700, 153, 500, 370),
        (6500, 153, 500, 154),
        (4000, 153, 500, 250),
        (1000, 153, 500, 500),
        (20000, 153, 500, 153),  # clamped to the physical limits
        (2700, None, None, 370),
        (100, None, None, 10000),
        (2700, 0, 70000, 370),
    ],
)
def test_kelvin_to_mireds(kelvin: float, lo: Any, hi: Any, mireds: int) -> None:
    assert cv.kelvin_to_mireds(kelvin, lo, hi) == mireds


@given(
    st.floats(100, 100_000),
    st.floats(100, 100_000),
    st.integers(1, 1000).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo, 1000))),
)
def test_kelvin_to_mireds_clamps_and_is_antitone(
    a: float, b: float, limits: tuple[int, int]
) -> None:
    lo, hi = limits
    ma, mb = cv.kelvin_to_mireds(a, lo, hi), cv.kelvin_to_mireds(b, lo, hi)
    assert lo <= ma <= hi
    if a <= b:
        assert ma >= mb  # warmer (fewer kelvin) is more mireds


@pytest.mark.parametrize(
    ("kelvin", "match"),
    [
        (0, "^kelvin must be positive"),
        (-2700, "^kelvin must be positive"),
        (float("nan"), "^kelvin must be a finite number"),
        (float("inf"), "^kelvin must be a finite"),
    ],
)
def test_bad_kelvin(kelvin: float, match: str) -> None:
    with bad(match):
        cv.kelvin_to_mireds(kelvin, 153, 500)


def test_mireds_to_kelvin() -> None:
    assert cv.mireds_to_kelvin(370) == 2703
    assert cv.mireds_to_kelvin(0) is None
    assert cv.mireds_to_kelvin(None) is None


# --- temperatures ---------------------------------------------------------------------


def test_temperature_units() -> None:
    assert cv.to_celsius(70, "F") == pytest.approx(21.1111, abs=1e-4)
    assert cv.to_celsius(21.5, "C") == 21.5
    assert cv.from_centi_celsius(2111, "F") == 70.0
    assert cv.from_centi_celsius(2150, "C") == 21.5
    assert cv.from_centi_celsius(None, "C") is None
    assert cv.delta_to_celsius(9, "F") == 5.0


def test_setpoint_limits() -> None:
    # Absolute limits, tightened by user limits; defaults stand in for unknown values.
    assert cv.setpoint_limits(700, 3000, 1500, 2500, cv.DEFAULT_ABS_HEAT) == cv.SetpointLimits(
        low=1500, high=2500
    )
    assert cv.setpoint_limits(None, None, None, None, cv.DEFAULT_ABS_HEAT) == cv.SetpointLimits(
        low=700, high=3000
    )
    assert cv.setpoint_limits(1600, 3200, 100, 9000, cv.DEFAULT_ABS_COOL) == cv.SetpointLimits(
        low=1600, high=3200
    )  # user limits outside the absolute ones change nothing
    assert cv.setpoint_limits(-40000, 40000, None, None, (500, 3500)) == cv.SetpointLimits(
        low=500, high=3500
    )  # impossible values are ignored
    assert cv.clamp_setpoint(100, cv.SetpointLimits(low=700, high=3000)) == 700
    assert cv.deadband_centi(25) == 250
    assert cv.deadband_centi(None) == 250
    assert cv.deadband_centi(200) == 250  # beyond the attribute's 0-127 range


def thermostat(mode: int, **attrs: int) -> Any:
    """Return the mock thermostat (heat 7-30 °C, cool 16-32 °C, deadband 2.5 °C,
    heating 20 °C, cooling 26 °C, Heating+Cooling+AutoMode) in SystemMode ``mode``."""
    doc = load_dump("ha-core/mock_thermostat")
    doc["attributes"]["1/513/28"] = mode
    ids = {"heat_min": 21, "heat_max": 22, "heating": 18, "cooling": 17, "features": 65532}
    for key, value in attrs.items():
        doc["attributes"][f"1/513/{ids[key]}"] = value
    (device,) = build_devices([NodeData.from_json(doc)])
    return next(
        t
        for t in MatterToolGenerator(MAPS).device_tools(device)
        if t.definition.name == "mock_thermostat_set_temperature"
    )


def writes(tool: Any, celsius: float) -> list[tuple[str, int]]:
    return [(a.name, a.value) for a in tool.plan({"celsius": celsius})]


H, C = "OccupiedHeatingSetpoint", "OccupiedCoolingSetpoint"


@pytest.mark.parametrize(
    ("mode", "celsius", "expected"),
    [
        # auto: both setpoints around the target, the deadband between them.
        (1, 22, [(H, 2075), (C, 2325)]),
        (1, 10, [(H, 875), (C, 1600)]),
        (1, 35, [(H, 2950), (C, 3200)]),
        # heat: the heating setpoint; the cooling one moves up (first) only if too close.
        (4, 21, [(H, 2100)]),
        (4, 25, [(C, 2750), (H, 2500)]),
        (4, 35, [(C, 3200), (H, 2950)]),
        (4, 5, [(H, 700)]),
        # cool / precooling: the cooling setpoint; the heating one moves down (first).
        (3, 24, [(C, 2400)]),
        (3, 21, [(H, 1850), (C, 2100)]),
        (3, 10, [(H, 1350), (C, 1600)]),
        (6, 24, [(C, 2400)]),
        # off, emergency heat, fan only, dry, sleep: the heating setpoint.
        (0, 21, [(H, 2100)]),
        (5, 21, [(H, 2100)]),
        (7, 21, [(H, 2100)]),
        (8, 21, [(H, 2100)]),
        (9, 21, [(H, 2100)]),
    ],
)
def test_setpoint_per_system_mode(
    mode: int, celsius: float, expected: list[tuple[str, int]]
) -> None:
    assert writes(thermostat(mode), celsius) == expected


def test_setpoint_user_limits_and_no_auto_feature() -> None:
    tight = thermostat(4, heat_min=1500, heat_max=2500)
    assert writes(tight, 10) == [(H, 1500)]
    assert writes(tight, 28) == [(C, 2750), (H, 2500)]
    # Without the AutoMode feature there is no deadband to keep: one write only.
    no_auto = thermostat(3, features=1 | 2)
    assert writes(no_auto, 19) == [(C, 1900)]


@given(
    st.sampled_from([0, 1, 3, 4, 5, 6, 7, 8, 9]),
    st.floats(-10, 45),
    st.integers(700, 3000),
    st.integers(1600, 3200),
)
def test_setpoints_always_respect_limits_and_deadband(
    mode: int, celsius: float, heating: int, cooling: int
) -> None:
    if cooling - heating < 250:
        cooling = min(3200, heating + 250)
        heating = cooling - 250
    tool = thermostat(mode, heating=heating, cooling=cooling)
    state = {H: heating, C: cooling}
    for name, value in writes(tool, celsius):
        state[name] = value
    assert 700 <= state[H] <= 3000
    assert 1600 <= state[C] <= 3200
    assert state[C] - state[H] >= 250


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "21"])
def test_bad_temperature_names_the_parameter(value: Any) -> None:
    with bad("^celsius must be a finite number"):
        thermostat(4).plan({"celsius": value})


# --- thermostat modes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sequence", "has_auto", "modes"),
    [
        (0, True, ["off", "cool"]),  # CoolingOnly
        (1, True, ["off", "cool"]),  # CoolingWithReheat
        (2, True, ["off", "heat"]),  # HeatingOnly
        (3, True, ["off", "heat", "emergency_heat"]),  # HeatingWithReheat
        (4, True, ["off", "heat", "cool", "auto"]),  # CoolingAndHeating
        (4, False, ["off", "heat", "cool"]),
        (5, True, ["off", "heat", "cool", "auto", "emergency_heat"]),  # ...WithReheat
        (5, False, ["off", "heat", "cool", "emergency_heat"]),
        (None, True, ["off", "heat"]),  # unknown: the cluster's mandatory heating
        (6, True, ["off", "heat"]),
    ],
)
def test_allowed_modes_per_control_sequence(
    sequence: int | None, has_auto: bool, modes: list[str]
) -> None:
    assert cv.allowed_modes(sequence, has_auto) == modes
    for mode in modes:
        assert cv.mode_name(cv.SYSTEM_MODES[mode]) == mode


def test_mode_names() -> None:
    assert cv.mode_name(4) == "heat"
    assert cv.mode_name(2) is None  # 2 is reserved
    assert cv.mode_name(None) is None
