"""A light's colour named as a person would: hue, CIE xy and white temperatures."""

from __future__ import annotations

import pytest

from bridge.voice.colours import SAID, colour_name, colour_said, hue_name, white_name, xy_hue
from bridge.voice.responses import LANGUAGES


@pytest.mark.parametrize(
    ("hue", "saturation", "name"),
    [
        (0, 100, "red"),
        (355, 90, "red"),
        (25, 100, "orange"),
        (60, 100, "yellow"),
        (125, 80, "green"),
        (180, 70, "turquoise"),
        (240, 100, "blue"),
        (280, 60, "purple"),
        (325, 70, "pink"),
        (240, 10, "white"),  # hardly any colour: white, whatever the hue
    ],
)
def test_a_hue_is_named_by_the_nearest_everyday_colour(
    hue: float, saturation: float, name: str
) -> None:
    assert hue_name(hue, saturation) == name


@pytest.mark.parametrize(
    ("x", "y", "name"),
    [
        (0.7006, 0.2993, "red"),  # sRGB and Hue bulbs' primaries
        (0.1724, 0.7468, "green"),
        (0.1355, 0.0399, "blue"),
        (0.3127, 0.3290, "white"),  # D65
        (0.4317, 0.5005, "yellow"),
    ],
)
def test_an_xy_colour_is_named(x: float, y: float, name: str) -> None:
    found = xy_hue(x, y)
    assert found is not None
    assert hue_name(*found) == name


@pytest.mark.parametrize(("x", "y"), [(0.5, 0.0), (-0.1, 0.3), (0.8, 0.5)])
def test_an_impossible_xy_has_no_colour(x: float, y: float) -> None:
    assert xy_hue(x, y) is None


@pytest.mark.parametrize(
    ("kelvin", "name"),
    [
        (1900, "candle light"),
        (2700, "warm white"),
        (3333, "warm white"),
        (4000, "cool white"),
        (5000, "daylight"),
        (6500, "daylight"),
    ],
)
def test_a_white_is_named_by_its_temperature(kelvin: float, name: str) -> None:
    assert white_name(kelvin) == name


def test_the_mode_the_light_shows_decides() -> None:
    both = {
        "color": {"hue": 240, "saturation": 100},
        "color_xy": {"x": 0.7006, "y": 0.2993},
        "color_temperature_kelvin": 2700,
    }
    assert colour_name({**both, "color_mode": "color_temperature"}) == "warm white"
    assert colour_name({**both, "color_mode": "hue_saturation"}) == "blue"
    assert colour_name({**both, "color_mode": "xy"}) == "red"
    # only a white temperature reported: that, whatever the mode says
    assert colour_name({"color_mode": "hue_saturation", "color_temperature_kelvin": 4000}) == (
        "cool white"
    )
    # nothing usable: no name (the answer then says only whether it is on)
    for state in ({}, {"on": True}, {"color": {"hue": None}}, {"color_xy": {"x": 0.3, "y": 0}}):
        assert colour_name(state) is None
    # nothing a device could report breaks the answer: not a number, infinite, a flag
    nan, inf = float("nan"), float("inf")
    for state in (
        {"color_temperature_kelvin": inf},
        {"color_temperature_kelvin": nan},
        {"color_temperature_kelvin": True},
        {"color": {"hue": nan, "saturation": 80}},
        {"color": {"hue": 120, "saturation": inf}},
        {"color_xy": {"x": nan, "y": 0.3}},
        {"color_xy": {"x": 0.3, "y": inf}},
        {"color_mode": "xy", "color_xy": {"x": "0.3", "y": 0.3}},
    ):
        assert colour_name(state) is None, state


def test_every_language_names_every_colour() -> None:
    names = set(SAID["en"])
    for language in LANGUAGES:
        assert set(SAID[language]) == names, language
        assert all(colour_said(language, n) for n in names)
    assert colour_said("it", "blue") == "blue"  # an unknown language: English
