"""Row converters: validated tool parameters in human units → exact ``MatterAction``s.

A cluster-map row names one converter (``convert: level_percent``). A converter may refine
the row's parameter schema for a device (limits, allowed modes), add facts for the
description (``{kelvin_range}``) and turns parameters into the commands or attribute
writes to send. State converters turn attribute values back into human units for the
state tool and ``core:query_sensor``. All the arithmetic lives in ``conversions``.

One module because every converter shares the row and value helpers; each is a short
function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bridge.errors import InvalidParamsError
from bridge.matter.home.devices import Device
from bridge.matter.spec.catalogue import ClusterInfo
from bridge.matter.spec.models import ActionKind, MatterAction
from bridge.matter.tools import conversions as cv


def _json_copy(value: Any) -> Any:
    """Copy a JSON-shaped value (a map row's schema: dicts, lists, scalars).

    A tenth of ``copy.deepcopy``'s cost: no memo, no dispatch on every scalar.
    """
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


class Row(Protocol):
    """What a converter reads of a cluster-map row (``cluster_maps.MapRow`` is one)."""

    @property
    def suffix(self) -> str:
        """Return the tool-name suffix the row makes."""

    @property
    def command(self) -> str | None:
        """Return the Matter command the row sends, if any."""

    @property
    def write(self) -> str | None:
        """Return the attribute the row writes, if any."""

    @property
    def payload(self) -> Mapping[str, Any]:
        """Return the row's literal payload."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RowContext:
    """A row applied to one device's cluster, with the temperature unit in use."""

    device: Device
    row: Row
    cluster: ClusterInfo
    unit: str = "C"

    def attr(self, name: str) -> Any:
        """Return the device's value of a named attribute of this cluster (``None`` if unknown)."""
        return self.device.attr(self.cluster.id, self.cluster.attributes[name])

    def has_feature(self, name: str) -> bool:
        """Return whether the cluster's FeatureMap has the named feature."""
        return bool(self.device.features(self.cluster.id) & self.cluster.features[name])

    def command(self, name: str, payload: Mapping[str, Any]) -> MatterAction:
        """Return a command action on this device's endpoint."""
        info = self.cluster.commands[name]
        return MatterAction(
            kind=ActionKind.COMMAND,
            node_id=self.device.node_id,
            endpoint_id=self.device.endpoint_id,
            cluster=self.cluster.name,
            cluster_id=self.cluster.id,
            name=name,
            payload=dict(payload),
            timed=info.timed,
        )

    def write(self, name: str, value: Any) -> MatterAction:
        """Return an attribute-write action on this device's endpoint."""
        return MatterAction(
            kind=ActionKind.WRITE,
            node_id=self.device.node_id,
            endpoint_id=self.device.endpoint_id,
            cluster=self.cluster.name,
            cluster_id=self.cluster.id,
            name=name,
            value=value,
            attribute_ids=(self.cluster.attributes[name],),
        )


class Converter:
    """Default behaviour: send the row's command (or write) with its literal payload."""

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the parameter schema for this device (the row's by default)."""
        return schema

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return extra placeholders for the description template."""
        return {}

    def targets(self, ctx: RowContext) -> list[str]:
        """Return the command or attribute names this row may send for the device."""
        return [ctx.row.command or ctx.row.write or ""]

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the row makes sense for this device beyond its declared needs."""
        return True

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the actions for validated ``params``."""
        row = ctx.row
        if row.command is not None:
            return [ctx.command(row.command, row.payload)]
        assert row.write is not None  # noqa: S101 - the schema requires command or write
        return [ctx.write(row.write, row.payload.get("value"))]


def _transition(params: Mapping[str, Any], nullable: bool) -> Any:
    tenths = cv.seconds_to_tenths(params.get("transition_seconds"))
    if tenths is None:
        return None if nullable else 0
    return tenths


class LevelPercent(Converter):
    """Brightness percent → MoveToLevelWithOnOff level within MinLevel/MaxLevel."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the level command."""
        level = cv.percent_to_level(
            cv.finite(params["percent"], "percent"), ctx.attr("MinLevel"), ctx.attr("MaxLevel")
        )
        payload = {
            "level": level,
            "transitionTime": _transition(params, nullable=True),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "MoveToLevelWithOnOff", payload)]


def _color_rgb(params: Mapping[str, Any]) -> cv.HueSat:
    if "color" in params:
        return cv.rgb_to_huesat(cv.parse_color(str(params["color"])))
    if "hue" in params:
        return cv.huesat(params["hue"], params.get("saturation", 100))
    raise InvalidParamsError("give either 'color' (a name or hex) or 'hue' (0-360 degrees)")


class ColorHueSat(Converter):
    """Colour → MoveToHueAndSaturation (hue 0-254, saturation 0-254)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the hue/saturation command."""
        hs = _color_rgb(params)
        payload = {
            "hue": cv.matter_hue(hs.hue),
            "saturation": cv.matter_saturation(hs.saturation),
            "transitionTime": _transition(params, nullable=False),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "MoveToHueAndSaturation", payload)]


class ColorEnhancedHueSat(Converter):
    """Colour → EnhancedMoveToHueAndSaturation (enhanced hue 0-65535)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the enhanced hue/saturation command."""
        hs = _color_rgb(params)
        payload = {
            "enhancedHue": cv.matter_enhanced_hue(hs.hue),
            "saturation": cv.matter_saturation(hs.saturation),
            "transitionTime": _transition(params, nullable=False),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "EnhancedMoveToHueAndSaturation", payload)]


class ColorXY(Converter):
    """Colour → MoveToColor (CIE xy scaled to 0-65279)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the xy command."""
        hs = _color_rgb(params)
        x, y = cv.rgb_to_xy(
            cv.huesat_to_rgb(hs) if "color" not in params else cv.parse_color(str(params["color"]))
        )
        payload = {
            "colorX": x,
            "colorY": y,
            "transitionTime": _transition(params, nullable=False),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "MoveToColor", payload)]


def _kelvin_range(ctx: RowContext) -> tuple[int, int]:
    lo_m = ctx.attr("ColorTempPhysicalMinMireds")
    hi_m = ctx.attr("ColorTempPhysicalMaxMireds")
    lo_m = lo_m if isinstance(lo_m, int) and lo_m > 0 else 153
    hi_m = hi_m if isinstance(hi_m, int) and hi_m >= lo_m else 500
    return round(1_000_000 / hi_m), round(1_000_000 / lo_m)


class ColorTemperature(Converter):
    """Kelvin → MoveToColorTemperature mireds within the physical limits."""

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the device's kelvin range."""
        out: dict[str, Any] = _json_copy(schema)
        lo, hi = _kelvin_range(ctx)
        prop = out["properties"]["kelvin"]
        prop["description"] = f"Colour temperature in kelvin, {lo}-{hi} K on this light."
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{kelvin_range}``."""
        lo, hi = _kelvin_range(ctx)
        return {"kelvin_range": f"{lo}-{hi} K"}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the colour-temperature command."""
        mireds = cv.kelvin_to_mireds(
            cv.finite(params["kelvin"], "kelvin"),
            ctx.attr("ColorTempPhysicalMinMireds"),
            ctx.attr("ColorTempPhysicalMaxMireds"),
        )
        payload = {
            "colorTemperatureMireds": mireds,
            "transitionTime": _transition(params, nullable=False),
            **ctx.row.payload,
        }
        return [ctx.command(ctx.row.command or "MoveToColorTemperature", payload)]


# --- thermostat ------------------------------------------------------------------------


def _unit_name(unit: str) -> str:
    return "fahrenheit" if unit.upper() == "F" else "celsius"


def _unit_symbol(unit: str) -> str:
    return "°F" if unit.upper() == "F" else "°C"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Thermo:
    heat: bool
    cool: bool
    auto: bool
    heat_limits: cv.SetpointLimits
    cool_limits: cv.SetpointLimits
    deadband: int


def _thermo(ctx: RowContext) -> _Thermo:
    heat = ctx.has_feature("Heating")
    cool = ctx.has_feature("Cooling")
    if not heat and not cool:
        heat = True  # FeatureMap missing: the cluster's mandatory heating behaviour
    return _Thermo(
        heat=heat,
        cool=cool,
        auto=ctx.has_feature("AutoMode"),
        heat_limits=cv.setpoint_limits(
            ctx.attr("AbsMinHeatSetpointLimit"),
            ctx.attr("AbsMaxHeatSetpointLimit"),
            ctx.attr("MinHeatSetpointLimit"),
            ctx.attr("MaxHeatSetpointLimit"),
            cv.DEFAULT_ABS_HEAT,
        ),
        cool_limits=cv.setpoint_limits(
            ctx.attr("AbsMinCoolSetpointLimit"),
            ctx.attr("AbsMaxCoolSetpointLimit"),
            ctx.attr("MinCoolSetpointLimit"),
            ctx.attr("MaxCoolSetpointLimit"),
            cv.DEFAULT_ABS_COOL,
        ),
        deadband=cv.deadband_centi(ctx.attr("MinSetpointDeadBand")),
    )


def _in_unit(centi: int, unit: str) -> float:
    value = cv.from_centi_celsius(centi, unit)
    assert value is not None  # noqa: S101 - centi is an int
    return value


class ThermostatSetpoint(Converter):
    """Target temperature → the occupied heating / cooling setpoint(s) for the system mode."""

    def targets(self, ctx: RowContext) -> list[str]:
        """Return the setpoint attributes this device may get."""
        t = _thermo(ctx)
        return (["OccupiedHeatingSetpoint"] if t.heat else []) + (
            ["OccupiedCoolingSetpoint"] if t.cool else []
        )

    def applies(self, ctx: RowContext) -> bool:
        """Return whether the device exposes a setpoint matching its features."""
        t = _thermo(ctx)
        return (t.heat and ctx.device.has_attr(ctx.cluster.id, 18)) or (
            t.cool and ctx.device.has_attr(ctx.cluster.id, 17)
        )

    def _range(self, ctx: RowContext) -> tuple[int, int]:
        t = _thermo(ctx)
        limits = [lim for on, lim in ((t.heat, t.heat_limits), (t.cool, t.cool_limits)) if on]
        return min(lim.low for lim in limits), max(lim.high for lim in limits)

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the unit's parameter name and the device's limits."""
        out: dict[str, Any] = _json_copy(schema)
        lo, hi = self._range(ctx)
        prop = out["properties"].pop("temperature")
        name = _unit_name(ctx.unit)
        prop["minimum"] = _in_unit(lo, ctx.unit)
        prop["maximum"] = _in_unit(hi, ctx.unit)
        prop["description"] = (
            f"Target temperature in {_unit_symbol(ctx.unit)} "
            f"({prop['minimum']:g}-{prop['maximum']:g})."
        )
        out["properties"] = {name: prop, **out["properties"]}
        out["required"] = [name if r == "temperature" else r for r in out.get("required", [])]
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{range}`` and ``{unit}``."""
        lo, hi = self._range(ctx)
        return {
            "range": f"{_in_unit(lo, ctx.unit):g}-{_in_unit(hi, ctx.unit):g} "
            f"{_unit_symbol(ctx.unit)}",
            "unit": _unit_symbol(ctx.unit),
        }

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the setpoint write(s), clamped to the limits and deadband."""
        t = _thermo(ctx)
        name = _unit_name(ctx.unit)
        centi = round(cv.to_celsius(cv.finite(params[name], name), ctx.unit) * 100)
        mode = ctx.attr("SystemMode")
        heating_now, cooling_now = (
            ctx.attr("OccupiedHeatingSetpoint"),
            ctx.attr("OccupiedCoolingSetpoint"),
        )
        if t.heat and t.cool and mode == cv.SYSTEM_MODES["auto"]:
            heat = cv.clamp_setpoint(centi - t.deadband // 2, t.heat_limits)
            cool = cv.clamp_setpoint(centi + t.deadband - t.deadband // 2, t.cool_limits)
            if cool - heat < t.deadband:
                cool = cv.clamp_setpoint(heat + t.deadband, t.cool_limits)
                heat = min(heat, cool - t.deadband)
            return [
                ctx.write("OccupiedHeatingSetpoint", heat),
                ctx.write("OccupiedCoolingSetpoint", cool),
            ]
        use_cool = t.cool and (
            not t.heat or mode in (cv.SYSTEM_MODES["cool"], cv.SYSTEM_MODES["precooling"])
        )
        # The person's target wins; the other setpoint moves out of the deadband (written
        # first, so the device never sees the two closer than the deadband).
        if use_cool:
            cool = cv.clamp_setpoint(centi, t.cool_limits)
            if (
                t.heat
                and t.auto
                and isinstance(heating_now, int)
                and heating_now > cool - t.deadband
            ):
                heat = cv.clamp_setpoint(cool - t.deadband, t.heat_limits)
                cool = max(cool, heat + t.deadband)
                return [
                    ctx.write("OccupiedHeatingSetpoint", heat),
                    ctx.write("OccupiedCoolingSetpoint", cool),
                ]
            return [ctx.write("OccupiedCoolingSetpoint", cool)]
        heat = cv.clamp_setpoint(centi, t.heat_limits)
        if t.cool and t.auto and isinstance(cooling_now, int) and cooling_now < heat + t.deadband:
            cool = cv.clamp_setpoint(heat + t.deadband, t.cool_limits)
            heat = min(heat, cool - t.deadband)
            return [
                ctx.write("OccupiedCoolingSetpoint", cool),
                ctx.write("OccupiedHeatingSetpoint", heat),
            ]
        return [ctx.write("OccupiedHeatingSetpoint", heat)]


class ThermostatMode(Converter):
    """Mode name → SystemMode write, among the modes the control sequence allows."""

    def _modes(self, ctx: RowContext) -> list[str]:
        return cv.allowed_modes(ctx.attr("ControlSequenceOfOperation"), ctx.has_feature("AutoMode"))

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the allowed modes as an enum."""
        out: dict[str, Any] = _json_copy(schema)
        out["properties"]["mode"]["enum"] = self._modes(ctx)
        return out

    def facts(self, ctx: RowContext) -> dict[str, str]:
        """Return ``{modes}``."""
        return {"modes": ", ".join(self._modes(ctx))}

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the SystemMode write."""
        mode = str(params["mode"])
        if mode not in self._modes(ctx):
            raise InvalidParamsError(
                f"mode must be one of {', '.join(self._modes(ctx))}", {"mode": mode}
            )
        return [ctx.write("SystemMode", cv.SYSTEM_MODES[mode])]


class ThermostatRaiseLower(Converter):
    """Degrees up/down → SetpointRaiseLower (amount in 0.1 °C steps)."""

    def parameters(self, ctx: RowContext, schema: dict[str, Any]) -> dict[str, Any]:
        """Return the schema with the unit and the command's ±12.7 °C limit."""
        out: dict[str, Any] = _json_copy(schema)
        limit = 22.8 if ctx.unit.upper() == "F" else 12.7
        prop = out["properties"]["degrees"]
        prop["minimum"], prop["maximum"] = -limit, limit
        prop["description"] = (
            f"How many {_unit_symbol(ctx.unit)} to raise (positive) or "
            f"lower (negative) the target temperature."
        )
        return out

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the raise/lower command for the setpoints the device has."""
        t = _thermo(ctx)
        degrees = cv.finite(params["degrees"], "degrees")
        amount = round(cv.delta_to_celsius(degrees, ctx.unit) * 10)
        amount = max(-127, min(127, amount))
        mode = 2 if t.heat and t.cool else (1 if t.cool else 0)
        return [ctx.command("SetpointRaiseLower", {"mode": mode, "amount": amount})]


def _percent100ths_closed(params: Mapping[str, Any]) -> int:
    percent_open = cv.finite(params["percent_open"], "percent_open")
    if not 0 <= percent_open <= 100:
        raise InvalidParamsError(
            f"percent_open must be between 0 and 100, got {percent_open:g}",
            {"field": "percent_open"},
        )
    return round((100 - percent_open) * 100)


class CoverLiftPercent(Converter):
    """Percent open → GoToLiftPercentage (Matter counts 100ths of closed)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the lift command."""
        value = _percent100ths_closed(params)
        return [ctx.command("GoToLiftPercentage", {"liftPercent100thsValue": value})]


class CoverTiltPercent(Converter):
    """Percent open (slats) → GoToTiltPercentage (Matter counts 100ths of closed)."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the tilt command."""
        value = _percent100ths_closed(params)
        return [ctx.command("GoToTiltPercentage", {"tiltPercent100thsValue": value})]


PIN_CODE_RE = re.compile(r"^[0-9]{4,8}$")


class DoorLockPin(Converter):
    """Lock / unlock with an optional PIN, sent as the command's ``PINCode`` bytes."""

    def actions(self, ctx: RowContext, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the lock command, with ``PINCode`` only when a PIN was given."""
        payload = dict(ctx.row.payload)
        if "pin_code" in params:
            pin = params["pin_code"]
            # Never echo the PIN: the message and details name only the parameter.
            if not isinstance(pin, str) or not PIN_CODE_RE.match(pin):
                raise InvalidParamsError(
                    "pin_code must be a string of 4 to 8 digits", {"field": "pin_code"}
                )
            payload["PINCode"] = pin
        assert ctx.row.command is not None  # noqa: S101 - lock rows are commands
        return [ctx.command(ctx.row.command, payload)]


CONVERTERS: dict[str, Converter] = {
    "none": Converter(),
    "level_percent": LevelPercent(),
    "color_hs": ColorHueSat(),
    "color_enhanced_hs": ColorEnhancedHueSat(),
    "color_xy": ColorXY(),
    "color_temperature": ColorTemperature(),
    "thermostat_setpoint": ThermostatSetpoint(),
    "thermostat_mode": ThermostatMode(),
    "thermostat_raise_lower": ThermostatRaiseLower(),
    "cover_lift_percent": CoverLiftPercent(),
    "cover_tilt_percent": CoverTiltPercent(),
    "door_lock_pin": DoorLockPin(),
}


# --- state converters --------------------------------------------------------------------

StateConverter = Callable[[list[Any], str], Any]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _state_bool(values: list[Any], unit: str) -> Any:
    return values[0] if isinstance(values[0], bool) else None


def _state_muted(values: list[Any], unit: str) -> Any:
    return not values[0] if isinstance(values[0], bool) else None  # a speaker's OnOff


def _state_level(values: list[Any], unit: str) -> Any:
    return cv.level_to_percent(
        _int(values[0]),
        _int(values[1]) if len(values) > 1 else None,
        _int(values[2]) if len(values) > 2 else None,
    )


def _state_huesat(values: list[Any], unit: str) -> Any:
    hue, sat = _int(values[0]), _int(values[1])
    if hue is None or sat is None:
        return None
    return {"hue": round(hue * 360 / 254), "saturation": round(sat * 100 / 254)}


def _state_xy(values: list[Any], unit: str) -> Any:
    x, y = _int(values[0]), _int(values[1])
    if x is None or y is None:
        return None
    return {"x": round(x / 65536, 4), "y": round(y / 65536, 4)}


def _state_kelvin(values: list[Any], unit: str) -> Any:
    return cv.mireds_to_kelvin(_int(values[0]))


_COLOR_MODES = {0: "hue_saturation", 1: "xy", 2: "color_temperature"}


def _state_color_mode(values: list[Any], unit: str) -> Any:
    mode = _int(values[0])
    return None if mode is None else _COLOR_MODES.get(mode)


def _state_temperature(values: list[Any], unit: str) -> Any:
    return cv.from_centi_celsius(_int(values[0]), unit)


def _state_system_mode(values: list[Any], unit: str) -> Any:
    return cv.mode_name(_int(values[0]))


def _state_percent100(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else round(v / 100, 2)


def _state_occupancy(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else bool(v & 1)


def _state_contact(values: list[Any], unit: str) -> Any:
    if not isinstance(values[0], bool):
        return None
    return "closed" if values[0] else "open"


_LOCK_STATES = {0: "not_fully_locked", 1: "locked", 2: "unlocked", 3: "unlatched"}


def _state_lock(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else _LOCK_STATES.get(v, "unknown")


def _state_cover_open(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else round(100 - v / 100, 2)


def _state_remaining(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # RemainingTime: tenths of a second left of a transition
    return None if v is None else v > 0


def _state_operational(values: list[Any], unit: str) -> Any:
    v = _int(values[0])  # OperationalStatus: 2 bits each for global, lift, tilt; 0 = stopped
    return None if v is None else v & 0x3F != 0


_ALARM = {0: "normal", 1: "warning", 2: "critical"}


def _state_alarm(values: list[Any], unit: str) -> Any:
    v = _int(values[0])
    return None if v is None else _ALARM.get(v, "unknown")


STATE_CONVERTERS: dict[str, StateConverter] = {
    "bool": _state_bool,
    "muted": _state_muted,
    "level_percent": _state_level,
    "color_huesat": _state_huesat,
    "color_xy": _state_xy,
    "color_temperature_kelvin": _state_kelvin,
    "color_mode": _state_color_mode,
    "temperature": _state_temperature,
    "system_mode": _state_system_mode,
    "percent100": _state_percent100,
    "occupancy": _state_occupancy,
    "contact": _state_contact,
    "lock_state": _state_lock,
    "cover_open_percent": _state_cover_open,
    "alarm": _state_alarm,
    "transition_moving": _state_remaining,
    "cover_moving": _state_operational,
}
