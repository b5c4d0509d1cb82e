"""Human units ↔ Matter units: pure functions, no I/O, no Matter library.

Levels (percent ↔ 1-254 within a device's min/max), transition seconds (→ tenths),
colours (CSS names, ``#rgb``/``#rrggbb`` hex, hue/saturation → Matter hue/saturation,
enhanced hue or CIE xy), colour temperature (kelvin ↔ mireds within the physical
limits), temperatures (°C/°F ↔ 0.01 °C setpoints clamped to the absolute and user limits
with the heat/cool deadband respected) and thermostat modes per
ControlSequenceOfOperation. Every function raises ``InvalidParamsError`` for input a
person could get wrong.
"""

from __future__ import annotations

import colorsys
import math
import re
from dataclasses import dataclass

from bridge.errors import InvalidParamsError

# --- levels and times ----------------------------------------------------------------

LEVEL_MIN = 1
LEVEL_MAX = 254


def finite(value: float, name: str) -> float:
    """Return ``value`` as a float; raise ``InvalidParamsError`` naming ``name`` if not finite."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidParamsError(f"{name} must be a finite number, got {value!r}", {"field": name})
    return float(value)


def percent_to_level(percent: float, min_level: int | None, max_level: int | None) -> int:
    """Return the level for ``percent`` (0-100) within ``[min_level, max_level]``.

    0 % gives the minimum level (the "with OnOff" commands then turn the light off); any
    positive percentage gives at least one step above the minimum so it stays on.
    """
    lo, hi = _level_bounds(min_level, max_level)
    percent = finite(percent, "percent")
    if not 0 <= percent <= 100:
        raise InvalidParamsError(
            f"percent must be between 0 and 100, got {percent:g}", {"field": "percent"}
        )
    if percent == 0:
        return lo
    level = round(lo + (hi - lo) * percent / 100)
    return max(lo + 1, min(hi, level)) if hi > lo else hi


def level_to_percent(level: int | None, min_level: int | None, max_level: int | None) -> int | None:
    """Return the whole percentage a level stands for, or ``None`` when unknown."""
    if not isinstance(level, int) or isinstance(level, bool):
        return None
    lo, hi = _level_bounds(min_level, max_level)
    if hi <= lo:
        return 100
    level = max(lo, min(hi, level))
    return round((level - lo) * 100 / (hi - lo))


def _level_bounds(min_level: int | None, max_level: int | None) -> tuple[int, int]:
    lo = (
        min_level
        if isinstance(min_level, int) and LEVEL_MIN <= min_level <= LEVEL_MAX
        else LEVEL_MIN
    )
    hi = max_level if isinstance(max_level, int) and lo <= max_level <= LEVEL_MAX else LEVEL_MAX
    return lo, hi


def seconds_to_tenths(seconds: float | None) -> int | None:
    """Return a transition time in tenths of a second (0-65534), ``None`` for none given."""
    if seconds is None:
        return None
    seconds = finite(seconds, "transition_seconds")
    if not 0 <= seconds <= 6553.4:
        raise InvalidParamsError(
            f"transition_seconds must be between 0 and 6553.4, got {seconds:g}",
            {"field": "transition_seconds"},
        )
    return round(seconds * 10)


# --- colours -------------------------------------------------------------------------

_CSS = """
aliceblue f0f8ff antiquewhite faebd7 aqua 00ffff aquamarine 7fffd4 azure f0ffff beige f5f5dc
bisque ffe4c4 black 000000 blanchedalmond ffebcd blue 0000ff blueviolet 8a2be2 brown a52a2a
burlywood deb887 cadetblue 5f9ea0 chartreuse 7fff00 chocolate d2691e coral ff7f50
cornflowerblue 6495ed cornsilk fff8dc crimson dc143c cyan 00ffff darkblue 00008b
darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9 darkgreen 006400 darkgrey a9a9a9
darkkhaki bdb76b darkmagenta 8b008b darkolivegreen 556b2f darkorange ff8c00 darkorchid 9932cc
darkred 8b0000 darksalmon e9967a darkseagreen 8fbc8f darkslateblue 483d8b darkslategray 2f4f4f
darkslategrey 2f4f4f darkturquoise 00ced1 darkviolet 9400d3 deeppink ff1493 deepskyblue 00bfff
dimgray 696969 dimgrey 696969 dodgerblue 1e90ff firebrick b22222 floralwhite fffaf0
forestgreen 228b22 fuchsia ff00ff gainsboro dcdcdc ghostwhite f8f8ff gold ffd700
goldenrod daa520 gray 808080 green 008000 greenyellow adff2f grey 808080 honeydew f0fff0
hotpink ff69b4 indianred cd5c5c indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa
lavenderblush fff0f5 lawngreen 7cfc00 lemonchiffon fffacd lightblue add8e6 lightcoral f08080
lightcyan e0ffff lightgoldenrodyellow fafad2 lightgray d3d3d3 lightgreen 90ee90 lightgrey d3d3d3
lightpink ffb6c1 lightsalmon ffa07a lightseagreen 20b2aa lightskyblue 87cefa
lightslategray 778899 lightslategrey 778899 lightsteelblue b0c4de lightyellow ffffe0 lime 00ff00
limegreen 32cd32 linen faf0e6 magenta ff00ff maroon 800000 mediumaquamarine 66cdaa
mediumblue 0000cd mediumorchid ba55d3 mediumpurple 9370db mediumseagreen 3cb371
mediumslateblue 7b68ee mediumspringgreen 00fa9a mediumturquoise 48d1cc mediumvioletred c71585
midnightblue 191970 mintcream f5fffa mistyrose ffe4e1 moccasin ffe4b5 navajowhite ffdead
navy 000080 oldlace fdf5e6 olive 808000 olivedrab 6b8e23 orange ffa500 orangered ff4500
orchid da70d6 palegoldenrod eee8aa palegreen 98fb98 paleturquoise afeeee palevioletred db7093
papayawhip ffefd5 peachpuff ffdab9 peru cd853f pink ffc0cb plum dda0dd powderblue b0e0e6
purple 800080 rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1
saddlebrown 8b4513 salmon fa8072 sandybrown f4a460 seagreen 2e8b57 seashell fff5ee
sienna a0522d silver c0c0c0 skyblue 87ceeb slateblue 6a5acd slategray 708090 slategrey 708090
snow fffafa springgreen 00ff7f steelblue 4682b4 tan d2b48c teal 008080 thistle d8bfd8
tomato ff6347 turquoise 40e0d0 violet ee82ee wheat f5deb3 white ffffff whitesmoke f5f5f5
yellow ffff00 yellowgreen 9acd32
"""
_pairs = _CSS.split()
CSS_COLORS: dict[str, str] = dict(zip(_pairs[::2], _pairs[1::2], strict=True))
_HEX_RE = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class HueSat:
    """A colour as hue in degrees (0-360) and saturation in percent (0-100)."""

    hue: float
    saturation: float


def parse_color(text: str) -> tuple[int, int, int]:
    """Return the ``(r, g, b)`` of a CSS colour name or a ``#rgb``/``#rrggbb`` hex string."""
    key = re.sub(r"[\s_-]", "", text).lower()
    hex_text = CSS_COLORS.get(key)
    if hex_text is None:
        match = _HEX_RE.match(text.strip())
        if match is None:
            raise InvalidParamsError(
                f"color: unknown colour '{text}': use a CSS colour name (e.g. 'orange') "
                "or hex like '#ff8800'",
                {"field": "color", "color": text},
            )
        hex_text = match.group(1)
        if len(hex_text) == 3:
            hex_text = "".join(c * 2 for c in hex_text)
    return int(hex_text[0:2], 16), int(hex_text[2:4], 16), int(hex_text[4:6], 16)


def huesat(hue: float, saturation: float) -> HueSat:
    """Return a checked hue (0-360 degrees) / saturation (0-100 %) pair."""
    hue = finite(hue, "hue")
    saturation = finite(saturation, "saturation")
    if not 0 <= hue <= 360:
        raise InvalidParamsError(f"hue must be between 0 and 360, got {hue:g}", {"field": "hue"})
    if not 0 <= saturation <= 100:
        raise InvalidParamsError(
            f"saturation must be between 0 and 100, got {saturation:g}", {"field": "saturation"}
        )
    return HueSat(hue=hue, saturation=saturation)


def rgb_to_huesat(rgb: tuple[int, int, int]) -> HueSat:
    """Return hue (degrees) and saturation (percent) of an sRGB colour."""
    h, s, _v = colorsys.rgb_to_hsv(*(c / 255 for c in rgb))
    return HueSat(hue=h * 360, saturation=s * 100)


def huesat_to_rgb(hs: HueSat) -> tuple[int, int, int]:
    """Return the full-brightness sRGB colour of a hue/saturation pair."""
    r, g, b = colorsys.hsv_to_rgb((hs.hue % 360) / 360, hs.saturation / 100, 1.0)
    return round(r * 255), round(g * 255), round(b * 255)


def matter_hue(hue_degrees: float) -> int:
    """Return the ColorControl hue (0-254) for a hue in degrees."""
    return min(254, round((hue_degrees % 360) * 254 / 360))


def matter_enhanced_hue(hue_degrees: float) -> int:
    """Return the ColorControl enhanced hue (0-65535) for a hue in degrees."""
    return round((hue_degrees % 360) * 65536 / 360) % 65536


def matter_saturation(saturation_percent: float) -> int:
    """Return the ColorControl saturation (0-254) for a saturation in percent."""
    return round(max(0.0, min(100.0, saturation_percent)) * 254 / 100)


def rgb_to_xy(rgb: tuple[int, int, int]) -> tuple[int, int]:
    """Return ColorControl ``(colorX, colorY)`` (0-65279) of an sRGB colour (D65, CIE 1931)."""

    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    x = r * 0.4124 + g * 0.3576 + b * 0.1805
    y = r * 0.2126 + g * 0.7152 + b * 0.0722
    z = r * 0.0193 + g * 0.1192 + b * 0.9505
    total = x + y + z
    if total == 0:
        cx, cy = 0.3127, 0.3290  # black has no chromaticity: use the white point
    else:
        cx, cy = x / total, y / total
    return min(65279, round(cx * 65536)), min(65279, round(cy * 65536))


def kelvin_to_mireds(kelvin: float, phys_min: int | None, phys_max: int | None) -> int:
    """Return mireds for ``kelvin`` clamped to the device's physical mired limits."""
    kelvin = finite(kelvin, "kelvin")
    if kelvin <= 0:
        raise InvalidParamsError(f"kelvin must be positive, got {kelvin:g}", {"field": "kelvin"})
    lo = phys_min if isinstance(phys_min, int) and 0 < phys_min else 1
    hi = phys_max if isinstance(phys_max, int) and lo <= phys_max <= 65279 else 65279
    return max(lo, min(hi, round(1_000_000 / kelvin)))


def mireds_to_kelvin(mireds: int | None) -> int | None:
    """Return kelvin for a mired value, ``None`` when unknown or zero."""
    if not isinstance(mireds, int) or isinstance(mireds, bool) or mireds <= 0:
        return None
    return round(1_000_000 / mireds)


# --- temperatures --------------------------------------------------------------------

# Absolute limits the Thermostat cluster specifies when a device reports none.
DEFAULT_ABS_HEAT = (700, 3000)
DEFAULT_ABS_COOL = (1600, 3200)
DEFAULT_DEADBAND = 25  # 0.1 °C units, as MinSetpointDeadBand reports it


def to_celsius(value: float, unit: str) -> float:
    """Return ``value`` in °C from ``unit`` ``"C"`` or ``"F"``."""
    if unit.upper() == "F":
        return (value - 32) * 5 / 9
    return value


def from_centi_celsius(value: int | None, unit: str) -> float | None:
    """Return a 0.01 °C Matter temperature in ``unit``, rounded to 0.1; ``None`` if unknown."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    celsius = value / 100
    return round(celsius * 9 / 5 + 32, 1) if unit.upper() == "F" else round(celsius, 2)


def delta_to_celsius(value: float, unit: str) -> float:
    """Return a temperature difference in °C from ``unit``."""
    return value * 5 / 9 if unit.upper() == "F" else value


@dataclass(frozen=True, slots=True, kw_only=True)
class SetpointLimits:
    """The range one setpoint may take, in 0.01 °C."""

    low: int
    high: int


def setpoint_limits(
    abs_min: int | None,
    abs_max: int | None,
    user_min: int | None,
    user_max: int | None,
    default: tuple[int, int],
) -> SetpointLimits:
    """Return the tightest limits from the absolute and user limits (defaults when unknown)."""
    low = _temp(abs_min, default[0])
    high = _temp(abs_max, default[1])
    low = max(low, _temp(user_min, low))
    high = min(high, _temp(user_max, high))
    if high < low:
        low, high = high, low
    return SetpointLimits(low=low, high=high)


def _temp(value: int | None, fallback: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and -27315 <= value <= 32767:
        return value
    return fallback


def clamp_setpoint(centi: int, limits: SetpointLimits) -> int:
    """Return ``centi`` clamped into ``limits``."""
    return max(limits.low, min(limits.high, centi))


def deadband_centi(min_setpoint_deadband: int | None) -> int:
    """Return the heat/cool deadband in 0.01 °C from MinSetpointDeadBand (0.1 °C units)."""
    if isinstance(min_setpoint_deadband, int) and 0 <= min_setpoint_deadband <= 127:
        return min_setpoint_deadband * 10
    return DEFAULT_DEADBAND * 10


# --- thermostat modes ----------------------------------------------------------------

SYSTEM_MODES: dict[str, int] = {
    "off": 0,
    "auto": 1,
    "cool": 3,
    "heat": 4,
    "emergency_heat": 5,
    "precooling": 6,
    "fan_only": 7,
    "dry": 8,
    "sleep": 9,
}


def allowed_modes(control_sequence: int | None, has_auto: bool) -> list[str]:
    """Return the system modes a ControlSequenceOfOperation value allows, in a fixed order."""
    cooling = control_sequence in (0, 1, 4, 5)
    heating = control_sequence in (2, 3, 4, 5)
    if control_sequence not in (0, 1, 2, 3, 4, 5):
        heating = True  # unknown sequence: the mandatory HeatingOnly behaviour
    modes = ["off"]
    if heating:
        modes.append("heat")
    if cooling:
        modes.append("cool")
    if heating and cooling and has_auto:
        modes.append("auto")
    if control_sequence in (3, 5):
        modes.append("emergency_heat")
    return modes


def mode_name(system_mode: int | None) -> str | None:
    """Return the name of a SystemMode value, ``None`` when unknown."""
    for name, value in SYSTEM_MODES.items():
        if value == system_mode:
            return name
    return None
