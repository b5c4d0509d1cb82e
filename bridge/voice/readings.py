"""Spoken answers to questions about measured values: power, energy, CO2, light, leaks.

``answer_measure(plan, state, lang)`` reads the field a ``MEASURE_INTENT`` plan asked for
(``kind_words.MEASURES``) from the device's state tool result and says it in ``lang``,
in the units the cluster maps give (W, kWh, ppm, µg/m³, lux, minutes); a value the
device does not report right now is said to be missing, never guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bridge.voice.kind_words import MEASURES
from bridge.voice.planner import spoken_number
from bridge.voice.responses import say

if TYPE_CHECKING:
    from bridge.voice.planner import Plan


# An appliance's or a robot's OperationalState, as its state tool names it.
_STATUSES = frozenset(
    {"running", "paused", "stopped", "error", "seeking_charger", "charging", "docked"}
)


def answer_measure(plan: Plan, state: dict[str, Any], lang: str) -> str:
    """Return the sentence answering the plan's ``measure`` from the device's ``state``."""
    measure = str(plan.values.get("measure", ""))
    value: Any = state.get(MEASURES.get(measure, ("",))[0])
    target = plan.target
    unit = ""
    if isinstance(value, dict):  # a concentration: {"value": 612.0, "unit": "ppm"}
        unit = str(value.get("unit", ""))
        value = value.get("value")
    if measure == "leak" and isinstance(value, bool):
        return say(lang, "read_leak_yes" if value else "read_leak_no", target=target)
    if measure == "aqi" and isinstance(value, str):
        return say(lang, "read_aqi", target=target, value=say(lang, f"aq_{value}"))
    if measure == "charging" and isinstance(value, str):
        key = {
            "charging": "read_charging_yes",
            "not_plugged_in": "read_charging_unplugged",
            "plugged_in_no_demand": "read_charging_plugged",
            "plugged_in_demand": "read_charging_plugged",
        }.get(value, "read_charging_no")  # discharging, session ending, fault
        return say(lang, key, target=target)
    if measure == "status" and value in _STATUSES:
        return say(lang, f"status_{value}", target=target)
    if measure == "minutes_left" and state.get("status") not in (None, "running", "paused"):
        return say(lang, "read_not_running", target=target)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return say(lang, "no_reading", target=target)
    rounded = round(float(value), 2) if measure == "energy" else round(float(value))
    spoken = spoken_number(rounded, lang)
    return say(lang, f"read_{measure}", target=target, value=spoken, unit=unit)
