"""Rules as data: the rule JSON Schema, the checked ``Rule`` and the clock arithmetic of triggers.

A rule document (JSON or YAML, from a file, the API or an MCP tool) is checked against
``rule.schema.json`` where it enters; a time zone must be one ``zoneinfo`` knows. Times
of day are wall-clock times in the rule's zone: ``next_time`` steps day by day in that
zone, so a 07:30 rule fires at 07:30 on both sides of a DST change; a time that does not
exist that day (inside a spring-forward gap) fires when the gap ends,
an ambiguous one (fall-back) fires once, at its first occurrence. Sunrise and sunset are
computed from the rule's latitude/longitude with NOAA's solar position formulas (about
a minute of accuracy away from the polar circles; no event on a polar day or night).
A rule may leave out its time zone, and a sun trigger its latitude and longitude: the
home's (``HomePlace``, from the configuration's ``automations`` section) fill them in
when the rule is used, so a rule follows the configuration as it is now.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jsonschema

from bridge.errors import InvalidParamsError

SCHEMA_PATH = Path(__file__).with_name("rule.schema.json")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_RATE_PER_MINUTE = 10
MAX_DAYS_AHEAD = 8  # a weekly rule fires within 8 days; sun rules look this far for an event


@functools.cache
def rule_schema() -> dict[str, Any]:
    """Return the rule JSON Schema."""
    return json.loads(SCHEMA_PATH.read_text())  # type: ignore[no-any-return]


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = rule_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One checked rule (its parts are the schema's plain JSON objects)."""

    id: str
    name: str
    enabled: bool
    trigger: dict[str, Any]
    conditions: tuple[dict[str, Any], ...] = ()
    actions: tuple[dict[str, Any], ...]
    rate_limit_per_minute: int = DEFAULT_RATE_PER_MINUTE
    permissions: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Any) -> Rule:
        """Check ``doc`` against the schema; raise ``InvalidParamsError`` naming the problem."""
        errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.absolute_path) or "(rule)"
            raise InvalidParamsError(
                f"invalid rule at {where}: {err.message[:300]}", {"path": where}
            )
        for part in (doc["trigger"], *doc.get("conditions", ())):
            if "timezone" in part:
                zone(part["timezone"])
        perms = doc.get("permissions")
        return cls(
            id=doc["id"],
            name=doc.get("name", doc["id"]),
            enabled=doc.get("enabled", True),
            trigger=dict(doc["trigger"]),
            conditions=tuple(dict(c) for c in doc.get("conditions", ())),
            actions=tuple(dict(a) for a in doc["actions"]),
            rate_limit_per_minute=doc.get("rate_limit_per_minute", DEFAULT_RATE_PER_MINUTE),
            permissions=tuple(perms) if perms is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        """Return the rule document."""
        doc: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "enabled": self.enabled,
            "trigger": self.trigger,
            "conditions": list(self.conditions),
            "actions": list(self.actions),
            "rate_limit_per_minute": self.rate_limit_per_minute,
        }
        if self.permissions is not None:
            doc["permissions"] = list(self.permissions)
        return doc

    def devices(self) -> list[str]:
        """Return the device ids the rule watches or acts on (by their ``device_id``)."""
        found = [
            self.trigger.get("device_id"),
            *(c.get("device_id") for c in self.conditions),
            *(a.get("params", {}).get("device_id") for a in self.actions),
        ]
        return sorted({d for d in found if isinstance(d, str)})


@dataclass(frozen=True, slots=True, kw_only=True)
class HomePlace:
    """Where the home is: the defaults of rules that leave out their zone or location."""

    latitude: float | None = None
    longitude: float | None = None
    timezone: str | None = None

    def missing(self, part: dict[str, Any]) -> str | None:
        """Return what a trigger or condition lacks that the home does not give, or ``None``."""
        kind = part["type"]
        if (
            kind in ("time", "sun", "time_window")
            and "timezone" not in part
            and self.timezone is None
        ):
            return "timezone (or configure automations.timezone)"
        if (
            kind == "sun"
            and not {"latitude", "longitude"} <= set(part)
            and (self.latitude is None or self.longitude is None)
        ):
            return "latitude and longitude (or configure automations.latitude and .longitude)"
        return None

    def fill(self, part: dict[str, Any]) -> dict[str, Any]:
        """Return ``part`` with the home's zone and location where it gives none.

        A zone nobody gives is UTC; a sun trigger with no location never fires
        (``next_time`` answers ``None``).
        """
        kind = part["type"]
        if kind not in ("time", "sun", "time_window"):
            return part
        out = {"timezone": self.timezone or "UTC", **part}
        if (
            kind == "sun"
            and not {"latitude", "longitude"} <= set(part)
            and self.latitude is not None
            and self.longitude is not None
        ):
            out["latitude"], out["longitude"] = self.latitude, self.longitude
        return out


def zone(name: str) -> ZoneInfo:
    """Return the time zone ``name``; raise ``InvalidParamsError`` for an unknown one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise InvalidParamsError(
            f"unknown time zone '{name[:64]}'", {"timezone": name[:64]}
        ) from err


def _clock(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def _wall(day: date, at: time, tz: ZoneInfo) -> float:
    """Return the instant of wall time ``at`` on ``day`` in ``tz`` (gap: the gap's end)."""
    local = datetime.combine(day, at, tzinfo=tz)  # fold=0: an ambiguous time's first instant
    instant = local.astimezone(UTC)
    if instant.astimezone(tz).replace(tzinfo=None) == local.replace(tzinfo=None):
        return instant.timestamp()
    # Inside a spring-forward gap the wall time does not exist: fire at the first minute
    # whose wall time is past it (the end of the gap), found from the instant before it.
    probe = local.replace(fold=1).astimezone(UTC)
    wanted = local.replace(tzinfo=None)
    for _ in range(24 * 60):
        if probe.astimezone(tz).replace(tzinfo=None) >= wanted:
            break
        probe += timedelta(minutes=1)
    return probe.timestamp()


def next_time(trigger: dict[str, Any], after: float) -> float | None:
    """Return the first instant strictly after ``after`` a time or sun trigger fires at."""
    tz = zone(trigger["timezone"])
    start = datetime.fromtimestamp(after, tz).date() - timedelta(days=1)
    days = trigger.get("days")
    for offset in range(MAX_DAYS_AHEAD + 2):
        day = start + timedelta(days=offset)
        if days and DAYS[day.weekday()] not in days:
            continue
        if trigger["type"] == "time":
            at: float | None = _wall(day, _clock(trigger["at"]), tz)
        elif "latitude" not in trigger or "longitude" not in trigger:
            return None  # a sun trigger with no location, given or configured
        else:
            at = sun_event(day, trigger["event"], trigger["latitude"], trigger["longitude"])
            if at is not None:
                at += 60 * trigger.get("offset_min", 0)
        if at is not None and at > after:
            return at
    return None


def in_window(condition: dict[str, Any], now: float) -> bool:
    """Return whether ``now`` is inside a time-window condition (it may cross midnight)."""
    local = datetime.fromtimestamp(now, zone(condition["timezone"])).time()
    start, end = _clock(condition["after"]), _clock(condition["before"])
    if start <= end:
        return start <= local < end
    return local >= start or local < end


def compare(spec: dict[str, Any], value: Any) -> bool:
    """Return whether ``value`` meets the ``equals`` / ``above`` / ``below`` of ``spec``."""
    if "equals" in spec and value != spec["equals"]:
        return False
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if "above" in spec and not (number and value > spec["above"]):
        return False
    return not ("below" in spec and not (number and value < spec["below"]))


def sun_event(day: date, event: str, latitude: float, longitude: float) -> float | None:
    """Return the UTC instant of sunrise or sunset on ``day`` (None on a polar day/night).

    NOAA's solar calculator (fractional year, equation of time, declination; the sun's
    centre 0.833° below the horizon for refraction and its radius).
    """
    gamma = 2 * math.pi / 365 * (day.timetuple().tm_yday - 1)
    eqtime = 229.18 * (
        0.000075
        + 0.001868 * math.cos(gamma)
        - 0.032077 * math.sin(gamma)
        - 0.014615 * math.cos(2 * gamma)
        - 0.040849 * math.sin(2 * gamma)
    )
    decl = (
        0.006918
        - 0.399912 * math.cos(gamma)
        + 0.070257 * math.sin(gamma)
        - 0.006758 * math.cos(2 * gamma)
        + 0.000907 * math.sin(2 * gamma)
        - 0.002697 * math.cos(3 * gamma)
        + 0.00148 * math.sin(3 * gamma)
    )
    lat = math.radians(latitude)
    cos_ha = math.cos(math.radians(90.833)) / (math.cos(lat) * math.cos(decl)) - math.tan(
        lat
    ) * math.tan(decl)
    if not -1 <= cos_ha <= 1:
        return None
    ha = math.degrees(math.acos(cos_ha))
    sign = 1 if event == "sunrise" else -1
    minutes = 720 - 4 * (longitude + sign * ha) - eqtime
    midnight = datetime.combine(day, time(0), tzinfo=UTC).timestamp()
    return midnight + minutes * 60
