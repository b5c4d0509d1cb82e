"""The home's units for spoken temperatures: configured, or from its thermostats or locale.

``home_units(configured, devices)`` is ``metric`` (degrees Celsius) or ``imperial``
(degrees Fahrenheit): the configured ``voice.units`` unless ``auto``; then Fahrenheit
when any thermostat displays Fahrenheit (Thermostat User Interface Configuration,
TemperatureDisplayMode 1), else when the locale is of a country that uses it, else
Celsius. ``explicit_unit(text)`` takes a said unit out of a sentence ("68 degrees
fahrenheit", "21 °C") so the templates see the number alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from bridge.matter import Device

METRIC, IMPERIAL = "metric", "imperial"
THERMOSTAT_UI, DISPLAY_MODE, FAHRENHEIT_MODE = 0x0204, 0x0000, 1
# Countries whose everyday temperatures are in Fahrenheit.
_FAHRENHEIT_COUNTRIES = frozenset({"US", "LR", "MM", "BS", "BZ", "KY", "PW", "FM", "MH"})
# A unit said: "°F", "fahrenheit", "celsius", or one letter after a number or after the
# word for degrees ("68 F", "68F", "68 degrees F", "21 Grad C"); never a letter that
# starts a word ("20 c'est").
_DEGREE_WORDS = ("degrees", "degree", "grad", "grados", "grado", "degrés", "degré", "graden")
_AFTER = "|".join(["(?<=\\d)", *(f"(?<=\\b{w})" for w in _DEGREE_WORDS)])
_EXPLICIT = re.compile(
    r"\s*°\s*([fc])\b|\s*\b(fahrenheit|celsius|centigrade)\b"
    rf"|(?:{_AFTER})\s*([fc])(?![\w'\u2019])",
    re.IGNORECASE,
)


def home_units(
    configured: str, devices: Sequence[Device], env: Mapping[str, str] = os.environ
) -> str:
    """Return the units the home speaks temperatures in (``metric`` or ``imperial``)."""
    if configured in (METRIC, IMPERIAL):
        return configured
    modes = [d.attr(THERMOSTAT_UI, DISPLAY_MODE) for d in devices if d.kind == "thermostat"]
    if any(m == FAHRENHEIT_MODE for m in modes):
        return IMPERIAL
    if any(isinstance(m, int) for m in modes):
        return METRIC
    locale = env.get("LC_ALL") or env.get("LC_MEASUREMENT") or env.get("LANG") or ""
    country = locale.split(".", 1)[0].partition("_")[2].upper()
    return IMPERIAL if country in _FAHRENHEIT_COUNTRIES else METRIC


# The unit an answer is asked in: "how warm is it in the hall in fahrenheit", "wie warm
# ist es im Bad in Fahrenheit", "en degrés Celsius".
_ASKED_IN = re.compile(
    r"\s*\b(?:in|en)\s+(?:(?:degrees?|grad|degrés?|grados?|graden)\s+)?"
    r"(?=(?:fahrenheit|celsius|centigrade)\b)",
    re.IGNORECASE,
)


def explicit_unit(text: str) -> tuple[str, str | None]:
    """Return ``text`` without a said unit, and that unit (``None``: none said)."""
    text = _ASKED_IN.sub(" ", text)
    found = _EXPLICIT.search(text)
    if found is None:
        return text, None
    word = next(g for g in found.groups() if g).casefold()
    unit = IMPERIAL if word.startswith("f") else METRIC
    return " ".join(_EXPLICIT.sub(" ", text).split()), unit


def to_celsius(value: float, units: str) -> float:
    """Return a spoken temperature in degrees Celsius (one decimal)."""
    return round((value - 32) * 5 / 9, 1) if units == IMPERIAL else value


def from_celsius(value: float, units: str) -> float:
    """Return degrees Celsius in the home's units (one decimal)."""
    return round(value * 9 / 5 + 32, 1) if units == IMPERIAL else value
