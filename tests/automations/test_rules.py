"""Rules as data: the schema's refusals, and time/sun trigger instants (DST, time zones).

Expected instants are written out in UTC from the zone's published rules (Europe/Berlin:
CET +1, CEST +2 from 2026-03-29 01:00 UTC to 2026-10-25 01:00 UTC) and, for the sun,
from published Berlin tables (21 June 2026: sunrise 04:43, sunset 21:33 CEST).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from bridge.automations.rules import Rule, in_window, next_time, sun_event
from bridge.errors import InvalidParamsError

BERLIN = "Europe/Berlin"


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()  # type: ignore[misc]


def rule(**over: Any) -> dict[str, Any]:
    doc = {
        "id": "r1",
        "trigger": {"type": "device_event", "device_id": "2-1", "event": "switch.initial_press"},
        "actions": [{"type": "call", "tool": "matter:x", "params": {}}],
    }
    doc.update(over)
    return doc


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        (rule(id="Bad Id"), "id"),
        (rule(actions=[]), "actions"),
        (rule(trigger={"type": "time", "at": "25:00", "timezone": BERLIN}), "trigger"),
        (rule(trigger={"type": "device_event", "device_id": "x", "event": "e"}), "trigger"),
        (
            rule(actions=[{"type": "notify", "url": "file:///etc/passwd", "message": "m"}]),
            "actions/0",
        ),
        (rule(extra=1), "(rule)"),
        ("not a rule", "(rule)"),
    ],
)
def test_the_schema_refuses_with_the_place(doc: Any, where: str) -> None:
    with pytest.raises(InvalidParamsError) as err:
        Rule.from_json(doc)
    assert err.value.details["path"] == where


def test_an_unknown_time_zone_is_refused() -> None:
    with pytest.raises(InvalidParamsError, match="unknown time zone 'Mars/Olympus'"):
        Rule.from_json(rule(trigger={"type": "time", "at": "07:00", "timezone": "Mars/Olympus"}))


@pytest.mark.parametrize(
    ("at", "after", "expected"),
    [
        # An ordinary day before the change: 07:30 CET.
        ("07:30", utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 5, 30)),
        # Spring forward: 07:30 CEST, one hour earlier in UTC than the day before.
        ("07:30", utc(2026, 3, 29, 0, 59, 50), utc(2026, 3, 29, 5, 30)),
        # 02:30 does not exist on 29 March: it fires when the gap ends, 03:00 CEST.
        ("02:30", utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 1, 0)),
        # Fall back: 02:30 happens twice on 25 October; it fires once, at the first (CEST).
        ("02:30", utc(2026, 10, 24, 12, 0), utc(2026, 10, 25, 0, 30)),
        ("02:30", utc(2026, 10, 25, 0, 40), utc(2026, 10, 26, 1, 30)),
    ],
)
def test_time_of_day_in_the_rule_zone_across_dst(at: str, after: float, expected: float) -> None:
    assert next_time({"type": "time", "at": at, "timezone": BERLIN}, after) == expected


def test_days_of_the_week() -> None:
    # 2026-11-26 is a Thursday: a Monday-only rule fires on 30 November, 08:00 CET.
    trigger = {"type": "time", "at": "08:00", "timezone": BERLIN, "days": ["mon"]}
    assert next_time(trigger, utc(2026, 11, 26, 9, 0)) == utc(2026, 11, 30, 7, 0)


def test_sunrise_and_sunset_in_berlin_within_two_minutes() -> None:
    rise = sun_event(date(2026, 6, 21), "sunrise", 52.52, 13.405)
    sets = sun_event(date(2026, 6, 21), "sunset", 52.52, 13.405)
    assert rise is not None
    assert sets is not None
    assert abs(rise - utc(2026, 6, 21, 2, 43)) < 120
    assert abs(sets - utc(2026, 6, 21, 19, 33)) < 120
    # Polar day in Tromsø: no sunset.
    assert sun_event(date(2026, 6, 21), "sunset", 69.65, 18.96) is None


def test_sun_trigger_offset() -> None:
    trigger = {
        "type": "sun",
        "event": "sunset",
        "offset_min": -30,
        "latitude": 52.52,
        "longitude": 13.405,
        "timezone": BERLIN,
    }
    at = next_time(trigger, utc(2026, 6, 21, 12, 0))
    assert at is not None
    assert abs(at - utc(2026, 6, 21, 19, 3)) < 120


def test_time_window_across_midnight() -> None:
    window = {"type": "time_window", "after": "22:00", "before": "06:00", "timezone": BERLIN}
    assert in_window(window, utc(2026, 1, 10, 22, 30))  # 23:30 CET
    assert in_window(window, utc(2026, 1, 10, 4, 0))  # 05:00 CET
    assert not in_window(window, utc(2026, 1, 10, 5, 0))  # 06:00 CET
