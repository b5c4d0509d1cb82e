"""A light's colour as a person names it: "blue", "warm white" (five languages).

A colour light reports its colour as hue and saturation, as CIE xy, or as a white's
temperature in kelvin (its ``color_mode`` says which it shows). The name said is the
nearest of a few everyday ones: the hues of Home Assistant's colour words, and its four
whites (candle light, warm white, cool white, daylight) by temperature; a colour with
little saturation is white.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Mapping
from typing import Any, TypeGuard

# Everyday hues (degrees on the colour wheel) and the whites' temperatures (kelvin).
HUES: tuple[tuple[str, float], ...] = (
    ("red", 0.0),
    ("orange", 30.0),
    ("yellow", 58.0),
    ("green", 120.0),
    ("turquoise", 175.0),
    ("blue", 235.0),
    ("purple", 275.0),
    ("pink", 320.0),
    ("red", 360.0),
)
# A white's name by its temperature: below each bound (kelvin) its name. Home Assistant
# names 1900, 2700, 4000 and 6500 K so; the bounds are where a person's word changes
# (3000-3400 K bulbs are sold as warm white, 4000 K as cool white).
WHITES: tuple[tuple[str, float], ...] = (
    ("candle light", 2300.0),
    ("warm white", 3500.0),
    ("cool white", 5000.0),
    ("daylight", float("inf")),
)
# Below this saturation (percent) a colour reads as white.
PALE = 20.0

SAID: dict[str, dict[str, str]] = {
    "en": {"white": "white", "red": "red", "orange": "orange", "yellow": "yellow",
           "green": "green", "turquoise": "turquoise", "blue": "blue", "purple": "purple",
           "pink": "pink", "candle light": "candle light", "warm white": "warm white",
           "cool white": "cool white", "daylight": "daylight"},
    "de": {"white": "weiß", "red": "rot", "orange": "orange", "yellow": "gelb",
           "green": "grün", "turquoise": "türkis", "blue": "blau", "purple": "violett",
           "pink": "rosa", "candle light": "in Kerzenlicht", "warm white": "warmweiß",
           "cool white": "kaltweiß", "daylight": "in Tageslicht"},
    "fr": {"white": "blanc", "red": "rouge", "orange": "orange", "yellow": "jaune",
           "green": "vert", "turquoise": "turquoise", "blue": "bleu", "purple": "violet",
           "pink": "rose", "candle light": "lumière de bougie", "warm white": "blanc chaud",
           "cool white": "blanc froid", "daylight": "lumière du jour"},
    "es": {"white": "blanco", "red": "rojo", "orange": "naranja", "yellow": "amarillo",
           "green": "verde", "turquoise": "turquesa", "blue": "azul", "purple": "morado",
           "pink": "rosa", "candle light": "luz de vela", "warm white": "blanco cálido",
           "cool white": "blanco frío", "daylight": "luz de día"},
    "nl": {"white": "wit", "red": "rood", "orange": "oranje", "yellow": "geel",
           "green": "groen", "turquoise": "turquoise", "blue": "blauw", "purple": "paars",
           "pink": "roze", "candle light": "kaarslicht", "warm white": "warm wit",
           "cool white": "koel wit", "daylight": "daglicht"},
}  # fmt: skip


def hue_name(hue: float, saturation: float) -> str:
    """Return the everyday name of a hue (degrees) and saturation (percent)."""
    if saturation < PALE:
        return "white"
    hue %= 360.0
    return min(HUES, key=lambda named: abs(named[1] - hue))[0]


def white_name(kelvin: float) -> str:
    """Return the name of a white of ``kelvin``."""
    return next(name for name, below in WHITES if kelvin < below)


def xy_hue(x: float, y: float) -> tuple[float, float] | None:
    """Return (hue in degrees, saturation in percent) of a CIE xy colour, None if none."""
    if y <= 0 or x < 0 or x + y > 1:
        return None
    big_x, big_z = x / y, (1 - x - y) / y  # luminance 1
    rgb = (
        3.2406 * big_x - 1.5372 - 0.4986 * big_z,
        -0.9689 * big_x + 1.8758 + 0.0415 * big_z,
        0.0557 * big_x - 0.2040 + 1.0570 * big_z,
    )
    clipped = [max(0.0, c) for c in rgb]
    top = max(clipped)
    if top <= 0:
        return None
    hue, saturation, _ = colorsys.rgb_to_hsv(*(c / top for c in clipped))
    return hue * 360.0, saturation * 100.0


def colour_name(state: Mapping[str, Any]) -> str | None:
    """Return the name of the colour a light's state shows (None: it reports none).

    ``state`` is its state tool's answer: ``color_mode`` and ``color`` (hue, saturation),
    ``color_xy`` (x, y) or ``color_temperature_kelvin``.
    """
    mode = state.get("color_mode")
    kelvin = state.get("color_temperature_kelvin")
    huesat = state.get("color")
    xy = state.get("color_xy")
    if _finite(kelvin) and kelvin > 0 and (mode == "color_temperature" or not (huesat or xy)):
        return white_name(kelvin)
    if isinstance(huesat, Mapping) and mode != "xy":
        hue, saturation = huesat.get("hue"), huesat.get("saturation")
        if _finite(hue) and _finite(saturation):
            return hue_name(hue, saturation)
    if isinstance(xy, Mapping):
        x, y = xy.get("x"), xy.get("y")
        if _finite(x) and _finite(y):
            found = xy_hue(x, y)
            if found is not None:
                return hue_name(*found)
    return None


def _finite(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a usable number (a device may report anything)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def colour_said(language: str, name: str) -> str:
    """Return a colour's name in ``language`` (English when unknown)."""
    return SAID.get(language, SAID["en"]).get(name, name)
