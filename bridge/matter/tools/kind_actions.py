"""Converters of the newer device kinds: fans, energy, sensors, valves, vacuums, appliances.

Each class turns a cluster-map row's validated parameters (human units, the device's own
names for its modes and rooms) into the exact ``MatterAction``s; each state converter
turns attribute values into human units (W, kWh, %, lux, hPa, m³/h, ppm / µg/m³,
minutes left, mode and room names). Limits and names are read from the device (its
``SupportedModes``, ``SupportedAreas``, ``SpeedMax``, ``MaximumChargeCurrent``), never
assumed. ``CONVERTERS`` and ``STATE_CONVERTERS`` here are the full tables - these and
``actions``' own - that the cluster maps and the generator use, so a map row names them
like any other.

One module because every newer kind's converter shares the same mode, area and unit
helpers; each converter is a short class or function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bridge.errors import InvalidParamsError
from bridge.matter.spec.catalogue import cluster_info
from bridge.matter.spec.models import ActionKind, MatterAction
from bridge.matter.tools import actions
from bridge.matter.tools import conversions as cv
from bridge.matter.tools.actions import (
    Converter,
    RowContext,
    StateConverter,
    _json_copy,
    _percent100ths_closed,
    _transition,
)

# --- fans ------------------------------------------------------------------------------

# FanControl FanModeEnum and the modes each FanModeSequenceEnum value offers (spec 4.4).
FAN_MODES = {"off": 0, "low": 1, "medium": 2, "high": 3, "on": 4, "auto": 5, "smart": 6}
FAN_SEQUENCES: dict[int, tuple[str, ...]] = {
    0: ("off", "low", "medium", "high"),
    1: ("off", "low", "high"),
    2: ("off", "low", "medium", "high", "auto"),
    3: ("off", "low", "high", "auto"),
    4: ("off", "high", "auto"),
    5: ("off", "high"),
}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _named(table: Mapping[int, str]) -> Callable[[list[Any], str], Any]:
    """Return a state converter reading an enum attribute as its name in ``table``."""

    def convert(values: list[Any], unit: str) -> Any:
        v = _int(values[0])
        return None if v is None else table.get(v, "unknown")

    return convert


def _fan_modes(ctx: RowContext) -> tuple[str, ...]:
    sequence = _int(ctx.attr("FanModeSequence"))
    return FAN_SEQUENCES.get(sequence if sequence is not None else 0, FAN_SEQUENCES[0])


def _choice(value: Any, allowed: Sequence[str], field: str) -> str:
    text = str(value).strip()
    for name in allowed:
        if name.casefold() == text.casefold():
            return name
    raise InvalidParamsError(
        f"{field} must be one of {', '.join(allowed)}, got {text!r}",
        {"field": field, "allowed": list(allowed)},
    )


class NamedChoice(Converter):
    """One parameter chosen by name among those the device offers → what that name does.

    A subclass says where the names come from (``choices``), which parameter and fact
    carry them (``field``, ``fact``), how many it needs to offer a choice at all
    (``fewest``) and what the chosen name becomes (``chosen``).
    """

    field = "mode"
    fact = "modes"
    fewest = 1

    def choices(self, ctx: RowContext) -> Sequence[str]:
        """Return the names this device offers, in its order."""
        raise NotImplementedError

    def chosen(self, ctx: RowContext, name: str, choices: Sequence[str]) -> list[MatterAction]:
        """Return the actions for ``name``, one of ``choices``."""
        raise NotImplementedError

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the device offers enough names to choose among."""
        return len(self.choices(ctx)) >= self.fewest

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the device's names as the field's enum."""
        out: dict[str, Any] = _json_copy(schema)
        out["properties"][self.field]["enum"] = list(self.choices(ctx))
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return the names, comma-separated, under ``fact``."""
        return {self.fact: ", ".join(self.choices(ctx))}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the actions for the name asked for (any case), or refuse it."""
        choices = self.choices(ctx)
        return self.chosen(ctx, _choice(params[self.field], choices, self.field), choices)


class FanMode(NamedChoice):
    """Mode name → FanMode write, among the modes the device's FanModeSequence offers."""

    def choices(self, ctx: RowContext) -> Sequence[str]:
        """Return the modes of the device's FanModeSequence."""
        return _fan_modes(ctx)

    def chosen(self, ctx: RowContext, name: str, choices: Sequence[str]) -> list[MatterAction]:
        """Return the FanMode write."""
        return [ctx.write("FanMode", FAN_MODES[name])]


def _percent(params: Mapping[str, Any], name: str) -> int:
    value = cv.finite(params[name], name)
    if not 0 <= value <= 100:
        raise InvalidParamsError(
            f"{name} must be between 0 and 100, got {value:g}", {"field": name}
        )
    return round(value)


class FanPercent(Converter):
    """Speed percent → PercentSetting write (0 turns the fan off)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the PercentSetting write."""
        return [ctx.write("PercentSetting", _percent(params, "percent"))]


class FanSpeed(Converter):
    """Speed step → SpeedSetting write within 0..SpeedMax of the device."""

    def _max(self, ctx: RowContext) -> int | None:
        top = _int(ctx.attr("SpeedMax"))
        return top if top is not None and 1 <= top <= 100 else None

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the device reports its top speed."""
        return self._max(ctx) is not None

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the device's top speed."""
        out: dict[str, Any] = _json_copy(schema)
        out["properties"]["speed"]["maximum"] = self._max(ctx)
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{speed_max}``."""
        return {"speed_max": str(self._max(ctx))}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the SpeedSetting write."""
        top = self._max(ctx) or 0
        speed = cv.finite(params["speed"], "speed")
        if speed != int(speed) or not 0 <= speed <= top:
            raise InvalidParamsError(
                f"speed must be a whole number from 0 to {top}, got {speed:g}", {"field": "speed"}
            )
        return [ctx.write("SpeedSetting", int(speed))]


# --- modes (ModeBase clusters and ModeSelect): the device's own names ------------------


def supported_modes(value: Any) -> list[tuple[str, int, tuple[int, ...]]]:
    """Return ``(label, mode, semantic tag values)`` of a SupportedModes list."""
    out: list[tuple[str, int, tuple[int, ...]]] = []
    if not isinstance(value, list):
        return out
    for entry in value:
        if not isinstance(entry, Mapping):
            continue
        label = entry.get("0", entry.get("label"))
        mode = _int(entry.get("1", entry.get("mode")))
        tags_raw = entry.get("2", entry.get("modeTags", entry.get("semanticTags")))
        tags: list[int] = []
        if isinstance(tags_raw, list):
            for tag in tags_raw:
                if isinstance(tag, Mapping):
                    found = _int(tag.get("1", tag.get("value")))
                    if found is not None:
                        tags.append(found)
        if isinstance(label, str) and label.strip() and mode is not None:
            out.append((label.strip(), mode, tuple(tags)))
    return out


class ModeByName(Converter):
    """A mode by the device's own name → ChangeToMode with its number."""

    def _modes(self, ctx: RowContext) -> list[tuple[str, int, tuple[int, ...]]]:
        return supported_modes(ctx.attr("SupportedModes"))

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the device lists named modes."""
        return bool(self._modes(ctx))

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the device's mode names as an enum."""
        out: dict[str, Any] = _json_copy(schema)
        out["properties"]["mode"]["enum"] = [label for label, _m, _t in self._modes(ctx)]
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{modes}``: the device's mode names."""
        return {"modes": ", ".join(label for label, _m, _t in self._modes(ctx))}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return ChangeToMode with the named mode's number."""
        modes = self._modes(ctx)
        label = _choice(params["mode"], [m[0] for m in modes], "mode")
        number = next(m for lbl, m, _t in modes if lbl == label)
        return [ctx.command(ctx.row.command or "ChangeToMode", {"newMode": number})]


def chime_sounds(value: Any) -> list[tuple[int, str]]:
    """Return ``(ChimeID, Name)`` of a Chime's InstalledChimeSounds (fields by tag or name)."""
    out: list[tuple[int, str]] = []
    if not isinstance(value, list):
        return out
    for entry in value[:64]:
        if not isinstance(entry, dict):
            continue
        chime = _int(entry.get("0", entry.get("chimeID", entry.get("ChimeID"))))
        name = entry.get("1", entry.get("name", entry.get("Name")))
        if chime is not None and isinstance(name, str) and name.strip():
            out.append((chime, name.strip()[:64]))
    return out


# RVC Run Mode semantic tags (spec 7.2.7.2): Idle, Cleaning, Mapping.
RVC_IDLE, RVC_CLEANING = 0x4000, 0x4001


class RvcRunTagged(Converter):
    """Start (or stop) a robot vacuum: ChangeToMode to its first mode with a given tag."""

    def __init__(self, tag: int) -> None:
        self.tag = tag

    def _mode(self, ctx: RowContext) -> int | None:
        for _label, mode, tags in supported_modes(ctx.attr("SupportedModes")):
            if self.tag in tags:
                return mode
        return None

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the vacuum has a mode with the row's tag."""
        return self._mode(ctx) is not None

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return ChangeToMode with the tagged mode's number."""
        mode = self._mode(ctx)
        assert mode is not None  # noqa: S101 - applies() checked it
        return [ctx.command("ChangeToMode", {"newMode": mode})]


# --- service areas: a robot's rooms by their names -------------------------------------


def supported_areas(value: Any) -> list[tuple[int, str]]:
    """Return ``(area id, name)`` of a SupportedAreas list (LocationName, else landmark)."""
    out: list[tuple[int, str]] = []
    if not isinstance(value, list):
        return out
    for entry in value:
        if not isinstance(entry, Mapping):
            continue
        area_id = _int(entry.get("0", entry.get("areaID")))
        info = entry.get("2", entry.get("areaInfo"))
        name = None
        if isinstance(info, Mapping):
            location = info.get("0", info.get("locationInfo"))
            if isinstance(location, Mapping):
                text = location.get("0", location.get("locationName"))
                name = text.strip() if isinstance(text, str) and text.strip() else None
        if area_id is not None:
            out.append((area_id, name or f"area {area_id}"))
    return out


def _action_on(
    ctx: RowContext, cluster: str, command: str, payload: dict[str, Any]
) -> MatterAction:
    """Return a command on another cluster of the same endpoint."""
    info = cluster_info(cluster)
    assert info is not None  # noqa: S101 - a catalogue cluster named in code
    return MatterAction(
        kind=ActionKind.COMMAND,
        node_id=ctx.device.node_id,
        endpoint_id=ctx.device.endpoint_id,
        cluster=info.name,
        cluster_id=info.id,
        name=command,
        payload=payload,
        timed=info.commands[command].timed,
    )


class CleanAreas(Converter):
    """Room names → SelectAreas with their ids, then start cleaning (RVC Run Mode)."""

    def _areas(self, ctx: RowContext) -> list[tuple[int, str]]:
        return supported_areas(ctx.attr("SupportedAreas"))

    def _start(self, ctx: RowContext) -> int | None:
        run = cluster_info("RvcRunMode")
        assert run is not None  # noqa: S101
        for _label, mode, tags in supported_modes(ctx.device.attr(run.id, 0)):
            if RVC_CLEANING in tags:
                return mode
        return None

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the robot names its areas."""
        return bool(self._areas(ctx))

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the robot's room names as the items' enum."""
        out: dict[str, Any] = _json_copy(schema)
        names = list(dict.fromkeys(name for _i, name in self._areas(ctx)))
        out["properties"]["areas"]["items"]["enum"] = names
        out["properties"]["areas"]["maxItems"] = len(names)
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{areas}``: the robot's room names."""
        return {"areas": ", ".join(dict.fromkeys(name for _i, name in self._areas(ctx)))}

    def targets(self, ctx: RowContext) -> list[str]:
        """Return SelectAreas, and ChangeToMode when the robot can be started by mode."""
        return ["SelectAreas"] + (
            ["RvcRunMode.ChangeToMode"] if self._start(ctx) is not None else []
        )

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return SelectAreas with the named areas' ids, then the start command."""
        areas = self._areas(ctx)
        names = [name for _i, name in areas]
        wanted = params.get("areas")
        if not isinstance(wanted, list) or not wanted:
            raise InvalidParamsError("areas must name at least one room", {"field": "areas"})
        ids: list[int] = []
        for item in wanted:
            name = _choice(item, names, "areas")
            ids.extend(i for i, n in areas if n == name and i not in ids)
        actions = [ctx.command("SelectAreas", {"newAreas": ids})]
        start = self._start(ctx)
        if start is not None and params.get("start", True):
            actions.append(_action_on(ctx, "RvcRunMode", "ChangeToMode", {"newMode": start}))
        return actions


# --- valves ----------------------------------------------------------------------------


class ValveOpen(Converter):
    """Open a valve, for some minutes and to a level where the valve supports them."""

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema; ``percent`` only on a valve with the Level feature."""
        out: dict[str, Any] = _json_copy(schema)
        if not ctx.has_feature("Level"):
            out["properties"].pop("percent", None)
        return out

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return Open with ``openDuration`` (s) and ``targetLevel`` (%) when given."""
        payload: dict[str, Any] = {}
        if "minutes" in params:
            minutes = cv.finite(params["minutes"], "minutes")
            if not 0 < minutes <= 1440:
                raise InvalidParamsError(
                    f"minutes must be between 0 and 1440, got {minutes:g}", {"field": "minutes"}
                )
            payload["openDuration"] = max(1, round(minutes * 60))
        if "percent" in params:
            if not ctx.has_feature("Level"):
                raise InvalidParamsError(
                    f"{ctx.device.name} opens only fully", {"field": "percent"}
                )
            payload["targetLevel"] = _percent(params, "percent")
        return [ctx.command("Open", payload)]


# --- energy: EV charger, water heater boost ---------------------------------------------


def _charge_limits(ctx: RowContext) -> tuple[float, float]:
    """Return the charger's (min, max) charge current in amperes, from its mA attributes."""
    low = _int(ctx.attr("MinimumChargeCurrent"))
    high = _int(ctx.attr("MaximumChargeCurrent"))
    capacity = _int(ctx.attr("CircuitCapacity"))
    user = _int(ctx.attr("UserMaximumChargeCurrent"))
    top = min(v for v in (high, capacity, user, 80_000) if v is not None and v > 0)
    bottom = low if low is not None and 0 < low <= top else min(6000, top)
    return bottom / 1000, top / 1000


class EvseEnableCharging(Converter):
    """Allow charging up to some amperes → EnableCharging (mA), within the charger's limits."""

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the charger's current limits."""
        out: dict[str, Any] = _json_copy(schema)
        low, high = _charge_limits(ctx)
        prop = out["properties"]["max_current_amps"]
        prop["minimum"], prop["maximum"] = low, high
        prop["description"] = f"Highest charge current in amperes ({low:g}-{high:g} A)."
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{current_range}``."""
        low, high = _charge_limits(ctx)
        return {"current_range": f"{low:g}-{high:g} A"}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return EnableCharging with no end time and the current limits in mA."""
        low, high = _charge_limits(ctx)
        amps = cv.finite(params.get("max_current_amps", high), "max_current_amps")
        if not low <= amps <= high:
            raise InvalidParamsError(
                f"max_current_amps must be between {low:g} and {high:g}, got {amps:g}",
                {"field": "max_current_amps"},
            )
        payload = {
            "chargingEnabledUntil": None,
            "minimumChargeCurrent": round(low * 1000),
            "maximumChargeCurrent": round(amps * 1000),
        }
        return [ctx.command("EnableCharging", payload)]


class WaterHeaterBoost(Converter):
    """Boost a water heater for some minutes → Boost{boostInfo{duration s}}."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the Boost command."""
        minutes = cv.finite(params["minutes"], "minutes")
        if not 0 < minutes <= 1440:
            raise InvalidParamsError(
                f"minutes must be between 0 and 1440, got {minutes:g}", {"field": "minutes"}
            )
        return [ctx.command("Boost", {"boostInfo": {"duration": max(1, round(minutes * 60))}})]


# --- appliances: a temperature-controlled cabinet, a microwave --------------------------


def _cabinet_limits(ctx: RowContext) -> tuple[int, int]:
    low, high = _int(ctx.attr("MinTemperature")), _int(ctx.attr("MaxTemperature"))
    if low is None or high is None or high < low:
        return -4000, 30000
    return low, high


class CabinetTemperature(Converter):
    """Target °C / °F → TemperatureControl SetTemperature (0.01 °C) within the device's range.

    The parameter is named by the unit (``celsius`` or ``fahrenheit``), as the
    thermostat's ``set_temperature`` is.
    """

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the cabinet reports its range (the TemperatureNumber feature)."""
        return ctx.has_feature("TemperatureNumber")

    def _range(self, ctx: RowContext) -> tuple[float, float]:
        low, high = _cabinet_limits(ctx)
        a, b = cv.from_centi_celsius(low, ctx.unit), cv.from_centi_celsius(high, ctx.unit)
        assert a is not None  # noqa: S101 - ints in
        assert b is not None  # noqa: S101
        return a, b

    @staticmethod
    def _name(ctx: RowContext) -> str:
        return "fahrenheit" if ctx.unit.upper() == "F" else "celsius"

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the unit's parameter name and the cabinet's range."""
        out: dict[str, Any] = _json_copy(schema)
        low, high = self._range(ctx)
        symbol = "°F" if ctx.unit.upper() == "F" else "°C"
        prop = out["properties"].pop("temperature")
        prop["minimum"], prop["maximum"] = low, high
        prop["description"] = f"Target temperature in {symbol} ({low:g} to {high:g})."
        name = self._name(ctx)
        out["properties"] = {name: prop, **out["properties"]}
        out["required"] = [name if r == "temperature" else r for r in out.get("required", [])]
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{range}``."""
        low, high = self._range(ctx)
        return {"range": f"{low:g} to {high:g} {'°F' if ctx.unit.upper() == 'F' else '°C'}"}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return SetTemperature, clamped to the cabinet's range and step."""
        name = self._name(ctx)
        celsius = cv.to_celsius(cv.finite(params[name], name), ctx.unit)
        low, high = _cabinet_limits(ctx)
        centi = max(low, min(high, round(celsius * 100)))
        step = _int(ctx.attr("Step"))
        if step and step > 0:
            centi = max(low, min(high, low + round((centi - low) / step) * step))
        return [ctx.command("SetTemperature", {"targetTemperature": centi})]


def temperature_levels(value: Any) -> list[str]:
    """Return a TemperatureControl's SupportedTemperatureLevels: its level names, in order.

    A name that is not text, or empty, leaves the whole list unusable (its numbering would
    be wrong): then no level tool is made.
    """
    if not isinstance(value, list) or not value or len(value) > 32:
        return []
    names = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    return names if len(names) == len(value) and len(set(names)) == len(names) else []


class TemperatureLevel(NamedChoice):
    """A cooking zone's or appliance's temperature level by its name → SetTemperature.

    TemperatureControl's TemperatureLevel feature: the device names its levels
    (SupportedTemperatureLevels, e.g. "Low", "Medium", "High") and takes the level's index.
    """

    field = "level"
    fact = "levels"

    def choices(self, ctx: RowContext) -> Sequence[str]:
        """Return the device's level names (none if it names them badly)."""
        return temperature_levels(ctx.attr("SupportedTemperatureLevels"))

    def chosen(self, ctx: RowContext, name: str, choices: Sequence[str]) -> list[MatterAction]:
        """Return SetTemperature with the named level's index."""
        return [ctx.command("SetTemperature", {"targetTemperatureLevel": choices.index(name)})]


# PumpConfigurationAndControl OperationModeEnum (spec 4.2.6.2): Minimum and Maximum need
# the ConstantSpeed feature, Local the LocalOperation feature.
PUMP_MODES = {"normal": 0, "minimum": 1, "maximum": 2, "local": 3}


def _pump_modes(ctx: RowContext) -> list[str]:
    modes = ["normal"]
    if ctx.has_feature("ConstantSpeed"):
        modes += ["minimum", "maximum"]
    if ctx.has_feature("LocalOperation"):
        modes.append("local")
    return modes


class PumpMode(NamedChoice):
    """A pump's operation mode by name → OperationMode write, among those its features allow."""

    fewest = 2  # "normal" alone is no choice

    def choices(self, ctx: RowContext) -> Sequence[str]:
        """Return the modes the pump's features allow."""
        return _pump_modes(ctx)

    def chosen(self, ctx: RowContext, name: str, choices: Sequence[str]) -> list[MatterAction]:
        """Return the OperationMode write."""
        return [ctx.write("OperationMode", PUMP_MODES[name])]


# The Pump device type's LevelControl scale: level 1-200 is a setpoint of 0.5-100 % of the
# pump's range (speed, pressure or flow); above 200 is 100 %, 0 is no setpoint.
PUMP_LEVEL_MAX = 200


class PumpSetpoint(Converter):
    """A pump's setpoint in percent → MoveToLevelWithOnOff on the pump's 1-200 scale."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the level command (0.5 % steps)."""
        percent = cv.finite(params["percent"], "percent")
        if not 0.5 <= percent <= 100:
            raise InvalidParamsError(
                f"percent must be 0.5-100, got {percent:g}", {"field": "percent"}
            )
        payload = {
            "level": max(1, min(PUMP_LEVEL_MAX, round(percent * 2))),
            "transitionTime": _transition(params, nullable=True),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "MoveToLevelWithOnOff", payload)]


def _state_pump_setpoint(values: list[Any], unit: str) -> Any:
    level = _int(values[0])
    return None if level is None or level <= 0 else min(level, PUMP_LEVEL_MAX) / 2


class MicrowaveCook(Converter):
    """Cook for some minutes at a power → SetCookingParameters (s, the device's power scale)."""

    def _limits(self, ctx: RowContext) -> tuple[int, int]:
        low, high = _int(ctx.attr("MinPower")), _int(ctx.attr("MaxPower"))
        return (low if low is not None else 10), (high if high is not None else 100)

    def _max_seconds(self, ctx: RowContext) -> int:
        top = _int(ctx.attr("MaxCookTime"))
        return top if top is not None and top > 0 else 86400

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the oven's longest cook time and power range."""
        out: dict[str, Any] = _json_copy(schema)
        out["properties"]["minutes"]["maximum"] = self._max_seconds(ctx) / 60
        if ctx.has_feature("PowerAsNumber"):
            low, high = self._limits(ctx)
            out["properties"]["power"]["minimum"] = low
            out["properties"]["power"]["maximum"] = high
            out["properties"]["power"]["description"] = f"Power setting, {low}-{high}."
        else:
            out["properties"].pop("power", None)
        return out

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return SetCookingParameters that starts cooking."""
        minutes = cv.finite(params["minutes"], "minutes")
        seconds = round(minutes * 60)
        if not 1 <= seconds <= self._max_seconds(ctx):
            raise InvalidParamsError(
                f"minutes must be between 1/60 and {self._max_seconds(ctx) / 60:g}",
                {"field": "minutes"},
            )
        payload: dict[str, Any] = {"cookTime": seconds, "startAfterSetting": True}
        if "power" in params and ctx.has_feature("PowerAsNumber"):
            low, high = self._limits(ctx)
            power = cv.finite(params["power"], "power")
            if not low <= power <= high:
                raise InvalidParamsError(
                    f"power must be between {low} and {high}", {"field": "power"}
                )
            payload["powerSetting"] = round(power)
        return [ctx.command("SetCookingParameters", payload)]


# --- state converters --------------------------------------------------------------------


def _state_fan_mode(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return next((name for name, n in FAN_MODES.items() if n == v), None)


def _state_plain_percent(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return v if v is not None and 0 <= v <= 100 else None


def _state_fan_step(values: list[Any], unit: str) -> Any:
    step, top = _int(values[0]), _int(values[1]) if len(values) > 1 else None
    return step if step is not None and 0 <= step <= (top if top is not None else 100) else None


def _state_milli(values: list[Any], unit: str) -> Any:
    """Return mW / mV / mA as W / V / A, to 0.01."""
    v = values[0]
    if not isinstance(v, int | float) or isinstance(v, bool):
        return None
    return round(v / 1000, 2)


def _energy_mwh(value: Any) -> int | None:
    if isinstance(value, Mapping):
        return _int(value.get("0", value.get("energy")))
    return None


def _state_energy_kwh(values: list[Any], unit: str) -> Any:
    """Return an EnergyMeasurementStruct's energy (mWh) as kWh, to 0.001."""
    mwh = _energy_mwh(values[0])
    return None if mwh is None else round(mwh / 1_000_000, 3)


def _state_battery(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # BatPercentRemaining counts half percent (0-200)
    return None if v is None or not 0 <= v <= 200 else round(v / 2, 1)


_CHARGE_LEVEL = {0: "ok", 1: "warning", 2: "critical"}


_state_charge_level = _named(_CHARGE_LEVEL)


def _state_lux(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # MeasuredValue = 10000 x log10(lux) + 1; 0 = too dark to measure
    if v is None or not 0 <= v <= 0xFFFE:
        return None
    return 0 if v == 0 else round(10 ** ((v - 1) / 10000), 1)


def _state_tenths(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # 0.1 kPa (= hPa x 1) or 0.1 m³/h
    return None if v is None else round(v / 10, 1)


def _state_hpa(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # PressureMeasurement.MeasuredValue: 0.1 kPa = 1 hPa
    return v


def _state_detected(values: list[Any], unit: str) -> Any:
    return values[0] if isinstance(values[0], bool) else None


_AIR_QUALITY = {
    0: "unknown",
    1: "good",
    2: "fair",
    3: "moderate",
    4: "poor",
    5: "very_poor",
    6: "extremely_poor",
}


_state_air_quality = _named(_AIR_QUALITY)


# ConcentrationMeasurement MeasurementUnitEnum (spec 2.10.5.3).
_CONCENTRATION_UNITS = {
    0: "ppm",
    1: "ppb",
    2: "ppt",
    3: "mg/m³",
    4: "µg/m³",
    5: "ng/m³",
    6: "particles/m³",
    7: "Bq/m³",
}


def _state_concentration(values: list[Any], unit: str) -> Any:
    value, measured_unit = values[0], _int(values[1]) if len(values) > 1 else None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return {
        "value": round(float(value), 2),
        "unit": _CONCENTRATION_UNITS.get(
            measured_unit if measured_unit is not None else -1, "unknown"
        ),
    }


_LEVELS = {0: "unknown", 1: "low", 2: "medium", 3: "high", 4: "critical"}


_state_level_value = _named(_LEVELS)


_VALVE = {0: "closed", 1: "open", 2: "moving"}


_state_valve = _named(_VALVE)


def _state_minutes(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # seconds
    return None if v is None else round(v / 60, 1)


# OperationalStateEnum (spec 1.14.4.1) and RVC's additions (7.4.4.1).
_OP_STATES = {
    0: "stopped",
    1: "running",
    2: "paused",
    3: "error",
    64: "seeking_charger",
    65: "charging",
    66: "docked",
}
_OP_ERRORS = {
    0: None,
    1: "unable_to_start_or_resume",
    2: "unable_to_complete_operation",
    3: "command_invalid_in_state",
    64: "failed_to_find_charging_dock",
    65: "stuck",
    66: "dust_bin_missing",
    67: "dust_bin_full",
    68: "water_tank_empty",
    69: "water_tank_missing",
    70: "water_tank_lid_open",
    71: "mop_cleaning_pad_missing",
}


def _state_operational(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else _OP_STATES.get(v, f"state_{v}")


def _state_operational_error(values: list[Any], unit: str) -> Any:
    raw = values[0]
    if not isinstance(raw, Mapping):
        return None
    v = _int(raw.get("0", raw.get("errorStateID")))
    return None if v is None else _OP_ERRORS.get(v, f"error_{v}")


def _state_current_mode(values: list[Any], unit: str) -> Any:
    current = _int(values[0])
    for label, mode, _tags in supported_modes(values[1] if len(values) > 1 else None):
        if mode == current:
            return label
    return None


def _state_temperature_level(values: list[Any], unit: str) -> Any:
    """Return the selected level's name (values: SelectedTemperatureLevel, the levels)."""
    selected = _int(values[0])
    levels = temperature_levels(values[1] if len(values) > 1 else None)
    return levels[selected] if selected is not None and 0 <= selected < len(levels) else None


def _state_pump_mode(values: list[Any], unit: str) -> Any:
    """Return an OperationMode / EffectiveOperationMode by name."""
    mode = _int(values[0])
    return next((name for name, n in PUMP_MODES.items() if n == mode), None)


def _state_plain_int(values: list[Any], unit: str) -> Any:
    """Return a whole number as reported (None when the device reports none)."""
    return _int(values[0])


def _state_pump_running(values: list[Any], unit: str) -> Any:
    """Return whether PumpStatus says the pump is running (bit 5, Running)."""
    status = _int(values[0])
    return None if status is None else bool(status & 0x20)


def _state_chime_sound(values: list[Any], unit: str) -> Any:
    """Return the selected chime sound's name (values: SelectedChime, InstalledChimeSounds)."""
    selected = _int(values[0])
    sounds = dict(chime_sounds(values[1] if len(values) > 1 else None))
    return sounds.get(selected) if selected is not None else None


def _state_chime_sounds(values: list[Any], unit: str) -> Any:
    """Return the names of the chime's installed sounds."""
    return [name for _id, name in chime_sounds(values[0])] or None


def _state_selected_areas(values: list[Any], unit: str) -> Any:
    selected = values[0]
    if not isinstance(selected, list):
        return None
    names = dict(supported_areas(values[1] if len(values) > 1 else None))
    return [names.get(a, f"area {a}") for a in selected if isinstance(a, int)]


def _state_current_area(values: list[Any], unit: str) -> Any:
    current = _int(values[0])
    if current is None:
        return None
    return dict(supported_areas(values[1] if len(values) > 1 else None)).get(current)


_EVSE_STATES = {
    0: "not_plugged_in",
    1: "plugged_in_no_demand",
    2: "plugged_in_demand",
    3: "charging",
    4: "discharging",
    5: "session_ending",
    6: "fault",
}
_EVSE_SUPPLY = {
    0: "disabled",
    1: "charging_enabled",
    2: "discharging_enabled",
    3: "disabled_error",
    4: "disabled_diagnostics",
    5: "enabled",
}


_state_evse = _named(_EVSE_STATES)


_state_evse_supply = _named(_EVSE_SUPPLY)


def _state_milli_kwh(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # mWh
    return None if v is None else round(v / 1_000_000, 3)


def _state_boost(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else v == 1


_FILTER_CHANGE = {0: "ok", 1: "warning", 2: "critical"}


_state_filter_change = _named(_FILTER_CHANGE)


# ClosureControl MainStateEnum and CurrentPositionEnum (Matter 1.5, 5.4).
_CLOSURE_MAIN = {
    0: "stopped",
    1: "moving",
    2: "waiting_for_motion",
    3: "error",
    4: "calibrating",
    5: "protected",
    6: "disengaged",
    7: "setup_required",
}
_CLOSURE_POSITION = {
    0: "closed",
    1: "open",
    2: "partially_open",
    3: "open_for_pedestrian",
    4: "open_for_ventilation",
    5: "open_at_signature",
}


_state_closure_main = _named(_CLOSURE_MAIN)


def _state_closure_position(values: list[Any], unit: str) -> Any:
    raw = values[0]
    if not isinstance(raw, Mapping):
        return None
    v = _int(raw.get("0", raw.get("position")))
    return None if v is None else _CLOSURE_POSITION.get(v, "unknown")


# WindowCovering TypeEnum (spec 5.3.5.2): what kind of covering it is.
_COVERING_TYPES = {
    0: "roller_shade",
    1: "roller_shade",
    2: "exterior_roller_shade",
    3: "exterior_roller_shade",
    4: "drapery",
    5: "awning",
    6: "shutter",
    7: "tilt_blind",
    8: "tilt_blind",
    9: "projector_screen",
}


_state_covering_type = _named(_COVERING_TYPES)


# --- closure panels (ClosureDimension, Matter 1.5) ---------------------------------------
# A dimension's position counts 100ths of a percent; in most products 0.00 % is fully
# open and 100.00 % fully closed (spec 5.5.4, Positioning), as a WindowCovering counts.


class DimensionPercent(Converter):
    """Percent open → SetTarget with the position in 100ths of closed."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the SetTarget command."""
        return [ctx.command("SetTarget", {"position": _percent100ths_closed(params)})]


def _dimension_field(values: list[Any], tag: str, name: str) -> Any:
    """Return one field of a DimensionStateStruct (numeric tags from the controller)."""
    raw = values[0]
    if not isinstance(raw, Mapping):
        return None
    return raw.get(tag, raw.get(name))


def _state_dimension_open(values: list[Any], unit: str) -> Any:
    v = _int(_dimension_field(values, "0", "position"))
    return None if v is None else round(100 - v / 100, 2)


def _state_dimension_latched(values: list[Any], unit: str) -> Any:
    v = _dimension_field(values, "1", "latch")
    return v if isinstance(v, bool) else None


def _state_dimension_moving(values: list[Any], unit: str) -> Any:
    """Return whether the target differs from where the panel is (values: current, target)."""
    current = _int(_dimension_field(values, "0", "position"))
    target = _int(_dimension_field(values[1:], "0", "position")) if len(values) > 1 else None
    return None if current is None or target is None else current != target


KIND_CONVERTERS: dict[str, Converter] = {
    "fan_mode": FanMode(),
    "fan_percent": FanPercent(),
    "fan_speed": FanSpeed(),
    "mode_by_name": ModeByName(),
    "rvc_start": RvcRunTagged(RVC_CLEANING),
    "rvc_idle": RvcRunTagged(RVC_IDLE),
    "clean_areas": CleanAreas(),
    "valve_open": ValveOpen(),
    "evse_enable_charging": EvseEnableCharging(),
    "water_heater_boost": WaterHeaterBoost(),
    "cabinet_temperature": CabinetTemperature(),
    "temperature_level": TemperatureLevel(),
    "pump_mode": PumpMode(),
    "pump_setpoint": PumpSetpoint(),
    "microwave_cook": MicrowaveCook(),
    "dimension_percent": DimensionPercent(),
}

KIND_STATE_CONVERTERS: dict[str, StateConverter] = {
    "fan_mode": _state_fan_mode,
    "plain_percent": _state_plain_percent,
    "fan_step": _state_fan_step,
    "milli": _state_milli,
    "energy_kwh": _state_energy_kwh,
    "battery_percent": _state_battery,
    "charge_level": _state_charge_level,
    "lux": _state_lux,
    "tenths": _state_tenths,
    "hpa": _state_hpa,
    "detected": _state_detected,
    "air_quality": _state_air_quality,
    "concentration": _state_concentration,
    "level_value": _state_level_value,
    "valve_state": _state_valve,
    "minutes": _state_minutes,
    "operational_state": _state_operational,
    "operational_error": _state_operational_error,
    "current_mode": _state_current_mode,
    "temperature_level": _state_temperature_level,
    "chime_sound": _state_chime_sound,
    "pump_mode": _state_pump_mode,
    "pump_setpoint": _state_pump_setpoint,
    "pump_running": _state_pump_running,
    "plain_int": _state_plain_int,
    "chime_sounds": _state_chime_sounds,
    "selected_areas": _state_selected_areas,
    "current_area": _state_current_area,
    "evse_state": _state_evse,
    "evse_supply": _state_evse_supply,
    "milli_kwh": _state_milli_kwh,
    "boost": _state_boost,
    "filter_change": _state_filter_change,
    "closure_main_state": _state_closure_main,
    "closure_position": _state_closure_position,
    "covering_type": _state_covering_type,
    "dimension_open_percent": _state_dimension_open,
    "dimension_latched": _state_dimension_latched,
    "dimension_moving": _state_dimension_moving,
}

CONVERTERS: dict[str, Converter] = {**actions.CONVERTERS, **KIND_CONVERTERS}
STATE_CONVERTERS: dict[str, StateConverter] = {**actions.STATE_CONVERTERS, **KIND_STATE_CONVERTERS}
